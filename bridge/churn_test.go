package bridge

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/crosswalk"
	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/bridge/harvest"
	"github.com/rsbridge/rsbridge/bridge/notify"
	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/bridge/websub"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// The churn test is the promise ResourceSync exists for: a destination that
// follows the source while it harvests never misses a change. An in-process
// upstream adds, updates, deletes, revives and moves records between sets all
// the time and serves its pages slowly (so records are decoded long before
// their page commits); rsbridge harvests continuously with a short Change
// List period; destinations take a baseline from the Resource List (Index)
// reading pages slowly, then follow the Change List Index, reading each
// closed list once and only the open one again. At the end each must equal a
// fresh Resource List and the upstream's truth, for the all-records set and
// every OAI set. A dump destination does the same from the Resource Dump and
// the Change Dumps.
//
//	go test -run Churn ./bridge/                         # the short run (a few seconds)
//	go test -run Churn ./bridge/ -churn.seconds 600      # ten minutes of churn
//	go test -run Churn ./bridge/ -churn.seed 42          # replay a seed
var (
	churnSeconds = flag.Float64("churn.seconds", 0, "seconds of churn for TestChurn (0: the short run)")
	churnSeed    = flag.Uint64("churn.seed", 0, "seed for TestChurn (0: a random one, printed)")
)

func TestChurn(t *testing.T) {
	dur := 3 * time.Second
	if *churnSeconds > 0 {
		dur = time.Duration(*churnSeconds * float64(time.Second))
	}
	seed := *churnSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("churn: %s, seed %d (replay with -churn.seed %d)", dur, seed, seed)
	defer func() {
		if t.Failed() {
			t.Logf("churn FAILED with seed %d: replay with go test -run Churn ./bridge/ -churn.seed %d", seed, seed)
		}
	}()
	runChurn(t, churnParams{dur: dur, seed: seed, period: 300 * time.Millisecond, pageLimit: 40, listLimit: 30, records: 200})
}

// TestChurnDerived is TestChurn for a junii2 repository with jpcoar_2.0
// derived: destinations follow the derived sets while harvests and
// derivations run, and end equal to the upstream converted.
func TestChurnDerived(t *testing.T) {
	seed := *churnSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -run ChurnDerived -churn.seed %d)", seed, seed)
	runChurn(t, churnParams{dur: 3 * time.Second, seed: seed, period: 300 * time.Millisecond, pageLimit: 40, listLimit: 30, records: 200, derive: true})
}

type churnParams struct {
	dur       time.Duration
	seed      uint64
	period    time.Duration // Change List period
	pageLimit int
	listLimit int
	records   int
	// derive harvests junii2 and derives jpcoar_2.0 from it: destinations
	// follow both formats while harvests and derivations run.
	derive bool
}

// lockedRand is a seeded source shared by goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) intN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) dur(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(l.intN(int(hi-lo)+1))
}

// slowUpstream sends every response in chunks with pauses, so the harvester
// decodes and applies a page's records well before the page commits.
type slowUpstream struct {
	h   http.Handler
	rnd *lockedRand
}

func (s *slowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	body := rec.Body.Bytes()
	for len(body) > 0 {
		n := min(len(body), 6<<10)
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		body = body[n:]
		select {
		case <-time.After(s.rnd.dur(0, 25*time.Millisecond)):
		case <-r.Context().Done():
			return
		}
	}
}

