package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is a Store on a local directory, for a static web server (nginx,
// Apache, a CDN origin) to serve. Every file operation goes through an
// os.Root, so no key and no symlink planted in the tree can reach outside it.
//
// Put writes the object to a staging file in root/.rsbridge-tmp (same
// filesystem, so the later rename is atomic) and queues it; Delete queues a
// removal. Flush makes the staged data durable with one syncfs, applies the
// queue in order (rename into place, creating parent directories 0755;
// remove, then prune directories left empty), and syncs again so the renames
// are durable. A crash before Flush leaves only staging files, which OpenDir
// removes. Memory grows with the queue between Flushes, not with the tree.
//
// Meta is ignored: a static server sets Content-Type and Cache-Control from
// its own configuration (for nginx: types, default_type and expires or
// add_header).
//
// A Put whose key would need a file where a directory is ("a" while "a/b"
// exists) or a directory where a file is ("a/b" while "a" exists), on disk or
// in the queue, fails at once with ErrCollision. The one case Put leaves to
// Flush is a key that is a directory with deletions queued below it (they
// may empty it); if they do not, Flush reports the collision the same way.
//
// The web server must not serve .rsbridge-tmp (see StagingDir).
//
// OpenDir holds an exclusive lock (flock on .rsbridge-tmp/.lock) until Close,
// so two exports cannot share a directory. Dir is safe for concurrent use:
// Puts write their staging files in parallel and wait for a running Flush
// only to join the queue.
type Dir struct {
	path  string
	root  *os.Root
	stage *os.Root // root/.rsbridge-tmp, so creating a staging file is one openat
	lock  *os.File // flock holder; also the descriptor syncfs syncs through
	seq   atomic.Uint64

	mu      sync.Mutex
	closed  bool
	queue   []dirOp
	last    map[string]bool // queued key → its last queued op is a Put
	putDirs map[string]int  // directory → queued Puts below it
	delDirs map[string]int  // directory → queued Deletes below it
}

// dirOp is one queued operation: a Put when tmp is set, else a Delete.
type dirOp struct {
	key string
	tmp string // staging file, relative to the root
}

const lockName = StagingDir + "/.lock"

// OpenDir opens (creating it if needed) the export directory root, locks it
// and removes staging files a crashed export left behind.
func OpenDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("export directory %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, StagingDir), 0o755); err != nil {
		return nil, fmt.Errorf("export directory %s: create staging directory: %w (check the path and its permissions)", abs, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("export directory %s: %w", abs, err)
	}
	d := &Dir{path: abs, root: r, last: map[string]bool{}, putDirs: map[string]int{}, delDirs: map[string]int{}}
	if err := d.lockAndClean(); err != nil {
		if d.lock != nil {
			d.lock.Close()
		}
		r.Close()
		return nil, err
	}
	if d.stage, err = r.OpenRoot(StagingDir); err != nil {
		d.lock.Close()
		r.Close()
		return nil, fmt.Errorf("%s: open staging directory: %w", d, err)
	}
	return d, nil
}

func (d *Dir) lockAndClean() error {
	f, err := d.root.OpenFile(lockName, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: open lock file: %w", d, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%s: another export is writing to it (lock %s); wait for it or pick another directory", d, filepath.Join(d.path, lockName))
		}
		return fmt.Errorf("%s: lock: %w", d, err)
	}
	d.lock = f
	tmp, err := d.root.Open(StagingDir)
	if err != nil {
		return fmt.Errorf("%s: open staging directory: %w", d, err)
	}
	defer tmp.Close()
	names, err := tmp.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("%s: read staging directory: %w", d, err)
	}
	for _, n := range names {
		if n == path.Base(lockName) {
			continue
		}
		if err := d.root.RemoveAll(path.Join(StagingDir, n)); err != nil {
			return fmt.Errorf("%s: remove leftover staging file: %w", d, err)
		}
	}
	return nil
}

// String names the target: "directory /abs/path".
func (d *Dir) String() string { return "directory " + d.path }

// Path is the absolute path of the export directory.
func (d *Dir) Path() string { return d.path }

// Put stages the object; it becomes visible at the next Flush. m is ignored.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader, size int64, m Meta) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("%s: put: %w", d, err)
	}
	if size < 0 {
		return fmt.Errorf("%s: put %q: negative size %d", d, key, size)
	}
	name := "put-" + strconv.FormatUint(d.seq.Add(1), 10)
	if err := d.writeTmp(ctx, name, r, size); err != nil {
		return fmt.Errorf("%s: put %q: %w", d, key, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.checkPut(key)
	if err == nil && d.closed {
		err = os.ErrClosed
	}
	if err != nil {
		d.stage.Remove(name)
		return fmt.Errorf("%s: put %q: %w", d, key, err)
	}
	d.enqueue(dirOp{key: key, tmp: StagingDir + "/" + name})
	return nil
}

func (d *Dir) writeTmp(ctx context.Context, name string, r io.Reader, size int64) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := d.stage.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("stage: %w", cerr)
		}
		if err != nil {
			d.stage.Remove(name)
		}
	}()
	// Chmod, not the umask, decides: the web server must read the file.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, size+1))
	switch {
	case err != nil:
		return fmt.Errorf("stage: %w", err)
	case n < size:
		return fmt.Errorf("body is %d bytes, shorter than the size %d given", n, size)
	case n > size:
		return fmt.Errorf("body is longer than the size %d given", size)
	}
	return nil
}

