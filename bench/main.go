// Command bench measures rsbridge at consortium scale: it starts N
// synthetic OAI-PMH repositories in-process (oaiserver.Farm, on loopback
// addresses standing for distinct hosts, a hundred of them behind one
// hosting-service host), one slow repository (a minute per page) and one that
// is down, builds rsbridge and runs `rsbridge serve` on them, and prints one
// table: the first full harvest through the scheduler (rate at the start and
// at the end, memory, time of the slow and dead repositories against the
// rest), then serving (a 50,000-entry Resource List page cold, resource GETs
// at 32 clients, the status page, the Source Description) and start-up after
// SIGKILL.
//
//	go run ./bench -repos 700 -records 3000000
//	go run ./bench -repos 40 -records 100000     # a quick look
//
// Nothing leaves the machine: every repository listens on 127.0.0.0/8.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

type options struct {
	repos, records, bigRecords, setRepos int
	slowDelay                            time.Duration
	dir, binary                          string
	keep                                 bool
	concurrency                          int
	mappedLimit                          int64
	seed                                 uint64
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.repos, "repos", 700, "repositories (two of them are the slow and the dead one)")
	fs.IntVar(&o.records, "records", 3000000, "records in all (each harvested in 2 formats)")
	fs.IntVar(&o.bigRecords, "big", 50000, "records of the one repository above 20,000: with 50,000, its Resource List is one document of 50,000 entries, the largest there is (0: none)")
	fs.IntVar(&o.setRepos, "set-repos", 3, "repositories with 2,000 sets")
	fs.DurationVar(&o.slowDelay, "slow", time.Minute, "latency of every list page of the slow repository")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a new temporary one)")
	fs.StringVar(&o.binary, "binary", "", "rsbridge binary (default: go build ./cmd/rsbridge)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory")
	fs.IntVar(&o.concurrency, "concurrency", 0, "scheduler.concurrency (0: the default)")
	fs.Int64Var(&o.mappedLimit, "mapped-limit", 0, "store.mapped_limit, bytes (0: the default)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the repository sizes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.repos < 3 || o.records < o.repos*100 {
		return fmt.Errorf("need at least 3 repositories and 100 records each (got %d, %d)", o.repos, o.records)
	}
	if o.dir == "" {
		d, err := os.MkdirTemp("", "rsbridge-bench-")
		if err != nil {
			return err
		}
		o.dir = d
	} else if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(o.dir)
	}
	b := &bench{o: o, out: out, table: &table{}}
	return b.run(ctx)
}

// repo is one synthetic repository of the plan.
type repo struct {
	name, host string
	records    int
	sets       int
	bytes      int
	deleted    int // DeletedEvery
	delay      time.Duration
	dead       bool
}

type bench struct {
	o        options
	out      io.Writer
	table    *table
	repos    []repo
	farm     *oaiserver.Farm
	base     string // rsbridge's base URL
	debug    string // its pprof
	admin    string
	proc     *exec.Cmd
	profiled int
	wg       sync.WaitGroup // profiles being taken
	exited   chan error
}

func (b *bench) run(ctx context.Context) error {
	b.plan()
	stopFarm, err := b.serveFarm()
	if err != nil {
		return err
	}
	defer stopFarm()
	if b.o.binary == "" {
		b.o.binary = filepath.Join(b.o.dir, "rsbridge")
		build := exec.CommandContext(ctx, "go", "build", "-o", b.o.binary, "./cmd/rsbridge")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/rsbridge (run bench from the repository root): %w", err)
		}
	}
	if err := b.writeConfig(); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "%d repositories, %d records (x2 formats), work directory %s\n", len(b.repos), b.total(), b.o.dir)
	if err := b.start(ctx); err != nil {
		return err
	}
	defer b.kill()
	err = b.harvest(ctx)
	b.wg.Wait()
	if err != nil {
		return err
	}
	b.settle(ctx)
	if err := b.serving(ctx); err != nil {
		return err
	}
	if err := b.restart(ctx); err != nil {
		return err
	}
	b.table.print(b.out)
	return nil
}

func (b *bench) total() int {
	n := 0
	for _, r := range b.repos {
		if !r.dead {
			n += r.records
		}
	}
	return n
}