func runChurn(t *testing.T, p churnParams) {
	rnd := &lockedRand{r: rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15))}
	formats, derive := []string{"oai_dc"}, ""
	if p.derive {
		formats, derive = []string{"junii2"}, "    derive: {jpcoar_2.0: junii2}\n"
	}
	up := oaiserver.New(oaiserver.Options{Records: p.records, PageSize: 20, SetCount: 3, RecordBytes: 256, Prefixes: formats,
		Start: time.Now().Add(-48 * time.Hour).Truncate(time.Second), Step: time.Second})
	upSrv := httptest.NewServer(&slowUpstream{h: up, rnd: rnd})
	defer upSrv.Close()
	var handler http.Handler
	var hmu sync.RWMutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hmu.RLock()
		h := handler
		hmu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	y := fmt.Sprintf("base_url: %s\ndata_dir: %s\ndefaults:\n  delay: 0s\nresourcesync:\n  page_limit: %d\n  changelist_period: 1m\n  dump_sets: all-records\n  dump_interval: 1h\nrepositories:\n  - name: demo\n    base_url: %s/oai\n    metadata_prefixes: [%s]\n%s",
		srv.URL, t.TempDir(), p.pageLimit, upSrv.URL, formats[0], derive)
	cfg, err := config.Parse(strings.NewReader(y))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatal(err)
	}
	// The configuration's floor for the period is a minute; the test's
	// lists close every few hundred milliseconds.
	cfg.ResourceSync.ChangeListPeriod = p.period
	db, err := store.Open(store.Options{InMemory: true, ChangeListLimit: p.listLimit, ChangeListPeriod: p.period})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dumpDir := t.TempDir()
	// Small notifications, so a burst of changes is split across several.
	cfg.Notification.MaxEntries = 7
	notifier, err := notify.New(source.New(cfg, db), db, notify.Options{HubOptions: func(o *websub.Options) { o.AllowPrivateCallbacks = true }})
	if err != nil {
		t.Fatal(err)
	}
	server := mustServer(t, cfg, db, ServerOptions{DumpDir: dumpDir, CacheDir: t.TempDir(), Notifier: notifier})
	hmu.Lock()
	handler = server.Handler()
	hmu.Unlock()
	h, err := harvest.New(cfg, cfg.Repositories[0], db, harvest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dumper := dumps.New(source.New(cfg, db), db, dumps.Options{Dir: dumpDir, Tick: 50 * time.Millisecond})

	// The first harvest, so the source has sets and records.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := h.Harvest(ctx, harvest.HarvestOptions{}); err != nil {
		t.Fatal(err)
	}
	var bg sync.WaitGroup
	defer bg.Wait()
	defer cancel()
	dumpCtx, stopDumper := context.WithCancel(ctx)
	defer stopDumper()
	bg.Go(func() { dumper.Run(dumpCtx) })
	bg.Go(func() { notifier.Run(dumpCtx) })
	// Push destinations: subscribers to the channels of the all-records set
	// and of a set, from before the churn.
	pushers := subscribeChurn(t, srv.URL, notifier)

	// Harvest back to back until told to stop.
	harvestCtx, stopHarvest := context.WithCancel(ctx)
	var harvests sync.WaitGroup
	harvests.Go(func() {
		for harvestCtx.Err() == nil {
			if _, err := h.Harvest(harvestCtx, harvest.HarvestOptions{}); err != nil && harvestCtx.Err() == nil {
				t.Errorf("harvest: %v", err)
				return
			}
			dumper.Changed()
			notifier.Changed()
			select {
			case <-harvestCtx.Done():
			case <-time.After(rnd.dur(0, 40*time.Millisecond)):
			}
		}
	})
	defer stopHarvest()

	// Churn the upstream.
	churnCtx, stopChurn := context.WithCancel(ctx)
	var churning sync.WaitGroup
	var ops [6]int
	churning.Go(func() {
		sets := [][]string{nil, {"s0"}, {"s0:sub"}, {"s1"}, {"s2"}, {"s1", "s2"}, {"s0:sub", "s2"}}
		for churnCtx.Err() == nil {
			now := time.Now()
			n := up.Len()
			i := rnd.intN(n)
			switch op := rnd.intN(100); {
			case op < 15:
				up.Add(now)
				ops[0]++
			case op < 50:
				up.Update(i, now)
				ops[1]++
			case op < 65:
				up.Delete(i, now)
				ops[2]++
			case op < 80:
				up.Restore(i, now)
				ops[3]++
			case op < 97:
				up.SetSets(i, sets[rnd.intN(len(sets))], now, true)
				ops[4]++
			default:
				// A quiet spell longer than a period: empty open lists.
				ops[5]++
				select {
				case <-churnCtx.Done():
				case <-time.After(p.period * 2):
				}
			}
			select {
			case <-churnCtx.Done():
			case <-time.After(rnd.dur(5*time.Millisecond, 40*time.Millisecond)):
			}
		}
	})

	// Destinations: a generation starts at once and more start while the
	// churn goes on, each taking its baseline at a different moment.
	followCtx, finish := context.WithCancel(context.Background())
	defer finish()
	var mu sync.Mutex
	var followers []*follower
	var dumpFollowers []*dumpFollower
	var running sync.WaitGroup
	spawn := func() {
		caps := discoverCaps(t, srv.URL)
		for _, capURL := range caps {
			f := &follower{hc: &http.Client{}, capURL: capURL, rnd: rnd, done: map[string]bool{}}
			mu.Lock()
			followers = append(followers, f)
			mu.Unlock()
			running.Go(func() { f.err = f.run(followCtx) })
		}
		all := caps[0]
		df := &dumpFollower{hc: &http.Client{}, capURL: all, done: map[string]bool{}}
		mu.Lock()
		dumpFollowers = append(dumpFollowers, df)
		mu.Unlock()
		running.Go(func() { df.err = df.baseline(followCtx) })
	}
	spawnEvery := max(time.Second, p.dur/10)
	deadline := time.Now().Add(p.dur)
	time.Sleep(100 * time.Millisecond)
	for spawn(); time.Until(deadline) > spawnEvery/2; {
		time.Sleep(min(spawnEvery, time.Until(deadline)))
		if time.Until(deadline) > spawnEvery/2 {
			spawn()
		}
	}
	time.Sleep(max(time.Until(deadline), 0))
	stopChurn()
	churning.Wait()
	t.Logf("churn: %d added, %d updated, %d deleted, %d revived, %d moved, %d quiet spells; %d records upstream",
		ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], up.Len())

	// Let the harvest take the last changes, then stop it and harvest once
	// more at rest (the last second's changes need a granule's overlap).
	time.Sleep(1100 * time.Millisecond)
	stopHarvest()
	harvests.Wait()
	if _, err := h.Harvest(ctx, harvest.HarvestOptions{}); err != nil {
		t.Fatal(err)
	}
	dumper.Changed()
	notifier.Changed()
	finish()
	running.Wait()
	for _, ps := range pushers {
		ps.check(t, notifier)
	}

	// truth is what the upstream says a set of a format holds: its live
	// records' MD5s (derived records: their conversion's).
	truth := func(prefix, set string) map[string]string {
		out := map[string]string{}
		for i := 0; i < up.Len(); i++ {
			it, ok := up.Item(i, formats[0])
			if !ok || it.Deleted {
				continue
			}
			if set != store.AllSet && !slices.Contains(store.ExpandSets(it.Sets), set) {
				continue
			}
			meta := it.Metadata
			if prefix != formats[0] {
				res, err := crosswalk.Junii2ToJPCOAR2(meta)
				if err != nil || res.Record == nil {
					continue // not derivable: not published in the derived format
				}
				meta = res.Record
			}
			sum := md5.Sum(meta)
			out[source.ResourceURL(srv.URL, "demo", prefix, it.Identifier)] = hex.EncodeToString(sum[:])
		}
		return out
	}
	// setOf is the format and set a Capability List is of.
	setOf := func(capURL string) (string, string) {
		prefix, rest, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(capURL, srv.URL+"/demo/"), "/capabilitylist.xml"), "/")
		if rest == "all" {
			return prefix, store.AllSet
		}
		s, _ := strings.CutPrefix(rest, "set/")
		return prefix, strings.ReplaceAll(s, "%3A", ":")
	}
	for _, f := range followers {
		if f.err != nil {
			t.Errorf("destination of %s (baseline at %s): %v", f.capURL, f.at.Format(time.RFC3339Nano), f.err)
			continue
		}
		want := truth(setOf(f.capURL))
		if len(want) == 0 && strings.HasSuffix(f.capURL, "/all/capabilitylist.xml") {
			t.Errorf("%s: the upstream has no record for it", f.capURL)
		}
		fresh, _, err := readResourceList(context.Background(), f.hc, f.rl, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffCopies(f.state, fresh); d != "" {
			t.Errorf("destination of %s (baseline at %s, %d lists read) differs from a fresh Resource List:\n%s", f.capURL, f.at.Format(time.RFC3339Nano), f.lists, d)
		}
		if d := diffCopies(f.state, want); d != "" {
			t.Errorf("destination of %s (baseline at %s) differs from the upstream:\n%s", f.capURL, f.at.Format(time.RFC3339Nano), d)
		}
	}

	// The dump destinations can finish only when the last change is in a
	// closed list with a package: wait for that.
	for _, df := range dumpFollowers {
		want := truth(setOf(df.capURL))
		if df.err != nil {
			t.Errorf("dump destination (baseline at %s): %v", df.at.Format(time.RFC3339Nano), df.err)
			continue
		}
		var d string
		for start := time.Now(); ; {
			if err := df.follow(context.Background()); err != nil {
				t.Errorf("dump destination: %v", err)
				break
			}
			if d = diffCopies(df.state, want); d == "" {
				break
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("dump destination (baseline at %s, %d packages) differs from the upstream 20 s after the churn:\n%s", df.at.Format(time.RFC3339Nano), len(df.done), d)
				break
			}
			dumper.Changed()
			time.Sleep(p.period / 2)
		}
	}
	// The documents as the churn left them validate against the XSDs: the
	// Source Description, every Capability List and what it names, each
	// index with its pages (the last three Change Lists).
	docs := map[string][]byte{}
	var collect func(u string, depth int)
	collect = func(u string, depth int) {
		if _, ok := docs[u]; ok || depth > 3 || strings.Contains(u, "/resource/") || strings.Contains(u, "/dump/") || strings.HasSuffix(u, ".html") {
			return
		}
		b, err := churnGet(context.Background(), http.DefaultClient, u)
		if err != nil {
			t.Errorf("validation walk: %v", err)
			return
		}
		docs[u] = b
		doc, err := rsync.Parse(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			return
		}
		for i, e := range doc.Entries {
			if !strings.HasPrefix(e.Loc, srv.URL) || doc.Index && doc.MD.Capability == rsync.ChangeList && i < len(doc.Entries)-3 {
				continue
			}
			collect(e.Loc, depth+1)
		}
	}
	collect(srv.URL+"/.well-known/resourcesync", 0)
	validateDocs(t, docs)
	if !t.Failed() {
		t.Logf("churn: %d destinations and %d dump destinations agree with the upstream (%d records upstream); %d documents validated", len(followers), len(dumpFollowers), up.Len(), len(docs))
	}
}

