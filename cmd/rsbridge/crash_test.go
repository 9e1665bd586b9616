package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// TestCrashRecovery harvests 40,000 records in pages of 100 with the real binary,
// kills it with SIGKILL at random points, restarts it each time, and checks the
// final store equals the upstream exactly with one created event per live record.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rsbridge")
	// The image's build flags (Dockerfile): the compiled packages are shared
	// with TestImageDefaults through the build cache.
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const records = 40000
	up := oaiserver.New(oaiserver.Options{Records: records, PageSize: 100, DeletedEvery: 25, Prefixes: []string{"oai_dc"}})
	srv := httptest.NewServer(up)
	defer srv.Close()
	dataDir := filepath.Join(dir, "data")
	cfgPath := filepath.Join(dir, "rsbridge.yaml")
	cfg := fmt.Sprintf("data_dir: %s\nlog_level: warn\ndefaults:\n  delay: 0s\nrepositories:\n  - name: demo\n    base_url: %s/oai\n", dataDir, srv.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	kills := 0
	for attempt := 0; attempt < 30 && kills < 6; attempt++ {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "harvest", "-config", cfgPath)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wait := time.Duration(100+rng.IntN(450)) * time.Millisecond
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("harvest failed on its own: %v\n%s", err, stderr.String())
			}
			t.Logf("run %d finished before the kill at %v", attempt, wait)
			if strings.Contains(stderr.String(), "done: ") {
				attempt = 30 // completed: stop killing
			}
		case <-time.After(wait):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
			t.Logf("killed run %d after %v", attempt, wait)
		}
		if attempt == 30 {
			break
		}
	}
	if kills < 3 {
		t.Fatalf("only %d kills landed mid-harvest", kills)
	}
	// Finish the harvest.
	out, err := exec.Command(bin, "harvest", "-config", cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("final harvest: %v\n%s", err, out)
	}

	db, err := store.Open(store.Options{Dir: dataDir, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	live := 0
	created := map[string]int{}
	other := 0
	var ctr store.Counter
	err = db.View(context.Background(), func(s *store.Snap) error {
		for i := 0; i < up.Len(); i++ {
			it, ok := up.Item(i, "oai_dc")
			if !ok {
				t.Fatalf("item %d missing upstream", i)
			}
			rec, err := s.Record("demo", "oai_dc", it.Identifier)
			if err != nil || rec == nil {
				t.Fatalf("item %d (%q) not in store: %v", i, it.Identifier, err)
			}
			if rec.Deleted != it.Deleted {
				t.Fatalf("item %d deleted=%v in store, %v upstream", i, rec.Deleted, it.Deleted)
			}
			if it.Deleted {
				continue
			}
			live++
			if meta, _ := s.Metadata("demo", "oai_dc", it.Identifier); !bytes.Equal(meta, it.Metadata) {
				t.Fatalf("item %d metadata differs", i)
			}
		}
		if err := s.Events("demo", "oai_dc", 0, func(e *store.Event) error {
			if e.Change == store.Created {
				created[e.Identifier]++
			} else {
				other++
			}
			return nil
		}); err != nil {
			return err
		}
		ctr, err = s.Counter("demo", "oai_dc")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range created {
		if n != 1 {
			t.Errorf("%q has %d created events", id, n)
		}
	}
	if len(created) != live || other != 0 || ctr.Live != int64(live) || ctr.Seq != uint64(live) {
		t.Fatalf("created events for %d records, %d other events, counter %+v; upstream has %d live records", len(created), other, ctr, live)
	}
	t.Logf("%d kills; store equals upstream: %d live records, %d tombstones, one created event each", kills, live, ctr.Deleted)
}
