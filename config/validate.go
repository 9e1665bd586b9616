package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/mail"
	"net/textproto"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/robfig/cron/v3"
)

const (
	maxNameLen      = 64
	maxMaxRetries   = 100
	minBodyBytes    = 1024
	minGCInterval   = time.Minute
	minChangePeriod = time.Minute
	tokenChars      = "[A-Za-z0-9_.!~*'()-]"
)

type problems []problem

func (p *problems) addf(path, format string, args ...any) {
	*p = append(*p, problem{Problem: Problem{Path: path, Message: fmt.Sprintf(format, args...)}})
}

// about names the document fields the last problem is about, when they are
// not just its path: the first the document writes gives its line.
func (p problems) about(fields ...string) {
	p[len(p)-1].fields = fields
}

// Validate checks the whole configuration and reports every problem at once
// as Problems, each with the path of the offending field, e.g.
// "repositories[1].name: ...", and without a line (ParseAndValidate adds
// them).
func (c *Config) Validate() error {
	return toError(c.validate())
}

// validate checks the configuration section by section, in the order its
// problems have always been reported in (Validate keeps that order; only
// ParseAndValidate sorts them by line).
func (c *Config) validate() []problem {
	var p problems
	p.service(c)
	p.dumps(c.ResourceSync)
	p.notification(c.Notification)
	p.server(c.Server)
	p.storage(c.Store)
	p.pages(c.ResourceSync)
	p.harvest("defaults", c.Defaults)
	p.backoff("defaults", c.Defaults, c.Resolved(Repository{}))
	p.repositories(c)
	p.export(c.Export)
	p.scheduler(c.Scheduler)
	p.derivable("defaults.derive", c.Defaults.Derive)
	return p
}

// derivable checks that every conversion a derive map asks for exists.
func (p *problems) derivable(at string, derive map[string]string) {
	for _, target := range slices.Sorted(maps.Keys(derive)) {
		if source := derive[target]; !Derivable(target, source) {
			p.addf(at+"."+target, "rsbridge cannot derive %s from %s: it derives jpcoar_2.0 from junii2", target, source)
		}
	}
}

// derive checks a repository's own derive map against its formats.
func (p *problems) derive(at string, r Repository) {
	p.derivable(at+".derive", r.Derive)
	harvested := r.Harvested()
	for _, target := range slices.Sorted(maps.Keys(r.Derive)) {
		source := r.Derive[target]
		switch {
		case !Derivable(target, source):
		case !slices.Contains(harvested, source):
			p.addf(at+".derive."+target, "derives from %s, which is not in metadata_prefixes: add it (the repository must offer it)", source)
		case slices.Contains(harvested, target):
			p.addf(at+".derive."+target, "%s is harvested (metadata_prefixes): remove it there to derive it from %s, or remove derive", target, source)
		}
	}
}

// scheduler checks the scheduler block.
func (p *problems) scheduler(s Scheduler) {
	if s.Concurrency < 1 || s.Concurrency > 256 {
		p.addf("scheduler.concurrency", "must be between 1 and 256 (got %d)", s.Concurrency)
	}
	if s.PerHost < 1 || (s.Concurrency >= 1 && s.PerHost > s.Concurrency) {
		p.addf("scheduler.per_host", "must be between 1 and scheduler.concurrency (%d) (got %d)", s.Concurrency, s.PerHost)
	}
	if s.Jitter < 0 {
		p.addf("scheduler.jitter", "must not be negative (got %s)", s.Jitter)
	}
	for i, g := range s.HostGroups {
		d := hostGroup(g)
		if d == "" || strings.ContainsAny(d, "/:@*?# \t") || strings.Contains(d, "..") {
			p.addf(fmt.Sprintf("scheduler.host_groups[%d]", i), "must be a domain such as repo.nii.ac.jp (its host names and itself count as one upstream host), not a URL or pattern (got %q)", g)
		}
	}
}

// export checks the export block.
func (p *problems) export(e Export) {
	if t := e.Target; t != "" {
		if rest, ok := strings.CutPrefix(t, "s3://"); ok {
			bucket, _, _ := strings.Cut(rest, "/")
			if bucket == "" {
				p.addf("export.target", "names no bucket: write s3://bucket or s3://bucket/prefix (got %q)", t)
			}
			if e.Endpoint != "" {
				p.httpURL("export.endpoint", e.Endpoint)
			}
		} else if strings.Contains(t, "://") {
			p.addf("export.target", "must be a directory or s3://bucket[/prefix] (got %q)", t)
		}
	}
	if !validName(e.Instance) || len(e.Instance) > maxNameLen {
		p.addf("export.instance", "must match [a-z0-9-]+, at most %d characters (got %q)", maxNameLen, e.Instance)
	}
	if e.Interval < time.Second {
		p.addf("export.interval", "must be at least 1s (got %s)", e.Interval)
	}
	if e.Workers < 1 || e.Workers > 256 {
		p.addf("export.workers", "must be between 1 and 256 (got %d)", e.Workers)
	}
	if e.Grace < 0 || e.MaxAge < 0 {
		p.addf("export.grace", "grace and max_age must not be negative")
	}
}