// discoverCaps reads the Source Description: the all-records Capability
// List first, then the sets'.
func discoverCaps(t *testing.T, base string) []string {
	t.Helper()
	sd, err := getDoc(context.Background(), http.DefaultClient, base+"/.well-known/resourcesync")
	if err != nil {
		t.Fatal(err)
	}
	var caps []string
	for _, e := range sd.Entries {
		caps = append(caps, e.Loc)
	}
	sort.Slice(caps, func(i, j int) bool {
		ai, aj := strings.HasSuffix(caps[i], "/all/capabilitylist.xml"), strings.HasSuffix(caps[j], "/all/capabilitylist.xml")
		return ai && !aj || ai == aj && caps[i] < caps[j]
	})
	if len(caps) < 2 {
		t.Fatalf("source description lists %d capability lists", len(caps))
	}
	return caps
}

func getDoc(ctx context.Context, hc *http.Client, u string) (*rsync.Document, error) {
	b, err := churnGet(ctx, hc, u)
	if err != nil {
		return nil, err
	}
	doc, err := rsync.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return doc, nil
}

func churnGet(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	// Like a real destination: a 503 (the server is producing as many large
	// documents as it takes at once) is retried after Retry-After, here
	// capped at 2 s; anything else that is not 200 is an error.
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusServiceUnavailable && attempt < 60 {
			wait := 2 * time.Second
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
				wait = min(time.Duration(s)*time.Second, wait)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, source.Clip(string(b), 300))
		}
		return b, nil
	}
}

