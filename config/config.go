// Package config loads, defaults and validates the rsbridge YAML
// configuration file. See example.yaml for a commented reference of every
// key and its default.
package config

import (
	"fmt"
	"maps"
	"net"
	"net/textproto"
	"os"
	"slices"
	"strings"
	"time"
)

// Built-in defaults. example.yaml documents the same values and a test keeps
// the two in sync.
const (
	DefaultListen           = "127.0.0.1:8080"
	DefaultDataDir          = "./data"
	DefaultLogLevel         = "info"
	DefaultGCInterval       = 10 * time.Minute
	DefaultSyncInterval     = time.Second
	DefaultPageLimit        = 50000 // also the largest: the Sitemap limit, rsync.MaxEntries (a bridge test keeps them equal)
	DefaultChangeListPeriod = 24 * time.Hour
	DefaultExportInstance   = "main"
	DefaultExportInterval   = time.Minute
	DefaultExportWorkers    = 16
	DefaultExportGrace      = 24 * time.Hour
	DefaultExportMaxAge     = time.Minute
	DefaultMetadataPrefix   = "oai_dc"
	DefaultSchedule         = "@every 1h"
	DefaultReconcile        = "@weekly"
	DefaultTimeout          = 120 * time.Second
	DefaultConnectTimeout   = 10 * time.Second
	DefaultDelay            = 1 * time.Second
	DefaultMaxRetries       = 5
	DefaultBackoffBase      = 2 * time.Second
	DefaultBackoffMax       = 5 * time.Minute
	DefaultMaxRetryAfter    = 1 * time.Hour
	DefaultMaxBodyBytes     = 256 << 20
	DefaultMaxRecordBytes   = 16 << 20
	DefaultMaxEmptyPages    = 10
	// MinFreeFloor is the least store.min_free: store.ReserveFloor of the
	// default memtable size (a cmd test keeps them equal).
	MinFreeFloor            = 64 << 20
	DefaultRetention        = 180 * 24 * time.Hour
	DefaultDumpPackageBytes = 100 << 20
	DefaultDumpInterval     = time.Hour
	DefaultDumpGrace        = time.Hour
	DefaultNotifyEntries    = 1000
	DefaultNotifyWorkers    = 16
	// DefaultMaxSubscriptions and DefaultMaxSubscriptionsPerTopic cap the
	// embedded hub's subscriptions.
	DefaultMaxSubscriptions         = 10000
	DefaultMaxSubscriptionsPerTopic = 1000
	DefaultNotifyAttempts           = 12
	DefaultNotifyTimeout            = 30 * time.Second
	DefaultCacheBytes               = 1 << 30
	DefaultMaxStreams               = 16
	DefaultHarvestShare             = 25
	// DefaultConcurrency and DefaultPerHost bound the runs going at once,
	// in all and against one upstream host (scheduler:).
	DefaultConcurrency = 8
	DefaultPerHost     = 2
	DefaultJitter      = time.Hour
	DefaultWriteIdle   = 30 * time.Second
	minTokenLen        = 16
)

// ReconcileOff is the Repository.Reconcile value that disables
// reconciliation.
const ReconcileOff = "off"

