package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExitCodesForSystemd starts the real binary as systemd would and checks
// the exit-code contract docs/rsbridge.service relies on (issue 21, item 2):
// a bad configuration exits 2, which RestartPreventExitStatus=2 does not
// retry; a crash aborts with SIGABRT, which Restart=on-failure restarts (it
// used to exit 2 like a bad configuration and was never restarted, while a
// bad configuration exited 1 and restarted every 5 s for ever).
func TestExitCodesForSystemd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	unit, err := os.ReadFile("../../docs/rsbridge.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Restart=on-failure", "RestartPreventExitStatus=2"} {
		if !bytes.Contains(unit, []byte("\n"+line+"\n")) {
			t.Errorf("the unit lacks %s", line)
		}
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("listn: 127.0.0.1:0\nrepositories:\n  - name: r\n    base_url: http://127.0.0.1:1/oai\n"), 0o644)
	for _, args := range [][]string{{"serve", "-config", bad}, {"serve", "-config", filepath.Join(dir, "missing.yaml")}, {"harvest", "-config", bad}} {
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit status 2\n%s", args, err, stderr.String())
		}
	}
	// A crash: SIGQUIT makes the Go runtime dump its stacks and die as it
	// does on a fatal error.
	good := writeConfig(t, dir, filepath.Join(dir, "data"), "http://127.0.0.1:1", "")
	cmd := exec.Command(bin, "serve", "-config", good)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !strings.Contains(stderr.String(), "msg=serving"); {
		if time.Since(start) > 30*time.Second {
			cmd.Process.Kill()
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGQUIT)
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Fatalf("after a crash: %v (%v), want killed by SIGABRT so systemd restarts it", err, cmd.ProcessState)
	}
	if !strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("no stack dump:\n%.2000s", stderr.String())
	}
}