// plan draws the repositories: sizes log-uniform between 100 and 20,000,
// scaled (and clamped) so they add up to about the total; one large
// repository, so that a 50,000-entry Resource List exists; a few with
// 2,000 sets; up to a hundred behind one host; one slow, one dead.
func (b *bench) plan() {
	rng := rand.New(rand.NewPCG(b.o.seed, 42))
	const slowRecords, fixed = 250, 3 // slow, dead, big
	n := b.o.repos - fixed
	sizes := make([]float64, n)
	for i := range sizes {
		sizes[i] = math.Exp(math.Log(100) + rng.Float64()*(math.Log(20000)-math.Log(100)))
		if i < b.o.setRepos {
			sizes[i] = max(sizes[i], 10000)
		}
	}
	want := float64(b.o.records - b.o.bigRecords - slowRecords)
	for range 50 { // scale, clamp, again until the sum settles
		sum := 0.0
		for _, s := range sizes {
			sum += s
		}
		for i := range sizes {
			sizes[i] = min(max(sizes[i]*want/sum, 100), 20000)
		}
	}
	b.repos = []repo{
		{name: "slow", records: slowRecords, delay: b.o.slowDelay, sets: 4, bytes: 2000},
		{name: "dead", records: 1000, dead: true},
		{name: "big", records: b.o.bigRecords, sets: 8, bytes: 2000},
	}
	for i, size := range sizes {
		r := repo{name: fmt.Sprintf("r%03d", i), records: int(size), sets: 1 + rng.IntN(12), bytes: 1000 + rng.IntN(4000)}
		if i < b.o.setRepos {
			r.sets = 2000
		}
		if i%20 == 7 {
			r.deleted = 25 // one record in 25 deleted upstream
		}
		b.repos = append(b.repos, r)
	}
	if b.o.bigRecords == 0 {
		b.repos = slices.Delete(b.repos, 2, 3)
	}
	// The queue takes repositories in configuration order: shuffle, so the
	// large ones are not all at one end.
	rng.Shuffle(len(b.repos), func(i, j int) { b.repos[i], b.repos[j] = b.repos[j], b.repos[i] })
	for i := range b.repos {
		if i%7 == 3 && i < 700 { // a hosting service: a hundred repositories, one host name
			b.repos[i].host = "127.0.0.2"
		} else {
			b.repos[i].host = fmt.Sprintf("127.0.%d.%d", 1+i/250, 3+i%250)
		}
	}
}

// serveFarm starts the repositories: one Farm, one listener per host
// address (the dead repository's port answers nothing).
func (b *bench) serveFarm() (stop func(), err error) {
	b.farm = oaiserver.NewFarm()
	for _, r := range b.repos {
		if r.dead {
			continue
		}
		b.farm.Add(r.name, oaiserver.New(oaiserver.Options{Records: r.records, Prefixes: []string{"oai_dc", "jpcoar_2.0"}, RecordBytes: r.bytes,
			SetCount: r.sets, DeletedEvery: r.deleted, PageSize: 100, RepositoryName: "Repository " + r.name}), r.delay)
	}
	srv := &http.Server{Handler: b.farm, ReadHeaderTimeout: 10 * time.Second}
	ports := map[string]string{}
	var lns []net.Listener
	stop = func() {
		srv.Close()
		for _, ln := range lns {
			ln.Close()
		}
	}
	port := "0"
	for i := range b.repos {
		r := &b.repos[i]
		if r.dead {
			r.host = "127.0.0.1:1" // nothing listens: connection refused
			continue
		}
		if p, ok := ports[r.host]; ok {
			r.host += ":" + p
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(r.host, port))
		if err != nil {
			stop()
			return nil, fmt.Errorf("listen on %s: %w", r.host, err)
		}
		lns = append(lns, ln)
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		port = p // the same port on every address, when free
		ports[r.host] = p
		r.host += ":" + p
		go srv.Serve(ln)
	}
	return stop, nil
}

