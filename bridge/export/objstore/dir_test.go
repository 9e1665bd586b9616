package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func openDir(t *testing.T) *Dir {
	t.Helper()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func put(t *testing.T, s Store, key, body string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(body), int64(len(body)), Meta{ContentType: "application/xml"}); err != nil {
		t.Fatal(err)
	}
}

func flush(t *testing.T, s Store) {
	t.Helper()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s Store, key string) (string, error) {
	t.Helper()
	rc, err := s.Get(context.Background(), key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

func list(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	var got []string
	err := s.List(context.Background(), prefix, func(o Object) error {
		got = append(got, fmt.Sprintf("%s=%d", o.Key, o.Size))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDirPutFlushGetListDelete(t *testing.T) {
	d := openDir(t)
	ctx := context.Background()
	put(t, d, "r/oai:x:1/2", "one")
	put(t, d, "a-c", "three")
	put(t, d, "a/b", "two")
	put(t, d, "a+b c%d", "four")
	if _, err := get(t, d, "a/b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Flush: %v, want ErrNotFound", err)
	}
	if got := list(t, d, ""); len(got) != 0 {
		t.Fatalf("List before Flush: %v", got)
	}
	flush(t, d)
	if got, err := get(t, d, "r/oai:x:1/2"); err != nil || got != "one" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	// Key (byte) order: '+' < '-' < '/', so "a-c" comes before "a/b".
	want := []string{"a+b c%d=4", "a-c=5", "a/b=3", "r/oai:x:1/2=3"}
	if got := list(t, d, ""); !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if got := list(t, d, "a"); !slices.Equal(got, want[:3]) {
		t.Fatalf("List(a) = %v", got)
	}
	if got := list(t, d, "a/"); !slices.Equal(got, want[2:3]) {
		t.Fatalf("List(a/) = %v", got)
	}
	if got := list(t, d, "r/oai:x:1/"); !slices.Equal(got, want[3:]) {
		t.Fatalf("List(r/oai:x:1/) = %v", got)
	}
	fi, err := os.Stat(filepath.Join(d.Path(), "r/oai:x:1/2"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("file mode %v, %v; want 0644", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(d.Path(), "r/oai:x:1")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("dir mode %v, %v; want 0755", fi.Mode(), err)
	}

	for _, k := range []string{"r/oai:x:1/2", "missing", "a/b/c"} {
		if err := d.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := get(t, d, "r/oai:x:1/2"); err != nil {
		t.Fatalf("deleted before Flush: %v", err)
	}
	flush(t, d)
	if _, err := get(t, d, "r/oai:x:1/2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "r")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty directories left after Delete: %v", err)
	}
	// Now "r" may be an object.
	put(t, d, "r", "r")
	flush(t, d)
	if got, _ := get(t, d, "r"); got != "r" {
		t.Fatalf("Get(r) = %q", got)
	}
}

func TestDirOrderWithinFlush(t *testing.T) {
	d := openDir(t)
	ctx := context.Background()
	put(t, d, "k", "old")
	flush(t, d)
	// Delete then Put: the Put wins; Put then Delete: the Delete wins.
	d.Delete(ctx, "k")
	put(t, d, "k", "new")
	put(t, d, "j", "j")
	d.Delete(ctx, "j")
	put(t, d, "i", "1")
	put(t, d, "i", "2")
	flush(t, d)
	if got, err := get(t, d, "k"); got != "new" {
		t.Fatalf("k = %q, %v", got, err)
	}
	if _, err := get(t, d, "j"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("j: %v", err)
	}
	if got, _ := get(t, d, "i"); got != "2" {
		t.Fatalf("i = %q", got)
	}
	// A file replaced by a directory, and back, within one Flush.
	d.Delete(ctx, "k")
	put(t, d, "k/x", "x")
	flush(t, d)
	d.Delete(ctx, "k/x")
	put(t, d, "k", "file again")
	flush(t, d)
	if got, _ := get(t, d, "k"); got != "file again" {
		t.Fatalf("k = %q", got)
	}
	assertNoStaging(t, d)
}

func TestDirCollision(t *testing.T) {
	d := openDir(t)
	ctx := context.Background()
	put(t, d, "a/b", "x")
	put(t, d, "f", "x")
	for _, k := range []string{"a", "a/b/c"} { // against the queue
		if err := d.Put(ctx, k, strings.NewReader("y"), 1, Meta{}); !errors.Is(err, ErrCollision) || !strings.Contains(err.Error(), k) {
			t.Errorf("Put(%q) = %v, want ErrCollision naming the key", k, err)
		}
	}
	flush(t, d)
	for _, k := range []string{"a", "a/b/c", "f/g"} { // against the disk
		if err := d.Put(ctx, k, strings.NewReader("y"), 1, Meta{}); !errors.Is(err, ErrCollision) {
			t.Errorf("Put(%q) = %v, want ErrCollision", k, err)
		}
	}
	// Undecidable at Put (a queued delete below "a", which does not empty
	// it): Flush reports it, applies everything else, and loses nothing.
	os.WriteFile(filepath.Join(d.Path(), "a/other"), []byte("z"), 0o644)
	d.Delete(ctx, "a/b")
	put(t, d, "a", "collides")
	put(t, d, "ok", "fine")
	err := d.Flush(ctx)
	if !errors.Is(err, ErrCollision) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("Flush = %v, want ErrCollision naming \"a\"", err)
	}
	if got, _ := get(t, d, "ok"); got != "fine" {
		t.Fatalf("ok = %q: other objects lost after a failed one", got)
	}
	if _, err := get(t, d, "a/b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a/b: %v", err)
	}
	assertNoStaging(t, d)
	flush(t, d) // the failed operation is not retried
}

func TestDirSizeMismatch(t *testing.T) {
	d := openDir(t)
	ctx := context.Background()
	for _, size := range []int64{2, 4} {
		if err := d.Put(ctx, "k", strings.NewReader("abc"), size, Meta{}); err == nil {
			t.Errorf("Put of 3 bytes with size %d succeeded", size)
		}
	}
	if err := d.Put(ctx, "../x", strings.NewReader(""), 0, Meta{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Put(../x) = %v", err)
	}
	flush(t, d)
	assertNoStaging(t, d)
}

func assertNoStaging(t *testing.T, d *Dir) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(d.Path(), StagingDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != ".lock" {
			t.Errorf("staging file left: %s", e.Name())
		}
	}
}

func TestDirCrashLeavesOnlyStaging(t *testing.T) {
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDir(root); err == nil || !strings.Contains(err.Error(), "another export") {
		t.Fatalf("second OpenDir = %v, want a lock error", err)
	}
	put(t, d, "published", "p")
	flush(t, d)
	put(t, d, "staged/x", "s")
	// Crash: the process dies without Flush or Close.
	d.lock.Close()
	d.stage.Close()
	d.root.Close()

	if n := countFiles(t, filepath.Join(root, StagingDir)); n != 2 { // .lock and one staged object
		t.Fatalf("%d files in staging before reopening, want 2", n)
	}
	d2, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	assertNoStaging(t, d2)
	if got := list(t, d2, ""); !slices.Equal(got, []string{"published=1"}) {
		t.Fatalf("after crash: %v", got)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestDirConcurrentPuts(t *testing.T) {
	d := openDir(t)
	ctx := context.Background()
	const workers, each = 16, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("w%02d/o%03d", w, i)
				if err := d.Put(ctx, key, strings.NewReader(key), int64(len(key)), Meta{}); err != nil {
					t.Error(err)
				}
				if i%20 == 0 {
					if err := d.Flush(ctx); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	flush(t, d)
	n := 0
	err := d.List(ctx, "", func(o Object) error {
		if want := int64(len(o.Key)); o.Size != want {
			t.Errorf("%s: size %d", o.Key, o.Size)
		}
		n++
		return nil
	})
	if err != nil || n != workers*each {
		t.Fatalf("listed %d objects, %v; want %d", n, err, workers*each)
	}
	assertNoStaging(t, d)
}

func TestDirListStopsAndSkips(t *testing.T) {
	d := openDir(t)
	put(t, d, "a", "1")
	put(t, d, "b", "2")
	flush(t, d)
	os.Symlink("a", filepath.Join(d.Path(), "link"))
	stop := errors.New("enough")
	var seen []string
	err := d.List(context.Background(), "", func(o Object) error { seen = append(seen, o.Key); return stop })
	if !errors.Is(err, stop) || !slices.Equal(seen, []string{"a"}) {
		t.Fatalf("List = %v after %v, want the callback's error after one object", err, seen)
	}
	if got := list(t, d, ""); !slices.Equal(got, []string{"a=1", "b=1"}) {
		t.Fatalf("List = %v (staging directory or symlink listed?)", got)
	}
}

func TestDirFlushCanceledKeepsQueue(t *testing.T) {
	d := openDir(t)
	put(t, d, "a", "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush = %v, want context.Canceled", err)
	}
	flush(t, d)
	if got, _ := get(t, d, "a"); got != "1" {
		t.Fatalf("a = %q after a canceled then a full Flush", got)
	}
}

func TestDirCloseDiscardsStaged(t *testing.T) {
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	put(t, d, "a", "1")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countFiles(t, filepath.Join(root, StagingDir)); n != 1 {
		t.Fatalf("%d files in staging after Close, want only .lock", n)
	}
	if err := d.Put(context.Background(), "b", strings.NewReader(""), 0, Meta{}); err == nil {
		t.Fatal("Put after Close succeeded")
	}
}

// BenchmarkDirPut measures staging plus publishing 4 KiB objects, flushed
// every 1000 like the exporter.
func BenchmarkDirPut(b *testing.B) {
	d, err := OpenDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	body := strings.Repeat("<x/>", 1024)
	i := 0
	for b.Loop() {
		key := fmt.Sprintf("r/p/resource/oai:x:%d", i)
		if err := d.Put(ctx, key, strings.NewReader(body), int64(len(body)), Meta{}); err != nil {
			b.Fatal(err)
		}
		if i++; i%1000 == 0 {
			if err := d.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := d.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// TestDirWalk: Walk finds what List finds, in any order, with the same
// prefix rules, and skips the staging directory.
func TestDirWalk(t *testing.T) {
	d := openDir(t)
	keys := []string{"a/1", "a/2", "a/b/3", "ab", "c/4", ".well-known/resourcesync"}
	for i := range 3000 {
		keys = append(keys, fmt.Sprintf("r/res/%05d", i))
	}
	for _, k := range keys {
		put(t, d, k, "x")
	}
	flush(t, d)
	for _, prefix := range []string{"", "a/", "a", "r/res/", "r/res/0299", "none/"} {
		var walked []string
		if err := d.Walk(context.Background(), prefix, func(o Object) error {
			walked = append(walked, fmt.Sprintf("%s=%d", o.Key, o.Size))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(walked)
		want := list(t, d, prefix)
		slices.Sort(want)
		if !slices.Equal(walked, want) {
			t.Errorf("Walk(%q): %d keys, List: %d", prefix, len(walked), len(want))
		}
	}
}