// Config is the whole rsbridge configuration file.
type Config struct {
	// MinInterval, when set, replaces MinScheduleInterval as the least time
	// between two runs: the offline demo harvests its own in-process
	// upstream every few seconds, tests faster still. Not a file key.
	MinInterval time.Duration `yaml:"-"`
	// Listen is the host:port the HTTP server binds to.
	Listen string `yaml:"listen"`
	// BaseURL is the public URL prefix used in every ResourceSync <loc>,
	// without a trailing slash. It defaults to "http://" + Listen.
	BaseURL string `yaml:"base_url"`
	// DataDir is the Badger store directory.
	DataDir string `yaml:"data_dir"`
	// Contact is the operator's email address or http(s) URL, advertised
	// in the User-Agent. Empty means none.
	Contact string `yaml:"contact"`
	// LogLevel is one of debug, info, warn, error.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text (key=value lines) or json (one object per line).
	LogFormat    string       `yaml:"log_format"`
	Store        Store        `yaml:"store"`
	ResourceSync ResourceSync `yaml:"resourcesync"`
	Server       Server       `yaml:"server"`
	Notification Notification `yaml:"notification"`
	Admin        Admin        `yaml:"admin"`
	Status       Status       `yaml:"status"`
	Debug        Debug        `yaml:"debug"`
	Export       Export       `yaml:"export"`
	Crosswalk    Crosswalk    `yaml:"crosswalk"`
	Scheduler    Scheduler    `yaml:"scheduler"`
	// Defaults holds harvest settings inherited by every repository
	// unless the repository overrides them.
	Defaults     Harvest      `yaml:"defaults"`
	Repositories []Repository `yaml:"repositories"`
}

// Store configures the Badger store.
type Store struct {
	// SyncWrites makes every commit fsync; nil means false. Use Sync.
	SyncWrites *bool `yaml:"sync_writes"`
	// SyncInterval fsyncs what was committed at most this often when
	// SyncWrites is off (group commit); 0 leaves it to the operating system.
	SyncInterval time.Duration `yaml:"sync_interval"`
	// GCInterval is the value-log garbage collection period.
	GCInterval time.Duration `yaml:"gc_interval"`
	// MinFree is the free disk space (bytes) the data directory keeps: below
	// it harvests stop with a clear error and serving goes on. 0 means 5 % of
	// the file system, at least 256 MiB and at most 1 GiB; any other value
	// must be at least MinFreeFloor.
	MinFree int64 `yaml:"min_free"`
	// MappedLimit bounds the file-backed resident memory of the store's
	// memory-mapped files: above it rsbridge has the kernel page them out
	// (Linux). 0: the kernel decides; else at least MinMappedLimit.
	MappedLimit int64 `yaml:"mapped_limit"`
}

// MinMappedLimit is the least store.mapped_limit: below it the files would
// be paged out every few seconds.
const MinMappedLimit = 64 << 20

// Sync reports whether every commit must be fsynced (default false: group
// commit every SyncInterval).
func (s Store) Sync() bool {
	return s.SyncWrites != nil && *s.SyncWrites
}

// Admin configures the administration API (/admin/): present only when a
// token is set.
type Admin struct {
	// Token is the bearer token clients send (Authorization: Bearer …), at
	// least 16 characters. Prefer TokenFile.
	Token string `yaml:"token"`
	// TokenFile is a file holding the token (surrounding white space is
	// ignored).
	TokenFile string `yaml:"token_file"`
	// Listen serves the admin API on its own address (e.g. 127.0.0.1:8081)
	// instead of the public one.
	Listen string `yaml:"listen"`
}

// Enabled reports whether the admin API is configured.
func (a Admin) Enabled() bool { return a.Token != "" || a.TokenFile != "" }