// readResourceList reads a Resource List or a Resource List Index with its
// pages (pausing between pages when pause is set) and returns loc -> md5
// and the time its snapshot guarantees.
func readResourceList(ctx context.Context, hc *http.Client, u string, pause func()) (map[string]string, time.Time, error) {
	rl, err := getDoc(ctx, hc, u)
	if err != nil {
		return nil, time.Time{}, err
	}
	if rl.MD.Capability != rsync.ResourceList || rl.MD.At.IsZero() {
		return nil, time.Time{}, fmt.Errorf("%s: not a resource list: %+v", u, rl.MD)
	}
	out := map[string]string{}
	add := func(doc *rsync.Document, from string) error {
		for _, e := range doc.Entries {
			if _, dup := out[e.Loc]; dup {
				return fmt.Errorf("%s lists %s again", from, e.Loc)
			}
			out[e.Loc] = rsync.HashValue(e.MD.Hash, "md5")
		}
		return nil
	}
	if !rl.Index {
		return out, rl.MD.At, add(rl, u)
	}
	for _, e := range rl.Entries {
		if pause != nil {
			pause()
		}
		page, err := getDoc(ctx, hc, e.Loc)
		if err != nil {
			return nil, time.Time{}, err
		}
		// A page's at may be older than the index's: a page rendered
		// earlier from the same store version is served from the cache.
		if page.Index || page.MD.At.IsZero() {
			return nil, time.Time{}, fmt.Errorf("page %s: %+v", e.Loc, page.MD)
		}
		if err := add(page, e.Loc); err != nil {
			return nil, time.Time{}, err
		}
	}
	return out, rl.MD.At, nil
}

