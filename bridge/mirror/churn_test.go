package mirror

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

var (
	churnRecords = flag.Int("mirror.records", 2000, "records of the source in TestMirrorChurn")
	churnFor     = flag.Duration("mirror.churn", 6*time.Second, "how long TestMirrorChurn changes the source")
)

// mirrorProc is the rsbridge mirror command, following a source, killed
// and started again at will.
type mirrorProc struct {
	t     *testing.T
	bin   string
	args  []string
	mu    sync.Mutex
	cmd   *exec.Cmd
	out   bytes.Buffer
	done  chan error
	kills int
}

func (p *mirrorProc) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmd = exec.Command(p.bin, p.args...)
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
// changes continuously, one by Change Notification (and rare pulls), one
// by pulling the Change Lists every second; both are killed with SIGKILL
// at random moments and started again. When the churn stops, both become
// equal to the source. -mirror.records and -mirror.churn size it (the
// issue's run: 100000 records).
func TestMirrorChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "rsbridge")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/rsbridge/rsbridge/cmd/rsbridge").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	n := *churnRecords
	began := time.Now()
	s := newRsbridgeFull(t, oaiserver.Options{Records: n, PageSize: 500, SetCount: -1}, t.TempDir(), "notification:\n  enabled: true\n")
	s.dump()
	t.Logf("source of %d records ready in %v", n, time.Since(began).Round(time.Second))
	copies := map[string]string{"notified": t.TempDir(), "pulling": t.TempDir()}
	procs := map[string]*mirrorProc{
		"notified": {t: t, bin: bin, args: []string{"mirror", "-delete", "-dir", copies["notified"], "-every", "1h", "-listen", freeAddr(t), s.srv.URL}},
		"pulling":  {t: t, bin: bin, args: []string{"mirror", "-delete", "-dir", copies["pulling"], "-every", "1s", s.srv.URL}},
	}
	for _, p := range procs {
		p.start()
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	ops := map[string]int{}
	kills := 0
	for end := time.Now().Add(*churnFor); time.Now().Before(end); {
		at := s.clk.add(time.Second)
		for range 1 + rng.IntN(20) {
			switch i := rng.IntN(s.up.Len()); rng.IntN(4) {
			case 0:
				s.up.Add(at)
				ops["added"]++
			case 1:
				s.up.Delete(i, at)
				ops["deleted"]++
			default:
				s.up.Update(i, at)
				ops["updated"]++
			}
		}
		s.harvest()
		if rng.IntN(6) == 0 {
			// Turn about, so both are killed, in their baselines and after.
			name := []string{"notified", "pulling"}[kills%2]
			kills++
			procs[name].kill()
			procs[name].start()
		}
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
	}
	t.Logf("churn: %v; kills: notified %d, pulling %d", ops, procs["notified"].kills, procs["pulling"].kills)
	for name, dir := range copies {
		waitEqual(t, s, dir, 120*time.Second+time.Duration(n/500)*time.Second)
		t.Logf("%s copy equals the source", name)
	}
	for _, p := range procs {
		p.kill()
	}
	if fmt.Sprint(ops) == "map[]" {
		t.Fatal("no changes were made")
	}
}
