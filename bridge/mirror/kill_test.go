package mirror

import (
	"bytes"
	"context"
	"math/rand/v2"
	neturl "net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// buildCommand builds the rsbridge command for tests that run and kill it.
func buildCommand(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rsbridge")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/rsbridge/rsbridge/cmd/rsbridge").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestMirrorSurvivesSIGKILL runs the rsbridge mirror command and kills it
// with SIGKILL at random moments, first during a baseline from the dump,
// then while it catches up with changes by GET; each time it is started
// again. The copy ends equal to the source, and no resource the state had
// committed when a kill came is fetched again unless the source changed it.
func TestMirrorSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	bin := buildCommand(t)
	s := newRsbridgeWith(t, oaiserver.Options{Records: 4000, PageSize: 500, SetCount: -1}, t.TempDir())
	s.dump()
	dir, state := t.TempDir(), t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	committed := map[string]int64{} // resource path → its GETs when the state first held it
	note := func() {
		st, err := store.OpenMirror(state, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		st.Resources(context.Background(), s.src.All(s.cfg.Repositories[0], "oai_dc").CapabilityList(), func(r *store.MirrorResource) error {
			u, _ := neturl.Parse(r.URI)
			if _, seen := committed[u.Path]; !seen {
				n := int64(0)
				if v, ok := s.gets.Load(u.Path); ok {
					n = v.(*atomic.Int64).Load()
				}
				committed[u.Path] = n
			}
			return nil
		})
	}
	kills := 0
	run := func(phase string) {
		for attempt := 0; ; attempt++ {
			var out bytes.Buffer
			cmd := exec.Command(bin, "mirror", "-once", "-delete", "-dir", dir, "-state", state, s.srv.URL)
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			killAt := time.Duration(30+rng.IntN(600)) * time.Millisecond
			if attempt >= 4 {
				killAt = time.Hour // four kills a phase, then it may finish
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: mirror failed on its own: %v\n%s", phase, err, out.String())
				}
				note()
				return
			case <-time.After(killAt):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				kills++
				note()
			}
		}
	}
	run("baseline")
	s.checkCopy(dir)
	changed := map[string]bool{}
	at := s.clk.Add(time.Minute)
	for i := 0; i < 4000; i += 10 {
		s.up.Update(i, at)
		u, _ := neturl.Parse(s.resourceURL(s.up.Identifier(i)))
		changed[u.Path] = true
	}
	for i := 5; i < 400; i += 20 {
		s.up.Delete(i, at)
	}
	s.clk.Add(time.Second)
	s.harvest()
	run("catch-up")
	s.checkCopy(dir)
	t.Logf("%d runs killed mid-way, %d resources committed before a kill or at the end", kills, len(committed))
	if kills < 2 {
		t.Errorf("only %d kills landed mid-run; the test proves little", kills)
	}
	for p, then := range committed {
		n := int64(0)
		if v, ok := s.gets.Load(p); ok {
			n = v.(*atomic.Int64).Load()
		}
		if n != then && !changed[p] {
			t.Errorf("%s: fetched %d times, %d of them after the state held it", p, n, n-then)
		}
	}
	if !strings.Contains(s.srv.URL, "127.0.0.1") {
		t.Fatal("the source must be local")
	}
}