func diffCopies(got, want map[string]string) string {
	var d []string
	for loc, h := range want {
		switch g, ok := got[loc]; {
		case !ok:
			d = append(d, "missing "+loc)
		case g != h:
			d = append(d, fmt.Sprintf("stale %s: md5 %s, want %s", loc, g, h))
		}
	}
	for loc := range got {
		if _, ok := want[loc]; !ok {
			d = append(d, "extra "+loc)
		}
	}
	sort.Strings(d)
	if len(d) > 12 {
		d = append(d[:12], fmt.Sprintf("... and %d more", len(d)-12))
	}
	return strings.Join(d, "\n")
}

// follower is a destination of one resource set driven by its documents only.
type follower struct {
	hc     *http.Client
	capURL string
	rnd    *lockedRand
	rl     string
	at     time.Time         // the baseline's at: changes from here on are applied
	state  map[string]string // loc -> md5
	done   map[string]bool   // closed Change Lists applied
	lists  int
	err    error
}

func (f *follower) run(ctx context.Context) error {
	cl, err := getDoc(context.Background(), f.hc, f.capURL)
	if err != nil {
		return err
	}
	f.rl = capability(cl, rsync.ResourceList)
	cli := capability(cl, rsync.ChangeList)
	if f.state, f.at, err = readResourceList(context.Background(), f.hc, f.rl, func() { time.Sleep(f.rnd.dur(20*time.Millisecond, 120*time.Millisecond)) }); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	for {
		finished := ctx.Err() != nil
		if err := f.poll(cli); err != nil {
			return err
		}
		if finished {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.rnd.dur(20*time.Millisecond, 150*time.Millisecond)):
		}
	}
}

