package mirror

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/bridge/dumps"
	"github.com/rsbridge/rsbridge/oaipmh/oaiserver"
)

// BenchmarkMirror measures the rsbridge mirror command, run as its own
// process against an rsbridge of N records (RSBRIDGE_BENCH_RECORDS,
// default 20,000; RSBRIDGE_BENCH_RECORD_BYTES, default 2,048): a baseline
// from the Resource Dump against one from the Resource List with GETs (8
// at a time), then a catch-up of 1,000 changes from the Change Dump
// against one by GETs, and an audit of the copy; each with its wall time
// and peak RSS.
//
//	go test -run '^$' -bench BenchmarkMirror -benchtime 1x -timeout 60m ./bridge/mirror/
func BenchmarkMirror(b *testing.B) {
	n := envInt("RSBRIDGE_BENCH_RECORDS", 20000)
	size := envInt("RSBRIDGE_BENCH_RECORD_BYTES", 2048)
	bin := buildCommand(b)
	start := time.Now()
	s := newRsbridgeWith(b, oaiserver.Options{Records: n, PageSize: 500, SetCount: -1, RecordBytes: size}, b.TempDir())
	s.dump()
	b.Logf("source of %d records of about %d bytes ready in %v", n, size, time.Since(start).Round(time.Second))
	copies := map[string][2]string{"dump": {b.TempDir(), b.TempDir()}, "get": {b.TempDir(), b.TempDir()}}
	run := func(b *testing.B, name string, extra ...string) {
		c := copies[name]
		args := append([]string{"mirror", "-once", "-dir", c[0], "-state", c[1], "-workers", "8"}, extra...)
		cmd := exec.Command(bin, append(args, s.srv.URL)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		began := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// rusage's maxrss would count the benchmark's own pages (the child
		// starts as a copy of it): the child's VmHWM, read until it exits,
		// is its own.
		var hwm, anon atomic.Int64
		stop := make(chan struct{})
		var poll sync.WaitGroup
		poll.Go(func() {
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				if kib := procStatus(cmd.Process.Pid, "VmHWM:"); kib > hwm.Load() {
					hwm.Store(kib)
				}
				if kib := procStatus(cmd.Process.Pid, "RssAnon:"); kib > anon.Load() {
					anon.Store(kib)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		err := cmd.Wait()
		close(stop)
		poll.Wait()
		if err != nil {
			b.Fatalf("%v\n%s", err, out.Bytes())
		}
		b.ReportMetric(time.Since(began).Seconds(), "s")
		b.ReportMetric(float64(hwm.Load())/1024, "peak-RSS-MiB")
		// Anonymous memory: what the process allocated, without the
		// mapped pages of its state's files, which the kernel may drop.
		b.ReportMetric(float64(anon.Load())/1024, "peak-RssAnon-MiB")
		b.Logf("%s", out.Bytes())
	}
	b.Run(fmt.Sprintf("baseline/records=%d/dump", n), func(b *testing.B) {
		for b.Loop() {
			run(b, "dump")
		}
	})
	b.Run(fmt.Sprintf("baseline/records=%d/get", n), func(b *testing.B) {
		for b.Loop() {
			run(b, "get", "-no-dumps")
		}
	})
	// An audit of the copy the GETs made: every file read and hashed,
	// the lists' URIs and the states' paths marked in the state's store.
	b.Run(fmt.Sprintf("audit/records=%d", n), func(b *testing.B) {
		for b.Loop() {
			run(b, "get", "-audit")
		}
	})
	// 1,000 changes, their list closed and dumped.
	at := s.clk.Add(time.Minute)
	for i := range 1000 {
		s.up.Update(i*(n/1000), at)
	}
	s.clk.Add(time.Minute)
	s.harvest()
	s.clk.Add(2 * time.Hour)
	d := dumps.New(s.src, s.db, dumps.Options{Dir: s.dumps, Now: s.clk.Now})
	d.Work(context.Background())
	if err := d.LastError(); err != nil {
		b.Fatal(err)
	}
	b.Run("catch-up/changes=1000/change-dump", func(b *testing.B) {
		for b.Loop() {
			run(b, "dump")
		}
	})
	b.Run("catch-up/changes=1000/get", func(b *testing.B) {
		for b.Loop() {
			run(b, "get", "-no-dumps")
		}
	})
}

// procStatus reads a field of a process's /proc status (KiB), 0 once it
// is gone.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