// checkPut reports ErrCollision if key cannot become a file after the queued
// operations. d.mu is held.
func (d *Dir) checkPut(key string) error {
	onDisk := true // false once a parent is known not to exist on disk
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		p := key[:i]
		if put, ok := d.last[p]; ok {
			if put {
				return fmt.Errorf("%w: %q is queued as an object", ErrCollision, p)
			}
			onDisk = false // queued for deletion; Flush removes it first
			continue
		}
		if !onDisk {
			continue
		}
		fi, err := d.root.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			onDisk = false
		case err != nil:
			return err
		case !fi.IsDir():
			return fmt.Errorf("%w: %q is an object", ErrCollision, p)
		}
	}
	if d.delDirs[key] > 0 {
		return nil // queued deletes may empty the directory; Flush decides
	}
	if d.putDirs[key] > 0 {
		return fmt.Errorf("%w: objects below %q are queued", ErrCollision, key+"/")
	}
	if onDisk {
		if fi, err := d.root.Lstat(key); err == nil && fi.IsDir() {
			return fmt.Errorf("%w: %q is a directory holding other objects", ErrCollision, key)
		}
	}
	return nil
}

// enqueue appends op to the queue and its indexes. d.mu is held.
func (d *Dir) enqueue(op dirOp) {
	d.queue = append(d.queue, op)
	isPut := op.tmp != ""
	d.last[op.key] = isPut
	for i := 0; i < len(op.key); i++ {
		if op.key[i] == '/' {
			if isPut {
				d.putDirs[op.key[:i]]++
			} else {
				d.delDirs[op.key[:i]]++
			}
		}
	}
}

// Delete queues the removal of key; it takes effect at the next Flush, in
// order with the queued Puts. A missing key, or one that is a directory, is
// not an error.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return fmt.Errorf("%s: delete: %w", d, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: delete %q: %w", d, key, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("%s: delete %q: %w", d, key, os.ErrClosed)
	}
	d.enqueue(dirOp{key: key})
	return nil
}

// Flush applies the queue in order and makes it durable. One failed
// operation does not stop the others: Flush applies all it can and returns
// the failures joined, each naming its key. If ctx ends, the operations not
// yet applied stay queued for the next Flush.
func (d *Dir) Flush(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.queue) == 0 {
		return nil
	}
	if err := d.syncfs(); err != nil {
		return fmt.Errorf("%s: flush: sync staged objects: %w", d, err)
	}
	var errs []error
	done := 0
	for ; done < len(d.queue) && ctx.Err() == nil; done++ {
		if err := d.apply(d.queue[done]); err != nil {
			errs = append(errs, fmt.Errorf("%s: flush: %w", d, err))
		}
	}
	if err := d.syncfs(); err != nil {
		errs = append(errs, fmt.Errorf("%s: flush: sync: %w", d, err))
	}
	rest := d.queue[done:]
	if len(rest) > 0 {
		errs = append(errs, fmt.Errorf("%s: flush: %d operations left queued: %w", d, len(rest), ctx.Err()))
	}
	rest = slices.Clone(rest)
	clear(d.queue) // drop the strings of applied operations
	d.queue = d.queue[:0]
	clear(d.last)
	clear(d.putDirs)
	clear(d.delDirs)
	for _, op := range rest {
		d.enqueue(op)
	}
	return errors.Join(errs...)
}

func (d *Dir) syncfs() error {
	return unix.Syncfs(int(d.lock.Fd()))
}

// apply performs one queued operation. d.mu is held.
func (d *Dir) apply(op dirOp) error {
	if op.tmp == "" {
		return d.remove(op.key)
	}
	err := d.place(op)
	if err != nil {
		d.root.Remove(op.tmp)
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) ||
			errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			err = fmt.Errorf("%w (%w)", ErrCollision, err)
		}
		return fmt.Errorf("put %q: %w", op.key, err)
	}
	return nil
}

func (d *Dir) place(op dirOp) error {
	if dir := path.Dir(op.key); dir != "." {
		if err := d.mkdirs(dir); err != nil {
			return err
		}
	}
	return d.root.Rename(op.tmp, op.key)
}

