package export

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// TestExportSurvivesSIGKILL runs the rsbridge export command and kills it
// with SIGKILL at random moments, during the first export and during an
// incremental one; started again, it finishes, and a destination reading
// the directory is in sync with the store.
func TestExportSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "rsbridge")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/rsbridge/rsbridge/cmd/rsbridge").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, data := t.TempDir(), t.TempDir()
	base := fileServer(t, root)
	f := newFixtureAt(t, filepath.Join(data, "store"), base, oaiserver.Options{Records: 6000, PageSize: 500, SetCount: 2}, "")
	conf := filepath.Join(t.TempDir(), "rsbridge.yaml")
	yaml := strings.Replace(f.yaml, "base_url: "+base+"\n", "base_url: "+base+"\ndata_dir: "+filepath.Join(data, "store")+"\nexport:\n  target: "+root+"\n", 1)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	run := func(killAfter time.Duration) (killed bool) {
		cmd := exec.Command(bin, "export", "-config", conf)
		out, _ := os.CreateTemp(t.TempDir(), "out")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			b, _ := os.ReadFile(out.Name())
			if err != nil {
				t.Fatalf("export: %v\n%s", err, b)
			}
			t.Logf("export: %s", b)
			return false
		case <-time.After(killAfter):
			cmd.Process.Kill()
			<-done
			return true
		}
	}
	reopen := func() {
		var err error
		if f.db, err = store.Open(store.Options{Dir: filepath.Join(data, "store"), Now: f.clk.Now, ChangeListLimit: 50000, ChangeListPeriod: time.Hour}); err != nil {
			t.Fatal(err)
		}
		f.src = source.New(f.cfg, f.db)
		t.Cleanup(func() { f.db.Close() })
	}
	kills := 0
	for round, changes := range []int{0, 2000} {
		if changes > 0 {
			reopen()
			f.rebindHarvesters()
			f.churn(changes, rng)
			f.db.Close()
		} else {
			f.db.Close()
		}
		for range 4 {
			if run(time.Duration(50+rng.IntN(600)) * time.Millisecond) {
				kills++
			}
		}
		run(time.Minute)
		t.Logf("round %d: %d kills so far", round, kills)
	}
	reopen()
	if b, err := os.ReadFile(filepath.Join(root, ".well-known", "resourcesync")); err != nil || !strings.Contains(string(b), "capabilitylist") {
		t.Fatalf("Source Description: %v\n%s", err, b)
	}
	f.mirrorFrom(t, base, t.TempDir(), t.TempDir())
}
