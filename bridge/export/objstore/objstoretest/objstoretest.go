// Package objstoretest runs the real servers an export is read through, for
// tests: versitygw (an S3 gateway over a directory), a counting proxy in
// front of it, and Debian's nginx serving an export directory.
//
// A test that needs a missing server skips, unless CI=true: then it fails
// with an install hint, so a CI run without the servers cannot pass by
// accident (.ci/run installs both).
package objstoretest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// missing skips t, or fails it when CI=true, because a server is not
// installed.
func missing(t testing.TB, what, hint string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found (CI=true, so not skipping); install it: %s", what, hint)
	}
	t.Skipf("%s not found; install it to run this test: %s", what, hint)
}

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
// Servers are started with a retry in case another process took it since.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects a child process's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // enough to explain a failure
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a started server process.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // from Wait; read after done
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{name: filepath.Base(cmd.Path), cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop kills the process and waits for it.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.done
}

// waitHTTP waits until url answers any HTTP response. It returns an error,
// with the process's output, if the process exits first or time runs out.
func (p *proc) waitHTTP(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before answering (%v); output:\n%s", p.name, p.err, p.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer %s within %v; output:\n%s", p.name, url, timeout, p.out)
		}
	}
}

// addrInUse reports whether a failed start was a lost race for the port.
func (p *proc) addrInUse() bool {
	return strings.Contains(p.out.String(), "address already in use")
}

// goBin returns name from PATH or from $(go env GOPATH)/bin, or "".
func goBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		out, err := exec.Command("go", "env", "GOPATH").Output()
		if err != nil {
			return ""
		}
		gopath = strings.TrimSpace(string(out))
	}
	for dir := range strings.SplitSeq(gopath, string(os.PathListSeparator)) {
		p := filepath.Join(dir, "bin", name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