// service checks the settings of the service as a whole: where it listens
// and is reached, its data directory, contact, logging, the admin and debug
// endpoints, robots and the store's GC interval.
func (p *problems) service(c *Config) {
	listenOK := p.listen(c.Listen)
	if listenOK || c.BaseURL != defaultBaseURL(c.Listen) {
		p.publicURL("base_url", c.BaseURL)
	}
	if c.DataDir == "" {
		p.addf("data_dir", "must not be empty")
	}
	if c.Contact != "" && !validContact(c.Contact) {
		p.addf("contact", "must be an email address or an http(s) URL (got %q)", c.Contact)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		p.addf("log_format", "must be text or json (got %q)", c.LogFormat)
	}
	p.admin(c.Admin)
	if c.Debug.Listen != "" {
		p.hostPort("debug.listen", c.Debug.Listen)
	}
	switch c.Server.Robots {
	case RobotsAllRecords, RobotsAll, RobotsNone:
	default:
		p.addf("server.robots", "must be one of %s, %s, %s (got %q)", RobotsAllRecords, RobotsAll, RobotsNone, c.Server.Robots)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p.addf("log_level", "must be one of debug, info, warn, error (got %q)", c.LogLevel)
	}
	if c.Store.GCInterval < minGCInterval {
		p.addf("store.gc_interval", "must be >= %s (got %s)", fmtDuration(minGCInterval), fmtDuration(c.Store.GCInterval))
	}
}

// admin checks the administration API's token and listen address.
func (p *problems) admin(a Admin) {
	switch {
	case a.Token != "" && a.TokenFile != "":
		p.addf("admin.token", "give token or token_file, not both")
	case a.Token != "" && len(a.Token) < minTokenLen:
		p.addf("admin.token", "must be at least %d characters", minTokenLen)
	}
	if a.Listen != "" {
		p.hostPort("admin.listen", a.Listen)
	}
}

// dumps checks the retention and dump settings of the resourcesync section.
func (p *problems) dumps(rs ResourceSync) {
	if rs.Retention != 0 && rs.Retention < rs.ChangeListPeriod {
		p.addf("resourcesync.retention", "must be 0 (keep forever) or at least changelist_period %s (got %s)", fmtDuration(rs.ChangeListPeriod), fmtDuration(rs.Retention))
		p.about("resourcesync.retention", "resourcesync.changelist_period")
	}
	switch rs.DumpSets {
	case DumpAll, DumpAllRecords, DumpNone:
	default:
		p.addf("resourcesync.dump_sets", "must be one of %s, %s, %s (got %q)", DumpAll, DumpAllRecords, DumpNone, rs.DumpSets)
	}
	if rs.DumpPackageBytes < 1<<20 {
		p.addf("resourcesync.dump_package_bytes", "must be >= %d (got %d)", 1<<20, rs.DumpPackageBytes)
	}
	if rs.DumpInterval < time.Minute {
		p.addf("resourcesync.dump_interval", "must be >= 1m (got %s)", fmtDuration(rs.DumpInterval))
	}
	if rs.DumpGrace < 0 {
		p.addf("resourcesync.dump_grace", "must be >= 0 (got %s)", fmtDuration(rs.DumpGrace))
	}
}

// notification checks the notification section (WebSub).
func (p *problems) notification(n Notification) {
	if n.HubURL != "" {
		p.publicURL("notification.hub_url", n.HubURL)
	}
	if n.MaxEntries < 1 || n.MaxEntries > DefaultPageLimit {
		p.addf("notification.max_entries", "must be between 1 and %d (got %d)", DefaultPageLimit, n.MaxEntries)
	}
	if n.Workers < 1 {
		p.addf("notification.workers", "must be >= 1 (got %d)", n.Workers)
	}
	if n.MaxAttempts < 1 {
		p.addf("notification.max_attempts", "must be >= 1 (got %d)", n.MaxAttempts)
	}
	if n.MaxSubscriptions < 1 {
		p.addf("notification.max_subscriptions", "must be >= 1 (got %d)", n.MaxSubscriptions)
	}
	if n.MaxSubscriptionsPerTopic < 1 || n.MaxSubscriptionsPerTopic > n.MaxSubscriptions {
		p.addf("notification.max_subscriptions_per_topic", "must be between 1 and max_subscriptions %d (got %d)", n.MaxSubscriptions, n.MaxSubscriptionsPerTopic)
	}
	if n.Timeout < time.Second {
		p.addf("notification.timeout", "must be >= 1s (got %s)", fmtDuration(n.Timeout))
	}
}

