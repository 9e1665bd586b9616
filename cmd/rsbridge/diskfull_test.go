package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
	"github.com/rsbridge/rsbridge/store"
)

// buildBinary builds rsbridge into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "rsbridge")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".") // as crash_test.go
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// mountTmpfs mounts a tmpfs of size (as mount's size= says it) in a
// temporary directory and returns both; it skips the test when it cannot,
// except under CI=true, where it fails.
func mountTmpfs(t *testing.T, size string) (dir, mnt string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and mounts a tmpfs; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir = t.TempDir()
	mnt = filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must be able to mount a tmpfs as root: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	return dir, mnt
}

// TestDiskFull runs the real binary with its data directory on a small tmpfs:
// the harvest that would fill it stops at the reserve with exit code 1 and a
// clear message (never SIGBUS), serve still serves what was stored, and once
// the file system grows the next harvest resumes and completes exactly.
func TestDiskFull(t *testing.T) {
	dir, mnt := mountTmpfs(t, "96m")
	bin := buildBinary(t, dir)

	const records = 30000 // ~3 KB each: about 100 MB, more than the tmpfs holds
	up := oaiserver.New(oaiserver.Options{Records: records, PageSize: 200, RecordBytes: 3000, DeletedEvery: 40, Prefixes: []string{"oai_dc"}})
	srv := httptest.NewServer(up)
	defer srv.Close()
	data := filepath.Join(mnt, "data")
	cfgPath := filepath.Join(dir, "rsbridge.yaml")
	cfg := fmt.Sprintf("listen: 127.0.0.1:0\ndata_dir: %s\nlog_level: warn\nstore:\n  min_free: %d\ndefaults:\n  delay: 0s\nrepositories:\n  - name: demo\n    base_url: %s/oai\n    reconcile: \"off\"\n", data, 64<<20, srv.URL)
	os.WriteFile(cfgPath, []byte(cfg), 0o644)

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "harvest", "-config", cfgPath)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("harvest on a filling disk: %v (want exit code 1)\n%s", err, stderr.String())
	}
	msg := stderr.String()
	if strings.Contains(msg, "cannot record the run's outcome") {
		t.Errorf("a misleading error before the real one:\n%s", msg)
	}
	for _, bad := range []string{"fatal error", "SIGBUS", "goroutine "} {
		if strings.Contains(msg, bad) {
			t.Fatalf("the process crashed:\n%.3000s", msg)
		}
	}
	if !strings.Contains(msg, "data directory "+data+" has ") || !strings.Contains(msg, "below the reserve of 64.0 MiB") {
		t.Fatalf("no clear message naming the directory and the free space:\n%s", msg)
	}
	t.Logf("harvest stopped: %s", lastLine(msg))

	// serve on a disk that is full: it opens the store read-only and serves
	// it. (Badger gave sparse space back when the harvest closed it, so fill
	// the rest first.)
	filler := filepath.Join(mnt, "filler")
	fillTo(t, filler, mnt, 8<<20)
	srvCmd := exec.Command(bin, "serve", "-config", cfgPath)
	stdout, _ := srvCmd.StdoutPipe()
	var serveErr bytes.Buffer
	srvCmd.Stderr = &serveErr
	if err := srvCmd.Start(); err != nil {
		t.Fatal(err)
	}
	base := readBase(t, stdout)
	code, body := fetch(base + "/demo/oai_dc/all/resourcelist.xml")
	if code != 200 || !strings.Contains(body, "<url>") {
		t.Errorf("serve on a full disk: %d %.300s", code, body)
	}
	srvCmd.Process.Signal(os.Interrupt)
	if err := srvCmd.Wait(); err != nil {
		t.Errorf("serve exit: %v\n%s", err, serveErr.String())
	}
	if !strings.Contains(serveErr.String(), "read-only") {
		t.Errorf("serve did not say the store is read-only:\n%s", serveErr.String())
	}

	// Space returns: the next harvest resumes and completes.
	os.Remove(filler)
	if out, err := exec.Command("mount", "-o", "remount,size=1g", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if out, err := exec.Command(bin, "harvest", "-config", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("harvest after space returned: %v\n%s", err, out)
	}
	db, err := store.Open(store.Options{Dir: data, ChangeListLimit: 50000, ChangeListPeriod: 24 * time.Hour, MinFree: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	created := map[string]int{}
	var ctr store.Counter
	db.View(context.Background(), func(s *store.Snap) error {
		ctr, _ = s.Counter("demo", "oai_dc")
		return s.Events("demo", "oai_dc", 0, func(e *store.Event) error { created[e.Identifier]++; return nil })
	})
	live := 0
	for i := 0; i < up.Len(); i++ {
		if it, ok := up.Item(i, "oai_dc"); ok && !it.Deleted {
			live++
		}
	}
	if ctr.Live != int64(live) || len(created) != live || int(ctr.Seq) != live {
		t.Fatalf("after resuming: counter %+v, %d records with events; upstream has %d live", ctr, len(created), live)
	}
}

// TestSmallDisk: a store.min_free below the floor is refused before anything
// is written (it let a memtable flush die with SIGBUS on a 30 MiB disk), and
// a fresh data directory on a disk below the reserve gets a clear message
// from harvest and serve instead of "no manifest found, required for
// read-only db" (issue 21, items 3 and 8). The floor is the store's.
func TestSmallDisk(t *testing.T) {
	if config.MinFreeFloor != store.ReserveFloor(store.DefaultMemTableSize) {
		t.Fatalf("config.MinFreeFloor %d, store.ReserveFloor %d", config.MinFreeFloor, store.ReserveFloor(store.DefaultMemTableSize))
	}
	dir, mnt := mountTmpfs(t, "30m")
	bin := buildBinary(t, dir)
	up := httptest.NewServer(oaiserver.New(oaiserver.Options{Records: 1000, Prefixes: []string{"oai_dc"}}))
	defer up.Close()
	data := filepath.Join(mnt, "data")
	write := func(name, store string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(fmt.Sprintf("listen: 127.0.0.1:0\ndata_dir: %s\nlog_level: warn\n%sdefaults:\n  delay: 0s\nrepositories:\n  - name: demo\n    base_url: %s/oai\n", data, store, up.URL)), 0o644)
		return p
	}
	small := write("small.yaml", "store:\n  min_free: 1048576\n")
	out, err := exec.Command(bin, "harvest", "-config", small).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "store.min_free: must be 0") {
		t.Errorf("min_free of 1 MiB: %v\n%s", err, out)
	}
	if _, err := os.Stat(data); err == nil {
		t.Errorf("a refused configuration created %s", data)
	}
	def := write("default.yaml", "")
	for _, args := range [][]string{{"harvest", "-config", def}, {"serve", "-config", def}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "below the reserve") || !strings.Contains(string(out), "a new store cannot be created there") {
			t.Errorf("%s on a fresh directory of a 30 MiB disk: %v\n%s", args[0], err, out)
		}
		for _, bad := range []string{"no manifest found", "fatal error", "SIGBUS"} {
			if strings.Contains(string(out), bad) {
				t.Errorf("%s: %q:\n%s", args[0], bad, out)
			}
		}
	}
}

// fillTo writes a file until the file system holding dir has about left
// bytes free.
func fillTo(t *testing.T, path, dir string, left uint64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := st.Bavail * uint64(st.Bsize)
	if free <= left {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n := (free - left) / uint64(len(chunk)); n > 0; n-- {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// readBase reads serve's stdout until it names the Source Description.
func readBase(t *testing.T, r io.Reader) string {
	t.Helper()
	buf := make([]byte, 4096)
	var out strings.Builder
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if _, rest, ok := strings.Cut(out.String(), "Source Description: "); ok && strings.Contains(rest, "\n") {
			return strings.TrimSuffix(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), "/.well-known/resourcesync")
		}
		if err != nil {
			break
		}
	}
	t.Fatalf("serve did not start: %s", out.String())
	return ""
}
