package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

const minimal = `
repositories:
  - name: a
    base_url: http://a.example/oai
`

func ptr[T any](v T) *T { return &v }

func parseAndValidate(src string) (*Config, error) {
	return ParseAndValidate(strings.NewReader(src))
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := parseAndValidate(src)
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return c
}

func TestParseMinimalAppliesDefaults(t *testing.T) {
	got := mustParse(t, minimal)
	want := &Config{
		Listen:    "127.0.0.1:8080",
		BaseURL:   "http://127.0.0.1:8080",
		DataDir:   "./data",
		LogLevel:  "info",
		LogFormat: "text",
		Store:     Store{GCInterval: 10 * time.Minute, SyncInterval: time.Second},
		ResourceSync: ResourceSync{
			PageLimit:        50000,
			ChangeListPeriod: 24 * time.Hour,
			Retention:        180 * 24 * time.Hour,
			DumpSets:         "all",
			DumpPackageBytes: 100 << 20,
			DumpInterval:     time.Hour,
			DumpGrace:        time.Hour,
		},
		Server:       Server{MaxStreams: 16, WriteIdle: 30 * time.Second, CacheBytes: 1 << 30, Robots: "all-records", HarvestShare: 25},
		Notification: Notification{MaxEntries: 1000, Workers: 16, MaxAttempts: 12, Timeout: 30 * time.Second, MaxSubscriptions: 10000, MaxSubscriptionsPerTopic: 1000},
		Export:       Export{Instance: "main", Interval: time.Minute, Workers: 16, Grace: 24 * time.Hour, MaxAge: time.Minute},
		Scheduler:    Scheduler{Concurrency: 8, PerHost: 2, Jitter: time.Hour},
		Repositories: []Repository{{
			Name:             "a",
			BaseURL:          "http://a.example/oai",
			MetadataPrefixes: []string{"oai_dc"},
			Schedule:         "@every 1h",
			Reconcile:        "@weekly",
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if got.Store.Sync() {
		t.Error("Store.Sync() = true, want false (group commit) by default")
	}
	wantSettings := Settings{
		Timeout:        120 * time.Second,
		ConnectTimeout: 10 * time.Second,
		Delay:          time.Second,
		BackoffBase:    2 * time.Second,
		BackoffMax:     5 * time.Minute,
		MaxRetryAfter:  time.Hour,
		MaxRetries:     5,
		MaxEmptyPages:  10,
		MaxBodyBytes:   256 << 20,
		MaxRecordBytes: 16 << 20,
		Headers:        map[string]string{},
		SecretParams:   DefaultSecretParams(),
	}
	if s := got.Resolved(got.Repositories[0]); !reflect.DeepEqual(s, wantSettings) {
		t.Errorf("Resolved() = %+v, want %+v", s, wantSettings)
	}
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "base_url derived from a wildcard listen",
			src:  "listen: \":9000\"\n" + minimal,
			check: func(t *testing.T, c *Config) {
				if c.BaseURL != "http://localhost:9000" {
					t.Errorf("BaseURL = %q", c.BaseURL)
				}
			},
		},
		{
			name: "base_url derived from an IPv6 listen",
			src:  "listen: \"[::1]:9000\"\n" + minimal,
			check: func(t *testing.T, c *Config) {
				if c.BaseURL != "http://[::1]:9000" {
					t.Errorf("BaseURL = %q", c.BaseURL)
				}
			},
		},
		{
			name: "base_url trailing slashes stripped",
			src:  "base_url: https://rs.example.org/bridge//\n" + minimal,
			check: func(t *testing.T, c *Config) {
				if c.BaseURL != "https://rs.example.org/bridge" {
					t.Errorf("BaseURL = %q", c.BaseURL)
				}
			},
		},
		{
			name: "sync_writes false",
			src:  "store: {sync_writes: false}\n" + minimal,
			check: func(t *testing.T, c *Config) {
				if c.Store.Sync() {
					t.Error("Sync() = true")
				}
				if c.Store.GCInterval != DefaultGCInterval {
					t.Errorf("GCInterval = %v, want default kept beside a set sibling", c.Store.GCInterval)
				}
			},
		},
		{
			name: "null values mean absent",
			src:  "listen: ~\nstore: ~\ndefaults:\n  timeout: ~\n" + minimal,
			check: func(t *testing.T, c *Config) {
				if c.Listen != DefaultListen || c.Store.GCInterval != DefaultGCInterval || c.Defaults.Timeout != nil {
					t.Errorf("got %+v", c)
				}
			},
		},
		{
			name: "explicit empty sets and reconcile off",
			src: `repositories:
  - name: a
    base_url: http://a.example/oai?x=1
    sets: []
    metadata_prefixes: [oai_dc, marc21, "datacite.v4(x)"]
    reconcile: "off"
    schedule: "30 2 * * 1-5"
`,
			check: func(t *testing.T, c *Config) {
				r := c.Repositories[0]
				if r.Sets == nil || len(r.Sets) != 0 || c.HasReconcile(r) || r.Schedule != "30 2 * * 1-5" {
					t.Errorf("got %+v", r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, mustParse(t, tt.src))
		})
	}
}

func TestMergeKeys(t *testing.T) {
	c := mustParse(t, `defaults: &d
  delay: 3s
  headers: &h
    X-A: "1"
repositories:
  - name: a
    base_url: http://a.example/oai
    <<: *d
    delay: 0s
  - name: b
    base_url: http://b.example/oai
    headers:
      <<: *h
      X-B: "2"
`)
	a, b := c.Resolved(c.Repositories[0]), c.Resolved(c.Repositories[1])
	if a.Delay != 0 || b.Delay != 3*time.Second {
		t.Errorf("delays = %v, %v; want 0s, 3s", a.Delay, b.Delay)
	}
	if want := map[string]string{"X-A": "1", "X-B": "2"}; !reflect.DeepEqual(b.Headers, want) {
		t.Errorf("headers = %v, want %v", b.Headers, want)
	}
}

func TestResolved(t *testing.T) {
	tests := []struct {
		name     string
		defaults Harvest
		repo     Harvest
		want     func(s *Settings)
	}{
		{
			name: "built-in",
			want: func(s *Settings) {},
		},
		{
			name:     "defaults override built-in",
			defaults: Harvest{Timeout: ptr(time.Minute), MaxRetries: ptr(0), UserAgent: ptr("bot/1")},
			want: func(s *Settings) {
				s.Timeout, s.MaxRetries, s.UserAgent = time.Minute, 0, "bot/1"
			},
		},
		{
			name:     "repo overrides defaults",
			defaults: Harvest{Timeout: ptr(time.Minute), Delay: ptr(5 * time.Second)},
			repo:     Harvest{Timeout: ptr(time.Hour), MaxBodyBytes: ptr(int64(2048))},
			want: func(s *Settings) {
				s.Timeout, s.Delay, s.MaxBodyBytes = time.Hour, 5*time.Second, 2048
			},
		},
		{
			name:     "explicit zero delay kept",
			defaults: Harvest{Delay: ptr(5 * time.Second)},
			repo:     Harvest{Delay: ptr(time.Duration(0)), MaxRetries: ptr(0)},
			want: func(s *Settings) {
				s.Delay, s.MaxRetries = 0, 0
			},
		},
		{
			name: "headers merged per canonical name",
			defaults: Harvest{Headers: map[string]string{
				"authorization": "Basic default",
				"X-Common":      "d",
			}},
			repo: Harvest{Headers: map[string]string{
				"Authorization": "Bearer repo",
				"x-repo":        "r",
			}},
			want: func(s *Settings) {
				s.Headers = map[string]string{
					"Authorization": "Bearer repo",
					"X-Common":      "d",
					"X-Repo":        "r",
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Defaults: tt.defaults}
			want := builtinSettings()
			tt.want(&want)
			if got := c.Resolved(Repository{Harvest: tt.repo}); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestMetadataRights: the licence URI of a repository's metadata comes from
// the repository, else from defaults:, else none; "" in a repository leaves
// out the default.
func TestMetadataRights(t *testing.T) {
	c := mustParse(t, `defaults:
  metadata_rights: https://creativecommons.org/publicdomain/zero/1.0/
repositories:
  - name: a
    base_url: http://a.example/oai
  - name: b
    base_url: http://b.example/oai
    metadata_rights: https://creativecommons.org/licenses/by/4.0/
  - name: c
    base_url: http://c.example/oai
    metadata_rights: ""
  - name: d
    base_url: http://d.example/oai
    metadata_rights: "https://例え.jp/ライセンス/%E7%AC%AC1%E7%89%88#ja"
  - name: e
    base_url: http://e.example/oai
    metadata_rights: info:eu-repo/semantics/openAccess
`)
	for i, want := range []string{
		"https://creativecommons.org/publicdomain/zero/1.0/",
		"https://creativecommons.org/licenses/by/4.0/",
		"",
		"https://例え.jp/ライセンス/%E7%AC%AC1%E7%89%88#ja",
		"info:eu-repo/semantics/openAccess",
	} {
		if got := c.Resolved(c.Repositories[i]).MetadataRights; got != want {
			t.Errorf("%s: MetadataRights %q, want %q", c.Repositories[i].Name, got, want)
		}
	}
	if got := mustParse(t, minimal).Resolved(Repository{}).MetadataRights; got != "" {
		t.Errorf("default MetadataRights %q, want none", got)
	}
}

func TestResolvedHeadersAreACopy(t *testing.T) {
	c := &Config{Defaults: Harvest{Headers: map[string]string{"X-A": "1"}}}
	c.Resolved(Repository{}).Headers["X-A"] = "changed"
	if c.Defaults.Headers["X-A"] != "1" {
		t.Error("Resolved returned the config's own map")
	}
}

func TestRepositoryAndHasReconcile(t *testing.T) {
	c := mustParse(t, `repositories:
  - name: a
    base_url: http://a.example/oai
  - name: b
    base_url: http://b.example/oai
    reconcile: "off"
`)
	a, ok := c.Repository("a")
	if !ok || a.Name != "a" || !c.HasReconcile(a) {
		t.Errorf("Repository(a) = %+v, %v", a, ok)
	}
	b, ok := c.Repository("b")
	if !ok || c.HasReconcile(b) {
		t.Errorf("Repository(b) = %+v, %v; HasReconcile = %v", b, ok, c.HasReconcile(b))
	}
	if _, ok := c.Repository("c"); ok {
		t.Error("Repository(c) found")
	}
}

func TestBadConfigs(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty file", "", "config is empty"},
		{"only comments", "# nothing\n\n# here\n", "config is empty"},
		{"only a document marker", "---\n", "config is empty"},
		{"null document", "~\n", "config is empty"},
		{"not a mapping", "- a\n- b\n", "line 1: config must be a mapping of keys to values, got a list"},
		{"scalar document", "hello\n", `line 1: config must be a mapping of keys to values, got "hello"`},
		{"multiple documents", minimal + "---\n" + minimal, `line 5: multiple YAML documents are not supported (remove the "---" separator)`},
		{"unclosed flow sequence", "listen: x\nstore:\n  gc_interval: [1m\n", "line 3: YAML syntax error: did not find expected ',' or ']'"},
		{"bad indentation", "listen: x\nstore:\n  gc_interval: 1m\n bad: 1\n", "line 4: YAML syntax error: did not find expected key"},
		{"end of file inside a flow sequence", "a: [\n", "line 2: YAML syntax error: did not find expected node content"},
		{"unknown anchor", "repositories: *r\n", "YAML syntax error: unknown anchor 'r' referenced"},
		{"invalid UTF-8", "listen: \xff\n", "YAML syntax error: invalid leading UTF-8 octet"},
		{"syntax error on line 1", "a: b: c\n", "YAML syntax error: mapping values are not allowed in this context"},
		{"tab indentation", "store:\n\tgc_interval: 1m\n", "line 2: YAML syntax error: found character that cannot start any token"},
		{
			name: "unknown keys everywhere",
			src: `listen: 127.0.0.1:8080
foo: 1
store:
  sync: true
repositories:
  - name: a
    base_url: http://a.example/oai
    bar: x
`,
			want: `line 2: unknown key "foo"` + "\n" +
				`line 4: unknown key "sync"` + "\n" +
				`line 8: unknown key "bar"`,
		},
		{
			name: "duplicate key",
			src:  "data_dir: a\ndata_dir: b\n" + minimal,
			want: `line 2: duplicate key "data_dir" (first defined at line 1)`,
		},
		{
			name: "duplicate header",
			src:  "defaults:\n  headers:\n    X-A: a\n    X-A: b\n" + minimal,
			want: `line 4: duplicate key "X-A" (first defined at line 3)`,
		},
		{
			name: "duration not parseable",
			src:  "defaults:\n  delay: 1s\n  max_retries: 2\n  timeout: abc\n" + minimal,
			want: `line 4: timeout: cannot parse "abc" as a duration (use e.g. 30s, 5m, 1h)`,
		},
		{
			name: "bare integer duration",
			src:  "defaults:\n  timeout: 30\n" + minimal,
			want: `line 2: timeout: bare number 30 is ambiguous; add a unit (e.g. 30s, 5m, 1h)`,
		},
		{
			name: "bare zero duration",
			src:  "defaults:\n  delay: 0\n" + minimal,
			want: `line 2: delay: bare number 0 is ambiguous; add a unit (e.g. 30s, 5m, 1h)`,
		},
		{
			name: "bare float duration",
			src:  "store:\n  gc_interval: 1.5\n" + minimal,
			want: `line 2: gc_interval: bare number 1.5 is ambiguous; add a unit (e.g. 30s, 5m, 1h)`,
		},
		{
			name: "quoted number duration",
			src:  "resourcesync:\n  changelist_period: \"30\"\n" + minimal,
			want: `line 2: changelist_period: cannot parse "30" as a duration (use e.g. 30s, 5m, 1h)`,
		},
		{
			name: "duration given a list",
			src:  "defaults:\n  delay: [1s]\n" + minimal,
			want: `line 2: delay: cannot parse a list as a duration (use e.g. 30s, 5m, 1h)`,
		},
		{
			name: "type errors",
			src: `listen: [a]
store:
  sync_writes: maybe
resourcesync:
  page_limit: 1.5
defaults:
  max_body_bytes: 1e9
  max_retries: "3"
  user_agent: {a: b}
  headers: [a]
repositories: {name: a}
`,
			want: `line 1: listen: expected a string, got a list` + "\n" +
				`line 3: sync_writes: expected true or false, got "maybe"` + "\n" +
				`line 5: page_limit: expected an integer, got "1.5"` + "\n" +
				`line 7: max_body_bytes: expected an integer, got "1e9"` + "\n" +
				`line 8: max_retries: expected an integer, got "3"` + "\n" +
				`line 9: user_agent: expected a string, got a mapping` + "\n" +
				`line 10: headers: expected a mapping, got a list` + "\n" +
				`line 11: repositories: expected a list, got a mapping`,
		},
		{
			name: "integer overflow",
			src:  "defaults:\n  max_body_bytes: 99999999999999999999\n" + minimal,
			want: `line 2: max_body_bytes: expected an integer, got "99999999999999999999"`,
		},
		{
			name: "list elements",
			src: `repositories:
  - name: a
    base_url: http://a.example/oai
    sets: [a, [b]]
  - plain
`,
			want: `line 4: sets[1]: expected a string, got a list` + "\n" +
				`line 5: repositories[1]: expected a mapping, got "plain"`,
		},
		{
			name: "header value not a string",
			src:  "defaults:\n  headers:\n    X-A: {b: c}\n" + minimal,
			want: `line 3: X-A: expected a string, got a mapping`,
		},
		{
			name: "non-scalar key",
			src:  "? [a]\n: b\n" + minimal,
			want: `line 1: keys must be plain strings, got a list`,
		},
		{
			name: "bad merge",
			src:  "defaults:\n  <<: 3\n" + minimal,
			want: `line 2: "<<" merge needs a mapping or a list of mappings, got "3"`,
		},
		{
			name: "unknown key in merged mapping reported once",
			src: `repositories:
  - &r
    name: a
    base_url: http://a.example/oai
    nope: 1
  - <<: *r
    name: b
`,
			want: `line 5: unknown key "nope"`,
		},
		{
			name: "alias bomb",
			src:  aliasBomb(),
			want: "document contains excessive aliasing",
		},
		{
			name: "no repositories",
			src:  "listen: 127.0.0.1:8080\n",
			want: "repositories: at least one repository is required",
		},
		{
			name: "top-level values",
			src: `listen: localhost
base_url: ftp://x
data_dir: ""
contact: Jane <jane@example.org>
log_level: verbose
store:
  gc_interval: 30s
resourcesync:
  page_limit: 50001
  changelist_period: 0s
` + minimal,
			want: `line 1: listen: must be host:port (got "localhost")` + "\n" +
				`line 2: base_url: must be an absolute http or https URL (got "ftp://x")` + "\n" +
				`line 3: data_dir: must not be empty` + "\n" +
				`line 4: contact: must be an email address or an http(s) URL (got "Jane <jane@example.org>")` + "\n" +
				`line 5: log_level: must be one of debug, info, warn, error (got "verbose")` + "\n" +
				`line 7: store.gc_interval: must be >= 1m (got 30s)` + "\n" +
				`line 9: resourcesync.page_limit: must be between 1 and 50000 (got 50001)` + "\n" +
				`line 10: resourcesync.changelist_period: must be >= 1m (got 0s)`,
		},
		{
			name: "scheduler",
			src: `scheduler:
  concurrency: 0
  per_host: 3
  jitter: -1s
` + minimal,
			want: `line 2: scheduler.concurrency: must be between 1 and 256 (got 0)` + "\n" +
				`line 4: scheduler.jitter: must not be negative (got -1s)`,
		},
		{
			name: "store.mapped_limit below the floor",
			src:  "store:\n  mapped_limit: 1000\n" + minimal,
			want: `line 2: store.mapped_limit: must be 0 (the kernel decides) or at least 67108864 bytes (64 MiB) (got 1000)`,
		},
		{
			name: "scheduler host_groups that are not domains",
			src:  "scheduler:\n  host_groups:\n    - repo.nii.ac.jp\n    - https://repo.example.org/\n    - \"*\"\n    - a*.example\n" + minimal,
			want: `line 4: scheduler.host_groups[1]: must be a domain such as repo.nii.ac.jp (its host names and itself count as one upstream host), not a URL or pattern (got "https://repo.example.org/")` + "\n" +
				`line 5: scheduler.host_groups[2]: must be a domain such as repo.nii.ac.jp (its host names and itself count as one upstream host), not a URL or pattern (got "*")` + "\n" +
				`line 6: scheduler.host_groups[3]: must be a domain such as repo.nii.ac.jp (its host names and itself count as one upstream host), not a URL or pattern (got "a*.example")`,
		},
		{
			name: "scheduler per_host above concurrency",
			src:  "scheduler:\n  concurrency: 2\n  per_host: 3\n" + minimal,
			want: `line 3: scheduler.per_host: must be between 1 and scheduler.concurrency (2) (got 3)`,
		},
		{
			name: "invalid listen does not also blame the derived base_url",
			src:  "listen: \"nope\"\n" + minimal,
			want: `line 1: listen: must be host:port (got "nope")`,
		},
		{
			name: "listen port out of range",
			src:  "listen: \"127.0.0.1:70000\"\n" + minimal,
			want: `line 1: listen: must be host:port (got "127.0.0.1:70000")`,
		},
		{
			name: "base_url with query",
			src:  "base_url: https://x.example/?a=b\n" + minimal,
			want: `line 1: base_url: must not have a query or fragment (got "https://x.example/?a=b")`,
		},
		{
			name: "base_url with fragment",
			src:  "base_url: https://x.example/#top\n" + minimal,
			want: `line 1: base_url: must not have a query or fragment (got "https://x.example/#top")`,
		},
		{
			name: "base_url relative",
			src:  "base_url: /bridge\n" + minimal,
			want: `line 1: base_url: must be an absolute http or https URL (got "/bridge")`,
		},
		{
			name: "contact",
			src:  "contact: \"http://\"\n" + minimal,
			want: `line 1: contact: must be an email address or an http(s) URL (got "http://")`,
		},
		{
			name: "harvest ranges in defaults",
			src: `defaults:
  timeout: 0s
  connect_timeout: -1s
  delay: -1s
  max_retries: 101
  backoff_base: 0s
  backoff_max: 0s
  max_retry_after: 0s
  max_body_bytes: 1023
  max_empty_pages: 0
  user_agent: ""
` + minimal,
			want: `line 2: defaults.timeout: must be > 0 (got 0s)` + "\n" +
				`line 3: defaults.connect_timeout: must be > 0 (got -1s)` + "\n" +
				`line 4: defaults.delay: must be >= 0 (got -1s)` + "\n" +
				`line 5: defaults.max_retries: must be between 0 and 100 (got 101)` + "\n" +
				`line 6: defaults.backoff_base: must be > 0 (got 0s)` + "\n" +
				`line 7: defaults.backoff_max: must be > 0 (got 0s)` + "\n" +
				`line 8: defaults.max_retry_after: must be > 0 (got 0s)` + "\n" +
				`line 9: defaults.max_body_bytes: must be >= 1024 (got 1023)` + "\n" +
				`line 10: defaults.max_empty_pages: must be >= 1 (got 0)` + "\n" +
				`line 11: defaults.user_agent: must not be empty (omit the key for the default)`,
		},
		{
			name: "metadata_rights not an absolute URI",
			src: `defaults:
  metadata_rights: CC BY 4.0
repositories:
  - name: a
    base_url: http://a.example/oai
    metadata_rights: /licences/cc0
  - name: b
    base_url: http://b.example/oai
    metadata_rights: "https://creativecommons.org/licenses/by 4.0/"
  - name: c
    base_url: http://c.example/oai
    metadata_rights: "://creativecommons.org/licenses/by/4.0/"
  - name: d
    base_url: http://d.example/oai
    metadata_rights: "https://x.example/licence<1>"
  - name: e
    base_url: http://e.example/oai
    metadata_rights: "https://x.example/100%"
  - name: f
    base_url: http://f.example/oai
    metadata_rights: "https:///licence"
  - name: g
    base_url: http://g.example/oai
    metadata_rights: [https://x.example/]
`,
			want: `line 2: defaults.metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "CC BY 4.0")` + "\n" +
				`line 6: repositories[0].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "/licences/cc0")` + "\n" +
				`line 9: repositories[1].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "https://creativecommons.org/licenses/by 4.0/")` + "\n" +
				`line 12: repositories[2].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "://creativecommons.org/licenses/by/4.0/")` + "\n" +
				`line 15: repositories[3].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "https://x.example/licence<1>")` + "\n" +
				`line 18: repositories[4].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "https://x.example/100%")` + "\n" +
				`line 21: repositories[5].metadata_rights: must be an absolute URI of the licence, e.g. https://creativecommons.org/licenses/by/4.0/ (got "https:///licence")` + "\n" +
				`line 24: metadata_rights: expected a string, got a list`,
		},
		{
			name: "negative max_retries in a repository",
			src:  minimal + "    max_retries: -1\n",
			want: `line 5: repositories[0].max_retries: must be between 0 and 100 (got -1)`,
		},
		{
			name: "backoff_max below defaults backoff_base",
			src:  "defaults:\n  backoff_base: 10m\n" + minimal,
			want: `line 2: defaults.backoff_max: must be >= backoff_base 10m (got 5m)`,
		},
		{
			name: "backoff_max below inherited backoff_base",
			src:  "defaults:\n  backoff_base: 1m\n" + minimal + "    backoff_max: 30s\n",
			want: `line 7: repositories[0].backoff_max: must be >= backoff_base 1m (got 30s)`,
		},
		{
			name: "headers and user_agent",
			src: `defaults:
  user_agent: "bot\r\nX-Evil: 1"
  headers:
    "Bad Name": x
    x-token: a
    X-Token: b
    User-Agent: c
    X-Newline: "a\nb"
` + minimal,
			want: `line 2: defaults.user_agent: must not contain control characters (got "bot\r\nX-Evil: 1")` + "\n" +
				`line 4: defaults.headers: invalid header name "Bad Name"` + "\n" +
				`line 5: defaults.headers: "X-Token" and "x-token" name the same header` + "\n" +
				`line 7: defaults.headers.User-Agent: set user_agent instead` + "\n" +
				`line 8: defaults.headers.X-Newline: value must not contain control characters`,
		},
		{
			name: "unknown keys and bad values together, in line order",
			src: `listen: 127.0.0.1:8080
contact: not an address
store:
  sync: true
repositories:
  - name: Tsukuba
    base_url: http://a.example/oai
    bar: x
`,
			want: `line 2: contact: must be an email address or an http(s) URL (got "not an address")` + "\n" +
				`line 4: unknown key "sync"` + "\n" +
				`line 6: repositories[0].name: must match [a-z0-9-]+ (got "Tsukuba")` + "\n" +
				`line 8: unknown key "bar"`,
		},
		{
			name: "a value of the wrong type is not validated as well",
			src: `store:
  gc_interval: 30
resourcesync:
  page_limit: 1.5e5
repositories:
  - name: a
    base_url: http://a.example/oai
    sets: [a, [b]]
  - plain
  - name: b
    base_url: ftp://b
listen: [a]
`,
			want: `line 2: gc_interval: bare number 30 is ambiguous; add a unit (e.g. 30s, 5m, 1h)` + "\n" +
				`line 4: page_limit: expected an integer, got "1.5e5"` + "\n" +
				`line 8: sets[1]: expected a string, got a list` + "\n" +
				`line 9: repositories[1]: expected a mapping, got "plain"` + "\n" +
				`line 11: repositories[2].base_url: must be an absolute http or https URL (got "ftp://b")` + "\n" +
				`line 12: listen: expected a string, got a list`,
		},
		{
			name: "no repositories list, and a bad value",
			src:  "repositories: {name: a}\nlog_level: loud\n",
			want: `line 1: repositories: expected a list, got a mapping` + "\n" +
				`line 2: log_level: must be one of debug, info, warn, error (got "loud")`,
		},
		{
			name: "misspelt key: the missing one is reported too",
			src:  "repositories:\n  - name: a\n    baseurl: http://a.example/oai\n",
			want: `line 2: repositories[0].base_url: must not be empty` + "\n" +
				`line 3: unknown key "baseurl"`,
		},
		{
			name: "broken merge: what it should have given is not reported",
			src:  "repositories:\n  - <<: 3\n    name: B\n",
			want: `line 2: "<<" merge needs a mapping or a list of mappings, got "3"` + "\n" +
				`line 3: repositories[0].name: must match [a-z0-9-]+ (got "B")`,
		},
		{
			name: "duplicate key: the first definition is validated",
			src:  "data_dir: \"\"\ndata_dir: b\n" + minimal,
			want: `line 1: data_dir: must not be empty` + "\n" +
				`line 2: duplicate key "data_dir" (first defined at line 1)`,
		},
		{
			name: "a problem between two keys has the line of the one written",
			src:  "resourcesync:\n  changelist_period: 5000h\n" + minimal,
			want: `line 2: resourcesync.retention: must be 0 (keep forever) or at least changelist_period 5000h (got 4320h)`,
		},
		{
			name: "absent keys of a merged repository",
			src: `repositories:
  - &r
    name: a
    base_url: ftp://a
  - <<: *r
    name: b
`,
			want: `line 4: repositories[0].base_url: must be an absolute http or https URL (got "ftp://a")` + "\n" +
				`line 4: repositories[1].base_url: must be an absolute http or https URL (got "ftp://a")`,
		},
		{
			name: "alias bomb and an unknown key",
			src:  "foo: 1\n" + aliasBomb(),
			want: `line 1: unknown key "foo"` + "\n" + "document contains excessive aliasing",
		},
		{
			name: "repository fields",
			src: `repositories:
  - name: Tsukuba
    base_url: ftp://x
    metadata_prefixes: [oai_dc, "", oai_dc, "oai dc"]
    sets: ["math", "a::b", "math", ":x", "ok:fine"]
    schedule: every hour
    reconcile: sometimes
  - name: x
    base_url: http://x.example/oai#frag
    metadata_prefixes: []
  - name: x
    base_url: ""
  - base_url: http://y.example/oai
    schedule: "TZ=UTC"
  - name: ` + strings.Repeat("a", 65) + `
    base_url: http://z.example/oai
`,
			want: `line 2: repositories[0].name: must match [a-z0-9-]+ (got "Tsukuba")` + "\n" +
				`line 3: repositories[0].base_url: must be an absolute http or https URL (got "ftp://x")` + "\n" +
				`line 4: repositories[0].metadata_prefixes[1]: must be non-empty and use only [A-Za-z0-9_.!~*'()-] (got "")` + "\n" +
				`line 4: repositories[0].metadata_prefixes[2]: duplicate of repositories[0].metadata_prefixes[0] "oai_dc"` + "\n" +
				`line 4: repositories[0].metadata_prefixes[3]: must be non-empty and use only [A-Za-z0-9_.!~*'()-] (got "oai dc")` + "\n" +
				`line 5: repositories[0].sets[1]: invalid setSpec "a::b": must be ':'-separated non-empty tokens of [A-Za-z0-9_.!~*'()-]` + "\n" +
				`line 5: repositories[0].sets[2]: duplicate of repositories[0].sets[0] "math"` + "\n" +
				`line 5: repositories[0].sets[3]: invalid setSpec ":x": must be ':'-separated non-empty tokens of [A-Za-z0-9_.!~*'()-]` + "\n" +
				`line 6: repositories[0].schedule: invalid cron expression "every hour": expected exactly 5 fields, found 2: [every hour]` + "\n" +
				`line 7: repositories[0].reconcile: invalid cron expression "sometimes" (or "off" to disable): expected exactly 5 fields, found 1: [sometimes]` + "\n" +
				`line 9: repositories[1].base_url: must not have a fragment (got "http://x.example/oai#frag")` + "\n" +
				`line 10: repositories[1].metadata_prefixes: must not be empty (omit the key for the default [oai_dc])` + "\n" +
				`line 11: repositories[2].name: duplicate of repositories[1].name "x"` + "\n" +
				`line 12: repositories[2].base_url: must not be empty` + "\n" +
				`line 13: repositories[3].name: must not be empty` + "\n" +
				`line 14: repositories[3].schedule: invalid cron expression "TZ=UTC": missing schedule after the time zone` + "\n" +
				`line 15: repositories[4].name: must be at most 64 characters (got 65)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseAndValidate(tt.src)
			if err == nil {
				t.Fatalf("no error, want:\n%s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	t.Run("from a document", func(t *testing.T) {
		_, err := ParseAndValidate(strings.NewReader("foo: 1\nrepositories:\n  - name: X\n    sets: [[a]]\n"))
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("errors.As(%v, *Problems) = false", err)
		}
		want := Problems{
			{Line: 1, Message: `unknown key "foo"`},
			{Line: 3, Path: "repositories[0].name", Message: `must match [a-z0-9-]+ (got "X")`},
			{Line: 3, Path: "repositories[0].base_url", Message: "must not be empty"},
			{Line: 4, Path: "sets[0]", Message: "expected a string, got a list"},
		}
		if !reflect.DeepEqual(ps, want) {
			t.Errorf("got  %#v\nwant %#v", ps, want)
		}
		if !errors.Is(err, want[1]) || len(ps.Unwrap()) != len(want) {
			t.Errorf("Unwrap() = %v", ps.Unwrap())
		}
	})
	t.Run("from a Config built in code", func(t *testing.T) {
		c := Default()
		c.Repositories = []Repository{{Name: "x", BaseURL: "ftp://x"}}
		c.SetDefaults()
		ps, ok := errors.AsType[Problems](c.Validate())
		want := Problems{{Path: "repositories[0].base_url", Message: `must be an absolute http or https URL (got "ftp://x")`}}
		if !ok || !reflect.DeepEqual(ps, want) {
			t.Errorf("got %#v, want %#v", ps, want)
		}
		c.Repositories[0].BaseURL = "http://x.example/oai"
		if err := c.Validate(); err != nil {
			t.Errorf("Validate() = %#v, want nil", err)
		}
	})
	t.Run("from Load", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte("listen: x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		ps, ok := errors.AsType[Problems](err)
		want := Problems{
			{File: path, Line: 1, Path: "listen", Message: `must be host:port (got "x")`},
			{File: path, Path: "repositories", Message: "at least one repository is required"},
		}
		if !ok || !reflect.DeepEqual(ps, want) {
			t.Errorf("got %#v, want %#v", ps, want)
		}
	})
}

// aliasBomb is a "billion laughs" document made of merge keys: 10^8
// mappings once expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("repositories:\n  - &r0 {name: a, base_url: \"http://a/\", delay: 1s}\n")
	for i := 1; i < 9; i++ {
		refs := strings.Repeat(fmt.Sprintf("*r%d, ", i-1), 10)
		fmt.Fprintf(&b, "  - &r%d {<<: [%s]}\n", i, strings.TrimSuffix(refs, ", "))
	}
	return b.String()
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{
			name: "parse and validation errors in one pass",
			path: write("parse.yaml", "listen: x\nfoo: 1\nbar: 2\n"),
			want: "PATH: line 1: listen: must be host:port (got \"x\")\n" +
				"PATH: line 2: unknown key \"foo\"\n" +
				"PATH: line 3: unknown key \"bar\"\n" +
				"PATH: repositories: at least one repository is required",
		},
		{
			name: "validation errors",
			path: write("validate.yaml", "repositories:\n  - name: x\n    base_url: http://x.example/oai\n  - name: x\n    base_url: http://x.example/oai\n"),
			want: `PATH: line 4: repositories[1].name: duplicate of repositories[0].name "x"`,
		},
		{
			name: "empty",
			path: write("empty.yaml", ""),
			want: "PATH: config is empty",
		},
		{
			name: "missing file",
			path: filepath.Join(dir, "missing.yaml"),
			want: "PATH: no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path)
			want := strings.ReplaceAll(tt.want, "PATH", tt.path)
			if err == nil || err.Error() != want {
				t.Errorf("error:\n%v\nwant:\n%s", err, want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: errors.Is(%v, fs.ErrNotExist) = false", err)
	}
}

func TestExampleLoads(t *testing.T) {
	c, err := Load("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Resolved(Repository{}), builtinSettings(); !reflect.DeepEqual(got, want) {
		t.Errorf("example.yaml defaults: differ from the built-in ones:\ngot  %+v\nwant %+v", got, want)
	}
	d := Default()
	d.SetDefaults()
	if c.Listen != d.Listen || c.BaseURL != d.BaseURL || c.DataDir != d.DataDir ||
		c.Contact != "" || c.LogLevel != d.LogLevel || c.Store.Sync() || c.Store.SyncInterval != d.Store.SyncInterval ||
		c.Store.GCInterval != d.Store.GCInterval || c.ResourceSync != d.ResourceSync || c.Server != d.Server || c.Notification.On() != d.Notification.On() ||
		c.Notification.MaxEntries != d.Notification.MaxEntries || c.Notification.HubURL != "" {
		t.Errorf("example.yaml top-level values differ from the built-in defaults:\n%+v\n%+v", c, d)
	}
	full := c.Repositories[len(c.Repositories)-1]
	if !slices.Equal(full.MetadataPrefixes, []string{DefaultMetadataPrefix}) ||
		full.Schedule != DefaultSchedule || full.Reconcile != DefaultReconcile || len(full.Sets) != 0 {
		t.Errorf("example.yaml repository keys differ from the built-in defaults: %+v", full)
	}
}

func TestExampleMentionsEveryKey(t *testing.T) {
	example, err := os.ReadFile("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var collect func(reflect.Type)
	collect = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Duration]() {
			return
		}
		for name, ft := range yamlFields(t) {
			keys[name] = true
			collect(ft)
		}
	}
	collect(reflect.TypeFor[Config]())
	if len(keys) < 25 {
		t.Fatalf("found only %d keys; yamlFields is broken", len(keys))
	}
	for key := range keys {
		re := regexp.MustCompile(`(?m)^\s*(#\s*)?(- )?` + regexp.QuoteMeta(key) + `:`)
		if !re.Match(example) {
			t.Errorf("example.yaml does not document key %q", key)
		}
	}
}

// TestPublicURL: what rsbridge publishes and logs of a base_url has no
// userinfo and no secret query parameters (issue 21, item 1).
func TestPublicURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://svcuser:PASS@host.example/oai", "http://host.example/oai"},
		{"https://u@host.example:8443/oai?set=a", "https://host.example:8443/oai?set=a"},
		{"http://host.example/oai?token=SECRET&x=1", "http://host.example/oai?x=1"},
		{"http://host.example/oai?TOKEN=SECRET", "http://host.example/oai"},
		{"http://host.example/oai?apikey=1&api_key=2&verb=x", "http://host.example/oai?verb=x"},
		{"http://host.example/oai", "http://host.example/oai"},
		{"http://u:p@host ex/%zz", "http://host ex/%zz"},
	} {
		if got := PublicURL(c.in, DefaultSecretParams()); got != c.want {
			t.Errorf("PublicURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	cfg, err := ParseAndValidate(strings.NewReader("repositories:\n  - name: a\n    base_url: http://u:PASS@a.example/oai?sid=S1&token=T\n    secret_params: [sid]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.PublicBaseURL(cfg.Repositories[0]); got != "http://a.example/oai?token=T" {
		t.Errorf("with secret_params [sid]: %q", got)
	}
	_, err = ParseAndValidate(strings.NewReader("repositories:\n  - name: a\n    base_url: http://u:PASS@a.example/oai#frag\n"))
	if err == nil || strings.Contains(err.Error(), "PASS") {
		t.Errorf("a problem with a base_url must not print its password: %v", err)
	}
}

// TestScheduleFloor: schedules that would harvest back to back are refused
// (issue 21, item 6: "@every 0s" and "@every -1h" passed check-config).
func TestScheduleFloor(t *testing.T) {
	for _, c := range []struct {
		schedule, reconcile string
		ok                  bool
	}{
		{"@every 0s", "@weekly", false},
		{"@every -1h", "@weekly", false},
		{"@every 30s", "@weekly", false},
		{"@every 1m", "@weekly", true},
		{"* * * * *", "off", true},
		{"@hourly", "@every 1s", false},
		{"TZ=Asia/Tokyo 0 3 * * *", "@daily", true},
	} {
		y := fmt.Sprintf("repositories:\n  - name: a\n    base_url: http://a.example/oai\n    schedule: %q\n    reconcile: %q\n", c.schedule, c.reconcile)
		_, err := ParseAndValidate(strings.NewReader(y))
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "at least 1m") {
			t.Errorf("schedule %q reconcile %q: %v", c.schedule, c.reconcile, err)
		}
	}
}

// TestDerive: derive appends the derived formats to metadata_prefixes and
// keeps them out of Harvested; defaults apply only where they can; a
// repository's own impossible derive is an error naming the key.
func TestDerive(t *testing.T) {
	c, err := ParseAndValidate(strings.NewReader(`defaults:
  derive: {jpcoar_2.0: junii2}
repositories:
  - name: a
    base_url: http://a.example/oai
    metadata_prefixes: [oai_dc, junii2]
  - name: b
    base_url: http://b.example/oai
    metadata_prefixes: [junii2, jpcoar_2.0]
  - name: c
    base_url: http://c.example/oai
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b, cc := c.Repositories[0], c.Repositories[1], c.Repositories[2]
	if fmt.Sprint(a.MetadataPrefixes, a.Harvested()) != "[oai_dc junii2 jpcoar_2.0] [oai_dc junii2]" {
		t.Errorf("a: prefixes %v, harvested %v", a.MetadataPrefixes, a.Harvested())
	}
	if from, ok := a.DerivedFrom("jpcoar_2.0"); !ok || from != "junii2" {
		t.Errorf("a: jpcoar_2.0 derived from %q, %v", from, ok)
	}
	if _, ok := b.DerivedFrom("jpcoar_2.0"); ok || len(b.Harvested()) != 2 {
		t.Errorf("b offers jpcoar_2.0 itself and must not derive it: %v", b.Harvested())
	}
	if fmt.Sprint(cc.MetadataPrefixes) != "[oai_dc]" {
		t.Errorf("c has no junii2: %v", cc.MetadataPrefixes)
	}
	c.SetDefaults() // twice changes nothing
	if fmt.Sprint(c.Repositories[0].MetadataPrefixes) != "[oai_dc junii2 jpcoar_2.0]" {
		t.Errorf("SetDefaults again: %v", c.Repositories[0].MetadataPrefixes)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"    metadata_prefixes: [oai_dc]\n    derive: {jpcoar_2.0: junii2}\n", "repositories[0].derive.jpcoar_2.0: derives from junii2, which is not in metadata_prefixes"},
		{"    metadata_prefixes: [junii2, jpcoar_2.0]\n    derive: {jpcoar_2.0: junii2}\n", "repositories[0].derive.jpcoar_2.0: jpcoar_2.0 is harvested"},
		{"    metadata_prefixes: [oai_dc]\n    derive: {jpcoar_2.0: oai_dc}\n", "repositories[0].derive.jpcoar_2.0: rsbridge cannot derive jpcoar_2.0 from oai_dc"},
	} {
		_, err := ParseAndValidate(strings.NewReader("repositories:\n  - name: a\n    base_url: http://a.example/oai\n" + bad.yaml))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

// TestPolitenessHost: host names under a host group count as the group, the
// first matching entry wins, and the others count as themselves.
func TestPolitenessHost(t *testing.T) {
	s := Scheduler{HostGroups: []string{"*.repo.nii.ac.jp", ".Example.ORG", "nii.ac.jp", "192.0.2.7"}}
	for host, want := range map[string]string{
		"kyoto-u.repo.nii.ac.jp":  "repo.nii.ac.jp",
		"a.b.repo.nii.ac.jp":      "repo.nii.ac.jp",
		"repo.nii.ac.jp":          "repo.nii.ac.jp",
		"irdb.nii.ac.jp":          "nii.ac.jp",
		"REPO.Example.org.":       "example.org",
		"notexample.org":          "notexample.org",
		"example.org.evil.test":   "example.org.evil.test",
		"192.0.2.7":               "192.0.2.7",
		"dspace.univ.example.edu": "dspace.univ.example.edu",
		"":                        "",
	} {
		if got := s.PolitenessHost(host); got != want {
			t.Errorf("PolitenessHost(%q) = %q, want %q", host, got, want)
		}
	}
}