// server checks the server section's bounds (its robots setting is checked
// with the service's).
func (p *problems) server(s Server) {
	if s.HarvestShare < 10 || s.HarvestShare > 100 {
		p.addf("server.harvest_share", "must be a percentage from 10 to 100 (got %d)", s.HarvestShare)
	}
	if s.MaxStreams < 1 {
		p.addf("server.max_streams", "must be >= 1 (got %d)", s.MaxStreams)
	}
	if s.CacheBytes < 0 {
		p.addf("server.cache_bytes", "must be >= 0 (got %d)", s.CacheBytes)
	}
	if s.WriteIdle < time.Second {
		p.addf("server.write_idle", "must be >= 1s (got %s)", fmtDuration(s.WriteIdle))
	}
}

// storage checks the store section's sync interval and free-space floor
// (its GC interval is checked with the service's).
func (p *problems) storage(s Store) {
	if s.SyncInterval < 0 {
		p.addf("store.sync_interval", "must be >= 0 (got %s)", fmtDuration(s.SyncInterval))
	}
	if s.MappedLimit < 0 || s.MappedLimit > 0 && s.MappedLimit < MinMappedLimit {
		p.addf("store.mapped_limit", "must be 0 (the kernel decides) or at least %d bytes (64 MiB) (got %d)", MinMappedLimit, s.MappedLimit)
	}
	if s.MinFree < 0 || s.MinFree > 0 && s.MinFree < MinFreeFloor {
		p.addf("store.min_free", "must be 0 (the default: 5 %% of the file system, 256 MiB to 1 GiB) or at least %d bytes (64 MiB: room for a memtable flush and a compaction; less risks SIGBUS on a full disk) (got %d)", MinFreeFloor, s.MinFree)
	}
}

// pages checks the resourcesync section's page limit and change list period.
func (p *problems) pages(rs ResourceSync) {
	if n := rs.PageLimit; n < 1 || n > DefaultPageLimit {
		p.addf("resourcesync.page_limit", "must be between 1 and %d (got %d)", DefaultPageLimit, n)
	}
	if d := rs.ChangeListPeriod; d < minChangePeriod {
		p.addf("resourcesync.changelist_period", "must be >= %s (got %s)", fmtDuration(minChangePeriod), fmtDuration(d))
	}
}

// repositories checks every repository, that their names are unique, and
// each one's backoff settings as resolved against the defaults.
func (p *problems) repositories(c *Config) {
	if len(c.Repositories) == 0 {
		p.addf("repositories", "at least one repository is required")
	}
	names := map[string]int{}
	for i, r := range c.Repositories {
		path := fmt.Sprintf("repositories[%d]", i)
		p.repository(path, r, cmp.Or(c.MinInterval, MinScheduleInterval))
		if r.Name == "" {
			continue
		}
		if j, dup := names[r.Name]; dup {
			p.addf(path+".name", "duplicate of repositories[%d].name %q", j, r.Name)
		} else {
			names[r.Name] = i
		}
		p.backoff(path, r.Harvest, c.Resolved(r))
	}
}

func (p *problems) hostPort(path, s string) {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsFunc(host, unicode.IsSpace) {
		p.addf(path, "must be host:port (got %q)", s)
	}
}

func (p *problems) listen(s string) bool {
	host, port, err := net.SplitHostPort(s)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsFunc(host, unicode.IsSpace) {
		p.addf("listen", "must be host:port (got %q)", s)
		return false
	}
	return true
}

func (p *problems) publicURL(path, s string) {
	if !p.httpURL(path, s) {
		return
	}
	switch {
	case strings.ContainsAny(s, "?#"):
		p.addf(path, "must not have a query or fragment (got %q)", s)
	case strings.HasSuffix(s, "/"):
		p.addf(path, "must not end with \"/\" (got %q)", s)
	}
}

func (p *problems) httpURL(path, s string) bool {
	if s == "" {
		p.addf(path, "must not be empty")
		return false
	}
	if !isHTTPURL(s) {
		p.addf(path, "must be an absolute http or https URL (got %q)", PublicURL(s, defaultSecretParams))
		return false
	}
	return true
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == ""
}

