package mirror

import (
	"bytes"
	"context"
	"flag"
	"math/rand/v2"
	"net"
	neturl "net/url"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/store"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

var (
	churnRecords = flag.Int("mirror.records", 2000, "records of the source in TestMirrorChurn")
	churnFor     = flag.Duration("mirror.churn", 6*time.Second, "how long TestMirrorChurn changes the source")
	churnSeed    = flag.Uint64("mirror.seed", 0, "TestMirrorChurn's seed (0: from the clock); the log gives the one used")
)

// mirrorProc is the rsbridge mirror command, following a source, killed
// and started again at will.
type mirrorProc struct {
	t     *testing.T
	bin   string
	args  []string
	state string // its state directory
	mu    sync.Mutex
	cmd   *exec.Cmd
	out   bytes.Buffer
	done  chan error
	kills int
	// mended counts starts that found files a killed run left ahead of its
	// state (recoverAhead's log line).
	mended int
}

func (p *mirrorProc) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmd = exec.Command(p.bin, p.args...)
	if bytes.Contains(p.out.Bytes(), []byte("left files ahead of the state; mended")) {
		p.mended++
	}
	p.out.Reset()
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(p.cmd, p.done)
}

// kill stops the process with SIGKILL and reports whether it was still
// running (a follower exits only on a failure).
func (p *mirrorProc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case err := <-p.done:
		p.t.Fatalf("%v exited on its own: %v\n%s", p.args, err, p.out.String())
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.kills++
}

// freeAddr is a local address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMirrorChurn: two copies of an rsbridge follow it while its upstream
// changes continuously, one by Change Notification (and a pull every 5 s:
// after a kill, a hub holds the deliveries that failed, and the ones after
// them, until its retry, and only a pull sees those changes sooner), one
// by pulling the Change Lists every second; both are killed with SIGKILL
// at random moments and started again. When the churn stops, both become
// equal to the source. -mirror.records and -mirror.churn size it (the
// issue's run: 100000 records).
func TestMirrorChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	bin := buildCommand(t)
	n := *churnRecords
	began := time.Now()
	s := newRsbridgeFull(t, oaiserver.Options{Records: n, PageSize: 500, SetCount: -1}, t.TempDir(), "notification:\n  enabled: true\n")
	s.dump()
	t.Logf("source of %d records ready in %v", n, time.Since(began).Round(time.Second))
	copies := map[string]string{"notified": t.TempDir(), "pulling": t.TempDir()}
	procs := map[string]*mirrorProc{
		"notified": {t: t, bin: bin, state: copies["notified"] + ".state", args: []string{"mirror", "-delete", "-dir", copies["notified"], "-every", "5s", "-listen", freeAddr(t), s.srv.URL}},
		"pulling":  {t: t, bin: bin, state: copies["pulling"] + ".state", args: []string{"mirror", "-delete", "-dir", copies["pulling"], "-every", "1s", s.srv.URL}},
	}
	// Resources the source changed, and for the others, the GETs they had
	// when a copy's state first held them (read while its process is dead).
	changed := map[string]bool{}
	committed := map[string]map[string]int64{"notified": {}, "pulling": {}}
	note := func(name string) {
		st, err := store.OpenMirror(procs[name].state, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		st.Resources(context.Background(), s.src.All(s.cfg.Repositories[0], "oai_dc").CapabilityList(), func(r *store.MirrorResource) error {
			u, _ := neturl.Parse(r.URI)
			if _, seen := committed[name][u.Path]; !seen {
				committed[name][u.Path] = s.getsOf(u.Path)
			}
			return nil
		})
	}
	for _, p := range procs {
		p.start()
	}
	seed := *churnSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d (replay with -mirror.seed %d)", seed, seed)
	ops := map[string]int{}
	kills := 0
	for end := time.Now().Add(*churnFor); time.Now().Before(end); {
		at := s.clk.Add(time.Second)
		for range 1 + rng.IntN(20) {
			i := rng.IntN(s.up.Len())
			switch rng.IntN(4) {
			case 0:
				i = s.up.Add(at)
				ops["added"]++
			case 1:
				s.up.Delete(i, at)
				ops["deleted"]++
			default:
				s.up.Update(i, at)
				ops["updated"]++
			}
			u, _ := neturl.Parse(s.resourceURL(s.up.Identifier(i)))
			changed[u.Path] = true
		}
		s.harvest()
		if rng.IntN(6) == 0 {
			// Turn about, so both are killed, in their baselines and after.
			name := []string{"notified", "pulling"}[kills%2]
			kills++
			procs[name].kill()
			note(name)
			procs[name].start()
		}
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
	}
	t.Logf("churn: %v; kills: notified %d, pulling %d", ops, procs["notified"].kills, procs["pulling"].kills)
	for name, dir := range copies {
		deadline := time.Now().Add(30*time.Second + time.Duration(n/500)*time.Second)
		for d := s.differences(dir); len(d) > 0; d = s.differences(dir) {
			if time.Now().After(deadline) {
				p := procs[name]
				p.mu.Lock()
				out := p.out.String()
				p.mu.Unlock()
				t.Fatalf("%s copy still differs: %d differences, e.g. %s\nits last run's output:\n%s", name, len(d), d[0], out)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("%s copy equals the source", name)
	}
	for name, p := range procs {
		p.kill()
		note(name)
		if bytes.Contains(p.out.Bytes(), []byte("left files ahead of the state; mended")) {
			p.mended++
		}
		t.Logf("%s: %d of its %d kills left files ahead of its state, which the next start mended", name, p.mended, p.kills-1)
	}
	for name, paths := range committed {
		again := 0
		for p, then := range paths {
			if !changed[p] && s.getsOf(p) != then {
				again++
			}
		}
		if again > 0 {
			t.Errorf("%s: %d unchanged resources fetched again after its state held them", name, again)
		}
		t.Logf("%s: %d resources held at kills and at the end", name, len(paths))
	}
	if len(changed) == 0 {
		t.Fatal("no changes were made")
	}
}