// mkdirs is MkdirAll with mode 0755 whatever the umask, so the web server
// can enter every directory.
func (d *Dir) mkdirs(dir string) error {
	fi, err := d.root.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if parent := path.Dir(dir); parent != "." {
		if err := d.mkdirs(parent); err != nil {
			return err
		}
	}
	if err := d.root.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return d.root.Chmod(dir, 0o755)
}

// remove deletes the object at key, if any, and then the directories that
// became empty, so a later Put of a parent key does not collide.
func (d *Dir) remove(key string) error {
	fi, err := d.root.Lstat(key)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err == nil {
		err = d.root.Remove(key)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	for p := path.Dir(key); p != "."; p = path.Dir(p) {
		if d.root.Remove(p) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}

// Get opens the object at key (ErrNotFound when missing). It reads what the
// last Flush published, not what is queued.
func (d *Dir) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, fmt.Errorf("%s: get: %w", d, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: get %q: %w", d, key, err)
	}
	f, err := d.root.Open(key)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%s: get %q: %w", d, key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: get %q: %w", d, key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = ErrNotFound
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: get %q: %w", d, key, err)
	}
	return f, nil
}

// List calls fn for every published object whose key starts with prefix, in
// key order. It skips the staging directory, symlinks, other non-regular
// files and names that are not valid keys. It holds the names of the
// directories on the path being walked, one directory per level.
func (d *Dir) List(ctx context.Context, prefix string, fn func(Object) error) error {
	if err := d.walk(ctx, d.root, "", prefix, fn); err != nil {
		return fmt.Errorf("%s: list %q: %w", d, prefix, err)
	}
	return nil
}

// errStop ends a walk early without being an error.
var errStop = errors.New("stop")

func (d *Dir) walk(ctx context.Context, dir *os.Root, dirKey, prefix string, fn func(Object) error) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := d.visit(ctx, dir, dirKey, name, prefix, fn, d.walk); err != nil {
			return err
		}
	}
	return nil
}

// Walk is List without the order: it streams each directory's entries as
// they are read, so its memory does not follow a directory's size (a
// format's resources are one flat directory). The exporter's sweeps use it.
func (d *Dir) Walk(ctx context.Context, prefix string, fn func(Object) error) error {
	if err := d.walkStream(ctx, d.root, "", prefix, fn); err != nil {
		return fmt.Errorf("%s: walk %q: %w", d, prefix, err)
	}
	return nil
}

func (d *Dir) walkStream(ctx context.Context, dir *os.Root, dirKey, prefix string, fn func(Object) error) error {
	f, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			name := e.Name()
			switch {
			case e.IsDir():
				name += "/"
			case !e.Type().IsRegular():
				continue
			}
			if err := d.visit(ctx, dir, dirKey, name, prefix, fn, d.walkStream); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// visit handles one directory entry of a walk (a directory's name ends in
// '/'): recurse into directories on the prefix's path, call fn for files
// under the prefix.
func (d *Dir) visit(ctx context.Context, dir *os.Root, dirKey, name, prefix string, fn func(Object) error,
	recurse func(context.Context, *os.Root, string, string, func(Object) error) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := dirKey + name
	if sub, ok := strings.CutSuffix(name, "/"); ok {
		if key == StagingDir+"/" || !(strings.HasPrefix(key, prefix) || strings.HasPrefix(prefix, key)) {
			return nil
		}
		return d.walkSub(ctx, dir, sub, key, prefix, fn, recurse)
	}
	if !strings.HasPrefix(key, prefix) || ValidKey(key) != nil {
		return nil
	}
	fi, err := dir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return nil // removed meanwhile, or not a plain file
	}
	if err != nil {
		return err
	}
	return fn(Object{Key: key, Size: fi.Size()})
}

func (d *Dir) walkSub(ctx context.Context, dir *os.Root, name, key, prefix string, fn func(Object) error,
	recurse func(context.Context, *os.Root, string, string, func(Object) error) error) error {
	sub, err := dir.OpenRoot(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // removed or replaced meanwhile
	}
	if err != nil {
		return err
	}
	defer sub.Close()
	return recurse(ctx, sub, key, prefix, fn)
}

// readNames returns the names in dir sorted so that walking them gives keys
// in byte order: a directory's name carries its trailing '/' ("a-b" sorts
// before "a/"). Entries other than directories and regular files are left
// out.
func readNames(dir *os.Root) ([]string, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			switch {
			case e.IsDir():
				names = append(names, e.Name()+"/")
			case e.Type().IsRegular():
				names = append(names, e.Name())
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(names)
	return names, nil
}

// Close releases the lock and discards what was not flushed (its staging
// files are removed). Call Flush first to publish.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	for _, op := range d.queue {
		if op.tmp != "" {
			d.root.Remove(op.tmp)
		}
	}
	d.queue = nil
	return errors.Join(d.lock.Close(), d.stage.Close(), d.root.Close())
}