func validContact(s string) bool {
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return false
	}
	if lower := strings.ToLower(s); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return isHTTPURL(s)
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

func (p *problems) repository(at string, r Repository, minInterval time.Duration) {
	switch {
	case r.Name == "":
		p.addf(at+".name", "must not be empty")
	case !validName(r.Name):
		p.addf(at+".name", "must match [a-z0-9-]+ (got %q)", r.Name)
	case len(r.Name) > maxNameLen:
		p.addf(at+".name", "must be at most %d characters (got %d)", maxNameLen, len(r.Name))
	}
	if p.httpURL(at+".base_url", r.BaseURL) && strings.Contains(r.BaseURL, "#") {
		p.addf(at+".base_url", "must not have a fragment (got %q)", PublicURL(r.BaseURL, defaultSecretParams))
	}
	p.derive(at, r)
	if r.MetadataPrefixes != nil && len(r.MetadataPrefixes) == 0 {
		p.addf(at+".metadata_prefixes", "must not be empty (omit the key for the default [%s])", DefaultMetadataPrefix)
	}
	p.list(at+".metadata_prefixes", r.MetadataPrefixes, func(elem, s string) {
		if !validToken(s) {
			p.addf(elem, "must be non-empty and use only %s (got %q)", tokenChars, s)
		}
	})
	p.list(at+".sets", r.Sets, func(elem, s string) {
		for tok := range strings.SplitSeq(s, ":") {
			if !validToken(tok) {
				p.addf(elem, "invalid setSpec %q: must be ':'-separated non-empty tokens of %s", s, tokenChars)
				return
			}
		}
	})
	for i, pat := range r.SetPatterns {
		if _, err := path.Match(pat, ""); err != nil {
			p.addf(fmt.Sprintf("%s.set_patterns[%d]", at, i), "invalid pattern %q: %v", pat, err)
		}
	}
	if r.MaxSets < 0 {
		p.addf(at+".max_sets", "must be >= 0 (got %d)", r.MaxSets)
	}
	if err := parseCron(r.Schedule); err != nil {
		p.addf(at+".schedule", "invalid cron expression %q: %v", r.Schedule, err)
	} else if gap := shortestGap(r.Schedule); gap < minInterval {
		p.addf(at+".schedule", "runs %s apart; harvests must be at least %s apart, to spare the repository (got %q)", fmtDuration(gap), fmtDuration(minInterval), r.Schedule)
	}
	if r.Reconcile != ReconcileOff {
		if err := parseCron(r.Reconcile); err != nil {
			p.addf(at+".reconcile", "invalid cron expression %q (or %q to disable): %v", r.Reconcile, ReconcileOff, err)
		} else if gap := shortestGap(r.Reconcile); gap < minInterval {
			p.addf(at+".reconcile", "runs %s apart; reconciliations must be at least %s apart (got %q)", fmtDuration(gap), fmtDuration(minInterval), r.Reconcile)
		}
	}
	p.harvest(at, r.Harvest)
}

// list runs check on every element of a string list and reports duplicates.
func (p *problems) list(path string, elems []string, check func(elem, s string)) {
	first := map[string]int{}
	for i, s := range elems {
		elem := fmt.Sprintf("%s[%d]", path, i)
		if j, dup := first[s]; dup {
			p.addf(elem, "duplicate of %s[%d] %q", path, j, s)
			continue
		}
		first[s] = i
		check(elem, s)
	}
}

func validName(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-'
	})
}

func validToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("_.!~*'()-", r)
	})
}

// MinScheduleInterval is the least time between two harvests (or two
// reconciliations) a schedule may ask for.
const MinScheduleInterval = time.Minute

// shortestGap is the shortest time between consecutive runs of a valid
// schedule over its next 100 runs ("@every 0s" and "@every -1h" run every
// second: cron rounds them up).
func shortestGap(spec string) time.Duration {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return 0
	}
	t := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gap := time.Duration(1<<63 - 1)
	for range 100 {
		next := s.Next(t)
		if next.IsZero() {
			break
		}
		gap = min(gap, next.Sub(t))
		t = next
	}
	return gap
}

// parseCron is cron.ParseStandard made safe: robfig/cron v3.0.1 panics on
// a time zone prefix that is not followed by a space.
func parseCron(spec string) (err error) {
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.Contains(spec, " ") {
		return errors.New("missing schedule after the time zone")
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("malformed expression")
		}
	}()
	_, err = cron.ParseStandard(spec)
	return err
}