// poll reads the Change List Index, applies every closed list not applied
// yet once, and the open list again.
func (f *follower) poll(cliURL string) error {
	cli, err := getDoc(context.Background(), f.hc, cliURL)
	if err != nil {
		return err
	}
	var prevUntil time.Time
	for i, e := range cli.Entries {
		open := e.MD.Until.IsZero()
		if open != (i == len(cli.Entries)-1) {
			return fmt.Errorf("%s: entry %d of %d open=%v: only the last list may be open", cliURL, i, len(cli.Entries), open)
		}
		if i > 0 && !e.MD.From.Equal(prevUntil) {
			return fmt.Errorf("%s: %s starts at %s, the list before ends at %s", cliURL, e.Loc, e.MD.From, prevUntil)
		}
		prevUntil = e.MD.Until
		if f.done[e.Loc] || !open && e.MD.Until.Before(f.at) {
			continue
		}
		l, err := getDoc(context.Background(), f.hc, e.Loc)
		if err != nil {
			return fmt.Errorf("change list from the index: %w", err)
		}
		f.lists++
		// A list open in the index may have closed since; nothing else
		// about it may change.
		if !l.MD.From.Equal(e.MD.From) || !open && !l.MD.Until.Equal(e.MD.Until) {
			return fmt.Errorf("%s says from %s until %s, the index said %s..%s", e.Loc, l.MD.From, l.MD.Until, e.MD.From, e.MD.Until)
		}
		open = l.MD.Until.IsZero()
		for _, c := range l.Entries {
			if c.MD.DateTime.Before(f.at) {
				continue
			}
			if c.MD.Change == "deleted" {
				delete(f.state, c.Loc)
			} else {
				f.state[c.Loc] = rsync.HashValue(c.MD.Hash, "md5")
			}
		}
		if !open {
			f.done[e.Loc] = true
		}
	}
	return nil
}

// dumpFollower is a destination that starts from the Resource Dump and
// follows the Change Dump.
type dumpFollower struct {
	hc     *http.Client
	capURL string
	at     time.Time
	state  map[string]string
	done   map[string]bool
	err    error
}