func (b *bench) writeConfig() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	b.base = "http://" + addr
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	b.debug = "http://" + dl.Addr().String()
	dl.Close()
	b.admin = "bench-admin-token-0123456789"
	var c strings.Builder
	fmt.Fprintf(&c, "listen: %s\ndata_dir: %s\nlog_level: warn\nadmin:\n  token: %s\ndebug:\n  listen: %s\n", addr, filepath.Join(b.o.dir, "data"), b.admin, strings.TrimPrefix(b.debug, "http://"))
	if b.o.mappedLimit > 0 {
		fmt.Fprintf(&c, "store:\n  mapped_limit: %d\n", b.o.mappedLimit)
	}
	c.WriteString("resourcesync:\n  dump_sets: none\n")
	if b.o.concurrency > 0 {
		fmt.Fprintf(&c, "scheduler:\n  concurrency: %d\n", b.o.concurrency)
	}
	c.WriteString("defaults:\n  delay: 0s\nrepositories:\n")
	for _, r := range b.repos {
		fmt.Fprintf(&c, "  - name: %s\n    base_url: http://%s/%s/oai\n    metadata_prefixes: [oai_dc, jpcoar_2.0]\n    schedule: \"@every 24h\"\n    reconcile: \"off\"\n", r.name, r.host, r.name)
	}
	return os.WriteFile(filepath.Join(b.o.dir, "rsbridge.yaml"), []byte(c.String()), 0o600)
}