// Secret returns the token, reading TokenFile when that is how it is given.
func (a Admin) Secret() (string, error) {
	if a.Token != "" {
		return a.Token, nil
	}
	b, err := os.ReadFile(a.TokenFile)
	if err != nil {
		return "", fmt.Errorf("admin.token_file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if len(t) < minTokenLen {
		return "", fmt.Errorf("admin.token_file %s: the token must be at least %d characters", a.TokenFile, minTokenLen)
	}
	return t, nil
}

// Status configures the status page (/ and /status.json).
type Status struct {
	// HideErrors leaves error texts (which may name internal hosts) off the
	// public status; the admin API and the log still have them.
	HideErrors bool `yaml:"hide_errors"`
}

// Debug configures diagnostics.
type Debug struct {
	// Listen serves net/http/pprof on this address (off when empty); keep
	// it on loopback.
	Listen string `yaml:"listen"`
}

// Export publishes the whole source as a static tree (rsbridge export);
// with Target set, serve exports continuously too.
type Export struct {
	// Target is where: a directory ("/srv/resourcesync", or "dir:" before
	// it) served by a static web server at base_url, or an S3-compatible
	// bucket, "s3://bucket" or "s3://bucket/key/prefix", whose objects are
	// read at base_url (a CDN, or the bucket's path-style URL). Credentials
	// come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
	// or the shared credentials file (AWS_SHARED_CREDENTIALS_FILE,
	// AWS_PROFILE), never from this file.
	Target string `yaml:"target"`
	// Endpoint is the S3 endpoint URL; default https://s3.amazonaws.com.
	Endpoint string `yaml:"endpoint"`
	// Region of the bucket ("" lets the client find it).
	Region string `yaml:"region"`
	// VirtualHost addresses the bucket as a host name instead of a path.
	VirtualHost bool `yaml:"virtual_host"`
	// Instance names this instance's part of the Source Description
	// ([a-z0-9-]+, default "main"): give every instance that exports to
	// one target its own.
	Instance string `yaml:"instance"`
	// Interval: serve exports at most this often after a harvest changed
	// something (a second after the first change of a quiet spell), and
	// every five intervals without one (lists close, dumps appear).
	Interval time.Duration `yaml:"interval"`
	// Workers bounds the object writes in flight.
	Workers int `yaml:"workers"`
	// Grace keeps superseded dump packages and Resource List pages this
	// long after the documents stop linking them.
	Grace time.Duration `yaml:"grace"`
	// MaxAge is the Cache-Control max-age of objects that change.
	MaxAge time.Duration `yaml:"max_age"`
}

// Scheduler bounds how many runs (harvests, reconciliations) go at once and
// spreads their schedules: with hundreds of repositories, runs wait in a
// queue for a slot instead of all starting together.
type Scheduler struct {
	// Concurrency is the most runs going at once across all repositories
	// (1-256). A run waiting for a slot shows as waiting on the status page.
	Concurrency int `yaml:"concurrency"`
	// PerHost is the most runs going at once against one upstream host
	// (1-Concurrency), whatever the number of repositories behind it: one
	// host name, or one of HostGroups.
	PerHost int `yaml:"per_host"`
	// HostGroups are domains whose host names are one upstream host to
	// PerHost: a hosting service that gives each repository its own name
	// (JAIRO Cloud's <name>.repo.nii.ac.jp) serves them all from one
	// place. A host name equal to an entry or under it (a "*." or "."
	// before the entry means the same) counts as the entry; the first
	// entry that matches wins.
	HostGroups []string `yaml:"host_groups"`
	// Jitter spreads the repositories' schedules: each repository's runs
	// are shifted by a fixed offset below Jitter, derived from its name
	// (the same at every start). An "@every D" schedule runs at a fixed
	// phase of D, its offset below min(Jitter, D). 0 starts every schedule
	// on the minute (or, for @every, at multiples of D).
	Jitter time.Duration `yaml:"jitter"`
}

// PolitenessHost is the upstream host that PerHost counts a repository
// whose base URL names host under: the first of HostGroups that host is or
// is under, else host itself (lower case).
func (s Scheduler) PolitenessHost(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, g := range s.HostGroups {
		g = hostGroup(g)
		if host == g || strings.HasSuffix(host, "."+g) {
			return g
		}
	}
	return host
}

// hostGroup is a HostGroups entry as a domain: lower case, without a
// leading "*." or "." or a trailing ".".
func hostGroup(g string) string {
	g = strings.ToLower(strings.TrimSpace(g))
	g = strings.TrimPrefix(strings.TrimPrefix(g, "*"), ".")
	return strings.TrimSuffix(g, ".")
}

// Crosswalk sets the junii2 → JPCOAR 2.0 conversion of derive (the
// decisions GW-J2J-02..17 of shared/spec/junii2-jpcoar.md leave to the
// operator). Changing any of them converts every stored record again.
type Crosswalk struct {
	// StrictDialect refuses junii2 records in a legacy dialect (root meta,
	// another namespace) instead of converting them with a warning.
	StrictDialect bool `yaml:"strict_dialect"`
	// IRDBStrict refuses what IRDB itself would reject (its JaLC and ETD
	// conditions, a missing URI) instead of converting it with a warning.
	IRDBStrict bool `yaml:"irdb_strict"`
	// StrictXLSXTitles keeps every junii2 alternative a dcterms:alternative,
	// as the JPCOAR mapping sheet says, instead of promoting a title in
	// another language to dc:title.
	StrictXLSXTitles bool `yaml:"strict_xlsx_titles"`
	// DescriptionAsAbstract types junii2 description as an Abstract.
	DescriptionAsAbstract bool `yaml:"description_as_abstract"`
	// DeriveOpenAccess says open access when a record has a full text and a
	// textversion of author, publisher or ETD (junii2 also lists restricted
	// files, so it is off).
	DeriveOpenAccess bool `yaml:"derive_open_access"`
	// LangGuessLatin gives Latin-script text without a lang xml:lang="en"
	// (nil: true); false gives it none.
	LangGuessLatin *bool `yaml:"lang_guess_latin"`
}

// GuessLatin reports whether Latin-script text is taken for English.
func (c Crosswalk) GuessLatin() bool { return c.LangGuessLatin == nil || *c.LangGuessLatin }

// On reports whether an export target is configured.
func (e Export) On() bool { return e.Target != "" }

// Notification configures ResourceSync Change Notification over WebSub.
type Notification struct {
	// Enabled publishes a change-notification channel per resource set; nil
	// means true. Use On.
	Enabled *bool `yaml:"enabled"`
	// HubURL, when set, sends every notification to this external WebSub
	// hub (it must relay the posted payload) instead of the embedded hub.
	HubURL string `yaml:"hub_url"`
	// AllowPrivateCallbacks lets subscribers use callbacks on private,
	// loopback or link-local addresses (closed networks, tests).
	AllowPrivateCallbacks bool `yaml:"allow_private_callbacks"`
	// MaxEntries caps the changes in one notification; more are split into
	// several, each with its own consecutive interval.
	MaxEntries int `yaml:"max_entries"`
	// Workers bounds the deliveries in flight at once.
	Workers int `yaml:"workers"`
	// MaxAttempts is how often a delivery is tried before it is given up.
	MaxAttempts int `yaml:"max_attempts"`
	// Timeout bounds each request to a subscriber.
	Timeout time.Duration `yaml:"timeout"`
	// MaxSubscriptions and MaxSubscriptionsPerTopic cap the live
	// subscriptions the embedded hub holds, in all and per channel: each
	// costs a POST per change. Past them new subscriptions are denied
	// (renewals of existing ones are not).
	MaxSubscriptions         int `yaml:"max_subscriptions"`
	MaxSubscriptionsPerTopic int `yaml:"max_subscriptions_per_topic"`
}

// On reports whether Change Notification is enabled (default true).
func (n Notification) On() bool { return n.Enabled == nil || *n.Enabled }

// Server bounds what clients of the HTTP server can hold.
type Server struct {
	// MaxStreams is how many large documents (Resource and Change Lists,
	// dumps) are streamed at once; beyond it requests get 503 with
	// Retry-After.
	MaxStreams int `yaml:"max_streams"`
	// WriteIdle is the longest a client may take to accept the next part of
	// a response; a client that stops reading is cut off after it, so it
	// cannot hold a store snapshot.
	WriteIdle time.Duration `yaml:"write_idle"`
	// CacheBytes bounds the files of rendered large documents (Resource and
	// Change Lists) kept under data_dir/cache.
	CacheBytes int64 `yaml:"cache_bytes"`
	// Robots selects the Resource Lists robots.txt names as Sitemaps:
	// all-records (one per repository and format), all, or none.
	Robots string `yaml:"robots"`
	// HarvestShare is the percentage of the time harvests and
	// reconciliations may work while the server is answering requests
	// (10-100): after each page they pause for the rest, so serving keeps
	// its latency on a small machine. 100 never pauses.
	HarvestShare int `yaml:"harvest_share"`
}

// Robots selections (Server.Robots).
const (
	RobotsAllRecords = "all-records"
	RobotsAll        = "all"
	RobotsNone       = "none"
)

// ResourceSync configures the ResourceSync documents served.
type ResourceSync struct {
	// PageLimit is the maximum number of <url> elements in one Resource
	// List or Change List page.
	PageLimit int `yaml:"page_limit"`
	// ChangeListPeriod is the time span covered by one Change List.
	ChangeListPeriod time.Duration `yaml:"changelist_period"`
	// Retention is how long change history is kept: change events, closed
	// Change Lists and Change Dumps older than it are pruned. 0 keeps it
	// forever.
	Retention time.Duration `yaml:"retention"`
	// DumpSets selects the resource sets that get Resource and Change Dumps:
	// "all" (every resource set), "all-records" (only the all-records set of
	// each repository and format) or "none".
	DumpSets string `yaml:"dump_sets"`
	// DumpPackageBytes caps one ZIP package of a Resource Dump (a package
	// also holds at most 50,000 resources).
	DumpPackageBytes int64 `yaml:"dump_package_bytes"`
	// DumpInterval is the shortest time between two Resource Dumps of a set.
	DumpInterval time.Duration `yaml:"dump_interval"`
	// DumpGrace is how long a superseded dump package stays downloadable.
	DumpGrace time.Duration `yaml:"dump_grace"`
}

// Dump set selections (ResourceSync.DumpSets).
const (
	DumpAll        = "all"
	DumpAllRecords = "all-records"
	DumpNone       = "none"
)

// Repository is one OAI-PMH endpoint to harvest.
type Repository struct {
	// Name identifies the repository in URLs and in the store.
	Name string `yaml:"name"`
	// BaseURL is the OAI-PMH base URL.
	BaseURL string `yaml:"base_url"`
	// MetadataPrefixes lists the formats to harvest.
	MetadataPrefixes []string `yaml:"metadata_prefixes"`
	// Sets lists the OAI sets published as resource sets (each with its
	// descendants); empty means every set ListSets reports, subject to
	// SetPatterns and MaxSets. Every record is harvested either way.
	Sets []string `yaml:"sets"`
	// SetPatterns keeps, of the sets ListSets reports, those whose setSpec
	// matches one of these patterns (path.Match: "3:62:*", "ddc:5??").
	SetPatterns []string `yaml:"set_patterns"`
	// MaxSets publishes at most this many sets (the first in setSpec
	// order); 0 means no cap. WEKO3 index trees can have thousands.
	MaxSets int `yaml:"max_sets"`
	// Schedule is the incremental harvest schedule (cron.ParseStandard).
	Schedule string `yaml:"schedule"`
	// Reconcile is the full-harvest reconciliation schedule
	// (cron.ParseStandard), or ReconcileOff.
	Reconcile string `yaml:"reconcile"`
	// Harvest overrides Config.Defaults for this repository.
	Harvest `yaml:",inline"`

	// derived are the formats converted rather than harvested (target →
	// source), resolved by SetDefaults, which also appends the targets to
	// MetadataPrefixes: everything that publishes sees them as formats.
	derived map[string]string
}

// Harvested are the formats the repository is harvested in: its
// metadata_prefixes without the derived ones.
func (r Repository) Harvested() []string {
	var out []string
	for _, p := range r.MetadataPrefixes {
		if _, d := r.derived[p]; !d {
			out = append(out, p)
		}
	}
	return out
}

// DerivedFrom is the format a derived one is converted from (false: the
// format is harvested).
func (r Repository) DerivedFrom(prefix string) (string, bool) {
	s, ok := r.derived[prefix]
	return s, ok
}

// Harvest holds settings an operator may set in `defaults:` and override per
// repository. A nil pointer means "not set here"; Config.Resolved fills in
// the effective value.
type Harvest struct {
	// Timeout is the longest wait for data from the repository (headers or the next body bytes).
	Timeout *time.Duration `yaml:"timeout"`
	// ConnectTimeout bounds establishing the connection.
	ConnectTimeout *time.Duration `yaml:"connect_timeout"`
	// Delay is the politeness pause between requests to one repository.
	Delay *time.Duration `yaml:"delay"`
	// MaxRetries bounds retries after network errors and 5xx/429 responses.
	MaxRetries *int `yaml:"max_retries"`
	// BackoffBase is the first retry backoff.
	BackoffBase *time.Duration `yaml:"backoff_base"`
	// BackoffMax caps the exponential backoff.
	BackoffMax *time.Duration `yaml:"backoff_max"`
	// MaxRetryAfter caps the wait requested by a Retry-After header.
	MaxRetryAfter *time.Duration `yaml:"max_retry_after"`
	// MaxBodyBytes caps the size of one response body.
	MaxBodyBytes *int64 `yaml:"max_body_bytes"`
	// MaxRecordBytes caps one record (and any single text or attribute in a
	// response); a larger record is quarantined, not stored, and the harvest
	// goes on. It bounds the harvester's memory.
	MaxRecordBytes *int64 `yaml:"max_record_bytes"`
	// MaxEmptyPages is how many consecutive empty pages carrying a
	// resumption token are tolerated before giving up.
	MaxEmptyPages *int `yaml:"max_empty_pages"`
	// UserAgent replaces the whole User-Agent header.
	UserAgent *string `yaml:"user_agent"`
	// Headers are extra HTTP request headers. Repository headers override
	// default headers of the same (case-insensitive) name.
	Headers map[string]string `yaml:"headers"`
	// MetadataRights is the absolute URI of the licence of the metadata
	// rsbridge publishes for the repository (e.g. a Creative Commons licence
	// URI), given as atom:rights of its OAI-ORE Resource Maps (ORE-018). It
	// is not about harvesting, but set in defaults: and per repository like
	// the rest. "" (the default) means none; a repository may set "" to
	// leave out a licence defaults: gives.
	MetadataRights *string `yaml:"metadata_rights"`
	// SecretParams names the query parameters of base_url that carry
	// secrets (an access token, an API key): sent to the repository, never
	// published in via links, status pages, errors or logs. Default: common
	// names (DefaultSecretParams). Credentials as user:password@ in
	// base_url are sent as Basic auth and never published either.
	SecretParams []string `yaml:"secret_params"`
	// Derive publishes formats the repository does not offer, converted at
	// harvest time from one it does: target prefix → source prefix, e.g.
	// {jpcoar_2.0: junii2} (Derivable lists what rsbridge can convert). A
	// repository whose metadata_prefixes hold the target, or lack the
	// source, is not converted when the setting comes from defaults:; set
	// on the repository itself, that is a configuration error.
	Derive map[string]string `yaml:"derive"`
}

// Derivable reports whether rsbridge can derive format target from source
// (bridge/crosswalk).
func Derivable(target, source string) bool { return target == "jpcoar_2.0" && source == "junii2" }

// DerivedProfile is the schema a derived format's records follow, given
// as their rs:ln rel="profile" (junii2-jpcoar.md GW-J2J-20).
func DerivedProfile(target string) string {
	if target == "jpcoar_2.0" {
		return "https://github.com/JPCOAR/schema/blob/master/2.0/"
	}
	return ""
}

// Settings are the effective harvest settings of one repository.
type Settings struct {
	Timeout, ConnectTimeout, Delay, BackoffBase, BackoffMax, MaxRetryAfter time.Duration
	MaxRetries, MaxEmptyPages                                              int
	MaxBodyBytes, MaxRecordBytes                                           int64
	// UserAgent is "" when not overridden.
	UserAgent string
	// Headers has canonical header names as keys and is never nil.
	Headers map[string]string
	// MetadataRights is the licence URI of the repository's metadata, ""
	// when none.
	MetadataRights string
	// SecretParams are the base_url query parameters never published.
	SecretParams []string
}

func builtinSettings() Settings {
	return Settings{
		Timeout:        DefaultTimeout,
		ConnectTimeout: DefaultConnectTimeout,
		Delay:          DefaultDelay,
		BackoffBase:    DefaultBackoffBase,
		BackoffMax:     DefaultBackoffMax,
		MaxRetryAfter:  DefaultMaxRetryAfter,
		MaxRetries:     DefaultMaxRetries,
		MaxEmptyPages:  DefaultMaxEmptyPages,
		MaxBodyBytes:   DefaultMaxBodyBytes,
		MaxRecordBytes: DefaultMaxRecordBytes,
		Headers:        map[string]string{},
		SecretParams:   DefaultSecretParams(),
	}
}

// Resolved returns the effective settings of r: the repository's value,
// else the Config.Defaults value, else the built-in default. Headers are
// merged per canonical name, repository headers winning. The returned map
// is a fresh copy.
func (c *Config) Resolved(r Repository) Settings {
	s := builtinSettings()
	c.Defaults.applyTo(&s)
	r.Harvest.applyTo(&s)
	return s
}

func (h Harvest) applyTo(s *Settings) {
	set(&s.Timeout, h.Timeout)
	set(&s.ConnectTimeout, h.ConnectTimeout)
	set(&s.Delay, h.Delay)
	set(&s.MaxRetries, h.MaxRetries)
	set(&s.BackoffBase, h.BackoffBase)
	set(&s.BackoffMax, h.BackoffMax)
	set(&s.MaxRetryAfter, h.MaxRetryAfter)
	set(&s.MaxBodyBytes, h.MaxBodyBytes)
	set(&s.MaxRecordBytes, h.MaxRecordBytes)
	set(&s.MaxEmptyPages, h.MaxEmptyPages)
	set(&s.UserAgent, h.UserAgent)
	set(&s.MetadataRights, h.MetadataRights)
	if h.SecretParams != nil {
		s.SecretParams = append([]string(nil), h.SecretParams...)
	}
	for k, v := range h.Headers {
		s.Headers[textproto.CanonicalMIMEHeaderKey(k)] = v
	}
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// Repository returns the repository called name.
func (c *Config) Repository(name string) (Repository, bool) {
	for _, r := range c.Repositories {
		if r.Name == name {
			return r, true
		}
	}
	return Repository{}, false
}

// HasReconcile reports whether r has a reconciliation schedule, i.e.
// r.Reconcile is neither ReconcileOff nor empty.
func (c *Config) HasReconcile(r Repository) bool {
	return r.Reconcile != ReconcileOff && r.Reconcile != ""
}

// SetDefaults fills what is derived from other values or left empty: the base
// URL from the listen address, and each repository's metadata prefixes,
// schedule and reconcile schedule. Parse calls it; so must code that builds a
// Config from Default instead of a file.
func (c *Config) SetDefaults() {
	if c.BaseURL == "" {
		c.BaseURL = defaultBaseURL(c.Listen)
	} else if trimmed := trimSlashes(c.BaseURL); trimmed != "" {
		c.BaseURL = trimmed
	}
	for i := range c.Repositories {
		r := &c.Repositories[i]
		if r.MetadataPrefixes == nil {
			r.MetadataPrefixes = []string{DefaultMetadataPrefix}
		}
		if r.Schedule == "" {
			r.Schedule = DefaultSchedule
		}
		if r.Reconcile == "" {
			r.Reconcile = DefaultReconcile
		}
		c.resolveDerive(r)
	}
}

// resolveDerive works out a repository's derived formats (its own derive,
// else the defaults') and appends them to its metadata_prefixes. It can run
// again: the formats it appended before are not taken for harvested ones.
func (c *Config) resolveDerive(r *Repository) {
	want := r.Derive
	if want == nil {
		want = c.Defaults.Derive
	}
	if len(want) == 0 && r.derived == nil {
		return
	}
	harvested := r.Harvested()
	r.derived = nil
	r.MetadataPrefixes = harvested
	for _, target := range slices.Sorted(maps.Keys(want)) {
		source := want[target]
		if !Derivable(target, source) || !slices.Contains(harvested, source) || slices.Contains(harvested, target) {
			continue // validate names it when the repository itself asks for it
		}
		if r.derived == nil {
			r.derived = map[string]string{}
		}
		r.derived[target] = source
		r.MetadataPrefixes = append(slices.Clip(r.MetadataPrefixes), target)
	}
}

// Default returns the built-in configuration: every default and no
// repositories. Code that needs a configuration without a file (quick mode,
// the demo) starts here, adds repositories, calls SetDefaults and Validate.
func Default() *Config {
	return &Config{
		Listen:    DefaultListen,
		DataDir:   DefaultDataDir,
		LogLevel:  DefaultLogLevel,
		LogFormat: "text",
		Store:     Store{GCInterval: DefaultGCInterval, SyncInterval: DefaultSyncInterval},
		ResourceSync: ResourceSync{
			PageLimit:        DefaultPageLimit,
			ChangeListPeriod: DefaultChangeListPeriod,
			Retention:        DefaultRetention,
			DumpSets:         DumpAll,
			DumpPackageBytes: DefaultDumpPackageBytes,
			DumpInterval:     DefaultDumpInterval,
			DumpGrace:        DefaultDumpGrace,
		},
		Scheduler: Scheduler{Concurrency: DefaultConcurrency, PerHost: DefaultPerHost, Jitter: DefaultJitter},
		Export: Export{Instance: DefaultExportInstance, Interval: DefaultExportInterval, Workers: DefaultExportWorkers,
			Grace: DefaultExportGrace, MaxAge: DefaultExportMaxAge},
		Server: Server{MaxStreams: DefaultMaxStreams, WriteIdle: DefaultWriteIdle, CacheBytes: DefaultCacheBytes, Robots: RobotsAllRecords,
			HarvestShare: DefaultHarvestShare},
		Notification: Notification{MaxEntries: DefaultNotifyEntries, Workers: DefaultNotifyWorkers,
			MaxAttempts: DefaultNotifyAttempts, Timeout: DefaultNotifyTimeout,
			MaxSubscriptions: DefaultMaxSubscriptions, MaxSubscriptionsPerTopic: DefaultMaxSubscriptionsPerTopic},
	}
}

func defaultBaseURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func trimSlashes(s string) string {
	return strings.TrimRight(s, "/")
}

// Runtime settings rsbridge applies where the environment (GOMEMLIMIT,
// GOMAXPROCS) does not set them; cmd/rsbridge/runtime.go says why, and the
// benchmarks apply them too so they measure what the binary does.
const (
	// MemoryLimit is the Go soft memory limit, bytes. Badger keeps about
	// 160 MiB of table-building buffers on the Go heap (its allocator pool
	// keeps the buffers of a memtable flush), so at 256 MiB the collector ran
	// without pause during a harvest: 512 MiB made the 2,000,000-record
	// consortium bench 23 % faster (docs/benchmarks.md, "Consortium scale").
	MemoryLimit = 512 << 20
	ProcsPerCPU = 2 // GOMAXPROCS per CPU
)