func (d *dumpFollower) baseline(ctx context.Context) error {
	cl, err := getDoc(ctx, d.hc, d.capURL)
	if err != nil {
		return err
	}
	rdURL := capability(cl, rsync.ResourceDump)
	for start := time.Now(); rdURL == ""; rdURL = capability(cl, rsync.ResourceDump) {
		// The dumper builds the first Resource Dump soon after it starts.
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("%s lists no resource dump after 30 s", d.capURL)
		}
		time.Sleep(50 * time.Millisecond)
		if cl, err = getDoc(ctx, d.hc, d.capURL); err != nil {
			return err
		}
	}
	rd, err := getDoc(ctx, d.hc, rdURL)
	if err != nil {
		return err
	}
	d.at, d.state = rd.MD.At, map[string]string{}
	for _, e := range rd.Entries {
		err := d.pkg(ctx, e.Loc, func(m rsync.Entry, b []byte) error {
			d.state[m.Loc] = hashMD5(b)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func hashMD5(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// pkg reads a dump package and hands over each manifest entry with its bytes.
func (d *dumpFollower) pkg(ctx context.Context, u string, fn func(rsync.Entry, []byte) error) error {
	b, err := churnGet(ctx, d.hc, u)
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	files := map[string][]byte{}
	var manifest *rsync.Document
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			return err
		}
		c, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return err
		}
		if f.Name == "manifest.xml" {
			if manifest, err = rsync.Parse(bytes.NewReader(c)); err != nil {
				return fmt.Errorf("%s manifest: %w", u, err)
			}
			continue
		}
		files["/"+f.Name] = c
	}
	if manifest == nil {
		return fmt.Errorf("%s has no manifest", u)
	}
	for _, e := range manifest.Entries {
		var c []byte
		if e.MD.Change != "deleted" {
			c = files[e.MD.Path]
			if c == nil || hashMD5(c) != rsync.HashValue(e.MD.Hash, "md5") {
				return fmt.Errorf("%s: %s is missing or not what the manifest says", u, e.MD.Path)
			}
		}
		if err := fn(e, c); err != nil {
			return err
		}
	}
	return nil
}

// follow applies the Change Dump packages not applied yet.
func (d *dumpFollower) follow(ctx context.Context) error {
	cl, err := getDoc(ctx, d.hc, d.capURL)
	if err != nil {
		return err
	}
	cd, err := getDoc(ctx, d.hc, capability(cl, rsync.ChangeDump))
	if err != nil {
		return err
	}
	for _, e := range cd.Entries {
		if d.done[e.Loc] || e.MD.Until.Before(d.at) {
			continue
		}
		err := d.pkg(ctx, e.Loc, func(m rsync.Entry, b []byte) error {
			if m.MD.DateTime.Before(d.at) {
				return nil
			}
			if m.MD.Change == "deleted" {
				delete(d.state, m.Loc)
			} else {
				d.state[m.Loc] = hashMD5(b)
			}
			return nil
		})
		if err != nil {
			return err
		}
		d.done[e.Loc] = true
	}
	return nil
}

// pushFollower is a destination of Change Notification: subscribed to one
// channel before the churn, it must receive every change of the set's Change
// Lists from then on, once, in notifications whose intervals follow each
// other without gap or overlap.
type pushFollower struct {
	capURL, topic string
	sub           *subscriber
}

// subscribeChurn subscribes to the channels of the first (all-records)
// Capability List and of the first set's.
func subscribeChurn(t *testing.T, base string, n *notify.Notifier) []*pushFollower {
	t.Helper()
	caps := discoverCaps(t, base)
	var out []*pushFollower
	for _, capURL := range caps {
		if len(out) == 1 && !strings.Contains(capURL, "/set/") {
			continue
		}
		cl, err := getDoc(context.Background(), http.DefaultClient, capURL)
		if err != nil {
			t.Fatal(err)
		}
		var topic, hub string
		for _, e := range cl.Entries {
			if e.MD.Capability == "change-notification" && len(e.Links) == 1 && e.Links[0].Rel == "hub" {
				topic, hub = e.Loc, e.Links[0].Href
			}
		}
		if topic == "" {
			t.Fatalf("%s advertises no channel", capURL)
		}
		sub := newSubscriber(t, "churn-secret")
		form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {sub.srv.URL + "/cb"}, "hub.secret": {"churn-secret"}}
		resp, err := http.PostForm(hub, form)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("subscribe to %s: %v %v", topic, err, resp)
		}
		resp.Body.Close()
		if mode := <-sub.intent; mode != "subscribe" {
			t.Fatalf("verification of %s: mode %q", topic, mode)
		}
		waitFor(t, "the subscription to "+topic, func() bool { return n.Stats().Subscribers[topic] == 1 })
		out = append(out, &pushFollower{capURL: capURL, topic: topic, sub: sub})
		if len(out) == 2 {
			break
		}
	}
	return out
}