// start runs rsbridge serve and waits until it answers.
func (b *bench) start(ctx context.Context) error {
	b.proc = exec.Command(b.o.binary, "serve", "-config", filepath.Join(b.o.dir, "rsbridge.yaml"))
	logf, err := os.OpenFile(filepath.Join(b.o.dir, "rsbridge.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	b.proc.Stdout, b.proc.Stderr = logf, logf
	if err := b.proc.Start(); err != nil {
		return err
	}
	b.exited = make(chan error, 1)
	go func() { b.exited <- b.proc.Wait(); logf.Close() }()
	for {
		if resp, err := http.Get(b.base + "/healthz"); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-b.exited:
			return fmt.Errorf("rsbridge exited at start (see %s): %v", filepath.Join(b.o.dir, "rsbridge.log"), err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (b *bench) kill() {
	if b.proc != nil && b.proc.Process != nil {
		b.proc.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
		case <-time.After(30 * time.Second):
			b.proc.Process.Kill()
			<-b.exited
		}
	}
}

// settle waits until rsbridge is idle (Badger's compactions and the
// background work after a harvest done: under a fifth of a core for three
// seconds in a row), at most three minutes, so serving is measured after
// the harvest rather than during its aftermath. It reports how long it took.
func (b *bench) settle(ctx context.Context) {
	start := time.Now()
	quiet, last := 0, cpuTime(b.proc.Process.Pid)
	for quiet < 3 && time.Since(start) < 3*time.Minute && ctx.Err() == nil {
		time.Sleep(time.Second)
		now := cpuTime(b.proc.Process.Pid)
		if now-last < 0.2 {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	b.table.add("after the harvest", "until rsbridge is idle (compactions done)", fmt.Sprintf("%.0f s", time.Since(start).Seconds()))
}

// cpuTime is the CPU seconds the process has used (user and system).
func cpuTime(pid int) float64 {
	bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(bs)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command name, field 3 on
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks: USER_HZ is 100 on Linux
}

// memory reads the process's resident memory, anonymous and file-backed.
func memory(pid int) (anon, file int64) {
	bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(bs), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		}
	}
	return anon, file
}

// written is the bytes the process caused to be written to disk.
func written(pid int) int64 {
	bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(bs), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

var (
	seriesRE = regexp.MustCompile(`(?m)^(rsbridge_harvest_records_total|rsbridge_runs_total)(\{[^}]*\})? ([0-9.e+]+)$`)
	repoRE   = regexp.MustCompile(`repository="([^"]*)"`)
)

// counters sums the records read, and counts the repositories with a run
// ended (whatever its outcome), from /metrics. Repositories, not runs: a
// scheduled run of a repository already harvested, or the dead one's
// retry, must not stand in for a first run still going (it did, from
// 2026-11-25: the harvest was taken as done with the slow repository
// still running).
//
// Only the two families are asked for (client_golang's name[] filter): the
// whole exposition, 36,000 series by the end, encoded and compressed every
// 2 s, was 1.5 % of rsbridge's CPU at the end of the harvest and none at
// its start, which the bench's rates would have charged to the store.
func (b *bench) counters() (records float64, ended map[string]bool, err error) {
	body, err := get(b.base + "/metrics?name[]=rsbridge_harvest_records_total&name[]=rsbridge_runs_total")
	if err != nil {
		return 0, nil, err
	}
	ended = map[string]bool{}
	for _, m := range seriesRE.FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		if m[1] != "rsbridge_runs_total" {
			records += v
		} else if r := repoRE.FindStringSubmatch(m[2]); r != nil && v > 0 {
			ended[r[1]] = true
		}
	}
	return records, ended, nil
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, err
}

type sample struct {
	at      time.Duration
	records float64
	cpu     float64 // rsbridge's CPU seconds so far
	farm    float64 // the bench's own (the synthetic upstreams)
}

// harvest waits for the first harvest of every repository and reports its
// rate, memory and the slow and dead repositories' times.
func (b *bench) harvest(ctx context.Context) error {
	start := time.Now()
	var samples []sample
	var peakAnon, peakFile, wrote int64
	firstEnded := map[string]time.Duration{}
	n := float64(len(b.repos))
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-b.exited:
			return fmt.Errorf("rsbridge exited during the harvest: %v", err)
		case <-tick.C:
		}
		anon, file := memory(b.proc.Process.Pid)
		peakAnon, peakFile = max(peakAnon, anon), max(peakFile, file)
		if w := written(b.proc.Process.Pid); w > 0 {
			wrote = w
		}
		recs, ended, err := b.counters()
		if err != nil {
			continue
		}
		at := time.Since(start)
		// When each repository's first run ended, to the poll: its last
		// success may be a scheduled run after it.
		for r := range ended {
			if _, ok := firstEnded[r]; !ok {
				firstEnded[r] = at
			}
		}
		runs := float64(len(ended))
		samples = append(samples, sample{at, recs, cpuTime(b.proc.Process.Pid), cpuTime(os.Getpid())})
		b.profile(ctx, at, recs)
		if k := len(samples); k%15 == 0 && k > 15 {
			p, s := samples[k-16], samples[k-1]
			d := (s.at - p.at).Seconds()
			fmt.Fprintf(os.Stderr, "%6.0fs %10.0f records, %4.0f of %.0f runs ended, %6.0f records/s, CPU rsbridge %3.0f %% (%.0f µs a record) farm %3.0f %%, RssAnon %s, RssFile %s\n",
				at.Seconds(), recs, runs, n, (s.records-p.records)/d, 100*(s.cpu-p.cpu)/d, 1e6*(s.cpu-p.cpu)/max(1, s.records-p.records), 100*(s.farm-p.farm)/d, mib(anon), mib(file))
		}
		if runs >= n {
			break
		}
	}
	total := samples[len(samples)-1]
	t := b.table
	t.add("first harvest", "all repositories", fmt.Sprintf("%.0f s, %.0f records read (both formats), %.0f records/s", total.at.Seconds(), total.records, total.records/total.at.Seconds()))
	// The first 200,000 records go into an empty store (no compaction yet);
	// 10-20 % is the start of the steady state. 85-95 % leaves out the
	// tail, when fewer runs are left than slots.
	first, early := rate(samples, 0, 200000), rate(samples, 0.10*total.records, 0.20*total.records)
	last := rate(samples, 0.85*total.records, 0.95*total.records)
	t.add("harvest rate", "first 200,000 records read", fmt.Sprintf("%.0f records/s", first))
	t.add("harvest rate", "10-20 % of the records", fmt.Sprintf("%.0f records/s", early))
	t.add("harvest rate", "85-95 % of the records", fmt.Sprintf("%.0f records/s (%+.0f %% against the first 200,000, %+.0f %% against 10-20 %%)", last, 100*(last-first)/first, 100*(last-early)/early))
	// Every tenth too: a 30-second window can hold a large compaction or
	// none (runs of one tree differ by ±5 points), so the trend reads better
	// than one pair of windows.
	var tenths []string
	for i := range 10 {
		tenths = append(tenths, fmt.Sprintf("%.1fk", rate(samples, float64(i)*total.records/10, float64(i+1)*total.records/10)/1000))
	}
	t.add("harvest rate", "each tenth of the records (records/s)", strings.Join(tenths, " "))
	t.add("rsbridge CPU a record", "first 200,000 / 10-20 % / 85-95 %", fmt.Sprintf("%.0f / %.0f / %.0f µs", cpuPer(samples, 0, 200000), cpuPer(samples, 0.10*total.records, 0.20*total.records), cpuPer(samples, 0.85*total.records, 0.95*total.records)))
	t.add("memory", "peak RssAnon / RssFile", fmt.Sprintf("%s / %s", mib(peakAnon), mib(peakFile)))
	t.add("disk writes", "by rsbridge during the harvest", fmt.Sprintf("%s, %.0f bytes per record read", mib(wrote), float64(wrote)/total.records))
	var ends []time.Duration
	for _, r := range b.repos {
		if r.dead || r.delay > 0 {
			continue
		}
		if end, ok := firstEnded[r.name]; ok {
			ends = append(ends, end)
		}
	}
	slices.Sort(ends)
	slow, _ := b.runEnd(ctx, "slow", start)
	dead, _ := b.runEnd(ctx, "dead", start)
	t.add("slow repository", fmt.Sprintf("%s per page", b.o.slowDelay), slow)
	t.add("dead repository", "connection refused", dead)
	if len(ends) > 0 {
		t.add("the other repositories", fmt.Sprintf("%d first runs ended (to the 2-s poll)", len(ends)), fmt.Sprintf("half after %.0f s, all after %.0f s", ends[len(ends)/2].Seconds(), ends[len(ends)-1].Seconds()))
	}
	return nil
}

var endedRE = regexp.MustCompile(`"ended": "([^"]+)"`)

// profile takes CPU profiles of rsbridge into the work directory: of the
// first 7 seconds (about the first 200,000 records, the window the end is
// compared with), of 20 seconds from 20 s, and of 20 seconds, with a heap
// profile, at 80 % of the records.
func (b *bench) profile(ctx context.Context, at time.Duration, records float64) {
	name, seconds := "", 20
	switch {
	case b.profiled == 0: // the first 200,000 records take about 7 s
		name, seconds = "cpu-first.pprof", 7
	case at >= 20*time.Second && b.profiled == 1:
		name = "cpu-start.pprof"
	case records >= 0.8*2*float64(b.total()) && b.profiled == 2:
		name = "cpu-end.pprof"
	default:
		return
	}
	b.profiled++
	path := filepath.Join(b.o.dir, name)
	if b.profiled == 3 { // and what the heap holds then
		b.wg.Go(func() { b.save(ctx, "/debug/pprof/heap", filepath.Join(b.o.dir, "heap-end.pprof")) })
	}
	b.wg.Go(func() { b.save(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), path) })
}

// save writes what the debug listener answers at path to file.
func (b *bench) save(ctx context.Context, path, file string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.debug+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if f, err := os.Create(file); err == nil {
		io.Copy(f, resp.Body)
		f.Close()
		fmt.Fprintf(os.Stderr, "profile: %s\n", file)
	}
}

// runEnd says how a repository's last run ended, and when, from the admin
// API.
func (b *bench) runEnd(ctx context.Context, name string, start time.Time) (string, time.Duration) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/admin/repos/"+name, nil)
	req.Header.Set("Authorization", "Bearer "+b.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error(), 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	s := string(body)
	for _, k := range []string{`"last_success"`, `"last_failure"`} {
		if i := strings.Index(s, k); i >= 0 {
			if m := endedRE.FindStringSubmatch(s[i:]); m != nil {
				if ended, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					return fmt.Sprintf("%s after %.0f s", strings.Trim(k, `"`), ended.Sub(start).Seconds()), ended.Sub(start)
				}
			}
		}
	}
	return "no run ended", 0
}

// rate is the records/s between two counts of records read.
func rate(s []sample, from, to float64) float64 {
	i := slices.IndexFunc(s, func(x sample) bool { return x.records >= from })
	j := slices.IndexFunc(s, func(x sample) bool { return x.records >= to })
	if i < 0 || j <= i {
		return 0
	}
	return (s[j].records - s[i].records) / (s[j].at - s[i].at).Seconds()
}

// cpuPer is rsbridge's CPU microseconds a record between two counts of
// records read.
func cpuPer(s []sample, from, to float64) float64 {
	i := slices.IndexFunc(s, func(x sample) bool { return x.records >= from })
	j := slices.IndexFunc(s, func(x sample) bool { return x.records >= to })
	if i < 0 || j <= i {
		return 0
	}
	return 1e6 * (s[j].cpu - s[i].cpu) / (s[j].records - s[i].records)
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// resourceURL is a record of a repository, in oai_dc.
func (b *bench) resourceURL(r repo, i int) string {
	return source.ResourceURL(b.base, r.name, "oai_dc", b.farm.Repository(r.name).Identifier(i))
}