func (p *problems) harvest(path string, h Harvest) {
	positive := func(key string, d *time.Duration) {
		if d != nil && *d <= 0 {
			p.addf(path+"."+key, "must be > 0 (got %s)", fmtDuration(*d))
		}
	}
	positive("timeout", h.Timeout)
	positive("connect_timeout", h.ConnectTimeout)
	if h.Delay != nil && *h.Delay < 0 {
		p.addf(path+".delay", "must be >= 0 (got %s)", fmtDuration(*h.Delay))
	}
	if h.MaxRetries != nil && (*h.MaxRetries < 0 || *h.MaxRetries > maxMaxRetries) {
		p.addf(path+".max_retries", "must be between 0 and %d (got %d)", maxMaxRetries, *h.MaxRetries)
	}
	positive("backoff_base", h.BackoffBase)
	positive("backoff_max", h.BackoffMax)
	positive("max_retry_after", h.MaxRetryAfter)
	if h.MaxBodyBytes != nil && *h.MaxBodyBytes < minBodyBytes {
		p.addf(path+".max_body_bytes", "must be >= %d (got %d)", minBodyBytes, *h.MaxBodyBytes)
	}
	if h.MaxRecordBytes != nil && (*h.MaxRecordBytes < minBodyBytes || *h.MaxRecordBytes > 1<<30) {
		p.addf(path+".max_record_bytes", "must be between %d and %d (got %d)", minBodyBytes, 1<<30, *h.MaxRecordBytes)
	}
	if h.MaxEmptyPages != nil && *h.MaxEmptyPages < 1 {
		p.addf(path+".max_empty_pages", "must be >= 1 (got %d)", *h.MaxEmptyPages)
	}
	if ua := h.UserAgent; ua != nil {
		switch {
		case *ua == "":
			p.addf(path+".user_agent", "must not be empty (omit the key for the default)")
		case !validHeaderValue(*ua):
			p.addf(path+".user_agent", "must not contain control characters (got %q)", *ua)
		}
	}
	p.headers(path+".headers", h.Headers)
	p.list(path+".secret_params", h.SecretParams, func(elem, s string) {
		if s == "" || strings.ContainsAny(s, "&=#? ") {
			p.addf(elem, "must be a query parameter name (got %q)", s)
		}
	})
	if r := h.MetadataRights; r != nil && *r != "" && !isAbsoluteURI(*r) {
		p.addf(path+".metadata_rights", "must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got %q)", *r)
	}
}

// isAbsoluteURI reports whether s is an absolute URI (or IRI) as written: a
// scheme, no white space, control characters or characters RFC 3986 and
// RFC 3987 exclude (<>"{}|\^`), well-formed %XX escapes, at most one "#", and
// a host for http and https.
func isAbsoluteURI(s string) bool {
	if strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("<>\"{}|\\^`", r)
	}) || strings.Count(s, "#") > 1 {
		return false
	}
	for rest := s; ; {
		i := strings.IndexByte(rest, '%')
		if i < 0 {
			break
		}
		if len(rest) < i+3 || !isHexDigit(rest[i+1]) || !isHexDigit(rest[i+2]) {
			return false
		}
		rest = rest[i+3:]
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return false
	}
	return (u.Scheme != "http" && u.Scheme != "https") || u.Host != ""
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// backoff checks backoff_max against backoff_base in the resolved settings,
// when h sets either of them, so that a bad pair is reported once, where it
// is configured.
func (p *problems) backoff(path string, h Harvest, s Settings) {
	if h.BackoffBase == nil && h.BackoffMax == nil {
		return
	}
	if s.BackoffBase > 0 && s.BackoffMax > 0 && s.BackoffMax < s.BackoffBase {
		p.addf(path+".backoff_max", "must be >= backoff_base %s (got %s)", fmtDuration(s.BackoffBase), fmtDuration(s.BackoffMax))
		p.about(path+".backoff_max", path+".backoff_base")
	}
}

func (p *problems) headers(path string, h map[string]string) {
	canonical := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if !validHeaderName(name) {
			p.addf(path, "invalid header name %q", name)
			p.about(path + "." + name)
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		if prev, dup := canonical[key]; dup {
			p.addf(path, "%q and %q name the same header", prev, name)
			p.about(path + "." + name)
			continue
		}
		canonical[key] = name
		switch {
		case key == "User-Agent":
			p.addf(path+"."+name, "set user_agent instead")
		case !validHeaderValue(h[name]):
			p.addf(path+"."+name, "value must not contain control characters")
		}
	}
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
	})
}

func validHeaderValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r != '\t' && (r < ' ' || r == 0x7f)
	})
}

// fmtDuration formats d like time.Duration.String without zero trailing
// units: 5m instead of 5m0s, 1h instead of 1h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