// check compares, once the notifier has caught up with the last change, what
// the subscriber received with the set's Change Lists.
func (p *pushFollower) check(t *testing.T, n *notify.Notifier) {
	t.Helper()
	type entry struct {
		line string
		at   time.Time
	}
	changeLists := func() []entry {
		cl, err := getDoc(context.Background(), http.DefaultClient, p.capURL)
		if err != nil {
			t.Fatal(err)
		}
		var out []entry
		for _, e := range cl.Entries {
			if e.MD.Capability != rsync.ChangeList {
				continue
			}
			idx, err := getDoc(context.Background(), http.DefaultClient, e.Loc)
			if err != nil {
				t.Fatal(err)
			}
			lists := []string{e.Loc}
			if idx.Index {
				lists = lists[:0]
				for _, l := range idx.Entries {
					lists = append(lists, l.Loc)
				}
			}
			for _, u := range lists {
				l, err := getDoc(context.Background(), http.DefaultClient, u)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range l.Entries {
					out = append(out, entry{c.Loc + " " + c.MD.Change + " " + rsync.FormatTime(c.MD.DateTime), c.MD.DateTime})
				}
			}
		}
		return out
	}
	type note struct {
		from, until time.Time
		entries     []entry
	}
	received := func() []note {
		var out []note
		for _, b := range p.sub.notifications() {
			doc, err := rsync.Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: a notification does not parse: %v", p.topic, err)
			}
			nt := note{from: doc.MD.From, until: doc.MD.Until}
			for _, e := range doc.Entries {
				nt.entries = append(nt.entries, entry{e.Loc + " " + e.MD.Change + " " + rsync.FormatTime(e.MD.DateTime), e.MD.DateTime})
			}
			out = append(out, nt)
		}
		// Deliveries may overtake each other; the intervals order them.
		sort.Slice(out, func(i, j int) bool { return out[i].from.Before(out[j].from) })
		return out
	}
	all := changeLists()
	if len(all) == 0 {
		t.Fatalf("%s: no changes listed", p.capURL)
	}
	last := all[len(all)-1].at
	deadline := time.Now().Add(30 * time.Second)
	var notes []note
	for {
		n.Changed()
		notes = received()
		if len(notes) > 0 && !notes[len(notes)-1].until.Before(last) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: 30 s after the churn the notifications reach %v, the Change Lists %v", p.topic, func() any {
				if len(notes) == 0 {
					return "nothing"
				}
				return notes[len(notes)-1].until
			}(), last)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	var got []string
	for i, nt := range notes {
		if i > 0 && !nt.from.Equal(notes[i-1].until) {
			t.Errorf("%s: notification %d covers from %v, the one before until %v", p.topic, i, nt.from, notes[i-1].until)
		}
		for _, e := range nt.entries {
			if e.at.Before(nt.from) || e.at.After(nt.until) {
				t.Errorf("%s: notification %d [%v, %v] has a change at %v", p.topic, i, nt.from, nt.until, e.at)
			}
			got = append(got, e.line)
		}
	}
	// What the Change Lists hold after the first notification's start (a
	// change exactly at it is that notification's when it is its first).
	first := notes[0]
	var want []string
	for _, e := range all {
		if e.at.After(first.from) || e.at.Equal(first.from) && len(first.entries) > 0 && first.entries[0].at.Equal(first.from) {
			want = append(want, e.line)
		}
	}
	if p.sub.bad > 0 {
		t.Errorf("%s: %d deliveries with a bad signature or links", p.topic, p.sub.bad)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: %d changes notified in %d notifications, the Change Lists have %d since the first one's start (%v):\n%s",
			p.topic, len(got), len(notes), len(want), first.from, diffLines(got, want))
		return
	}
	t.Logf("push destination of %s: %d changes in %d notifications, as the Change Lists have them", p.capURL, len(got), len(notes))
}

// diffLines lists the lines only one side has (at most 20).
func diffLines(got, want []string) string {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range list {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var out []string
	for _, l := range want {
		if !g[l] && len(out) < 20 {
			out = append(out, "  missing: "+l)
		}
	}
	for _, l := range got {
		if !w[l] && len(out) < 20 {
			out = append(out, "  extra:   "+l)
		}
	}
	if len(out) == 0 {
		out = append(out, "  (the same changes, in another order or repeated)")
	}
	return strings.Join(out, "\n")
}
