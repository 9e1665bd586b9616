package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/rsbridge/rsbridge/bridge/export/objstore"
)

// pool writes objects with a bounded number of writes in flight; the run
// owns it and stops it when it ends.
type pool struct {
	ctx    context.Context
	cancel context.CancelFunc
	st     objstore.Store
	jobs   chan job
	wg     sync.WaitGroup // workers
	busy   sync.WaitGroup // jobs queued or in flight
	mu     sync.Mutex
	err    error
	rep    *Report
	totals *Totals
	// onUnexportable is told of an object the target cannot hold (its key
	// is invalid there, or clashes with a directory); the run goes on.
	onUnexportable func(key string, err error)
}

// unexportable reports whether err is a target refusing a key, not a
// failure of the target.
func unexportable(err error) bool {
	return errors.Is(err, objstore.ErrCollision) || errors.Is(err, objstore.ErrInvalidKey)
}

type job struct {
	key  string
	body []byte
	meta objstore.Meta
	del  bool
}

func newPool(ctx context.Context, st objstore.Store, workers int, rep *Report, totals *Totals) *pool {
	ctx, cancel := context.WithCancel(ctx)
	p := &pool{ctx: ctx, cancel: cancel, st: st, jobs: make(chan job), rep: rep, totals: totals}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *pool) work() {
	defer p.wg.Done()
	for j := range p.jobs {
		err := p.do(j)
		p.busy.Done()
		if err != nil {
			p.fail(err)
		}
	}
}

func (p *pool) do(j job) error {
	if p.ctx.Err() != nil {
		return p.ctx.Err()
	}
	if j.del {
		if err := p.st.Delete(p.ctx, j.key); err != nil {
			return err
		}
		p.counted(0, 0, 1)
		return nil
	}
	if err := p.st.Put(p.ctx, j.key, bytes.NewReader(j.body), int64(len(j.body)), j.meta); err != nil {
		if unexportable(err) && p.onUnexportable != nil {
			p.onUnexportable(j.key, err)
			return nil
		}
		return err
	}
	p.counted(1, int64(len(j.body)), 0)
	return nil
}

func (p *pool) counted(objects, n, deleted int64) {
	p.mu.Lock()
	p.rep.Objects += objects
	p.rep.Bytes += n
	p.rep.Deleted += deleted
	p.mu.Unlock()
	p.totals.Objects.Add(objects)
	p.totals.Bytes.Add(n)
	p.totals.Deleted.Add(deleted)
}

func (p *pool) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
		p.cancel()
	}
}

// put queues an object write; it blocks while every worker is busy.
func (p *pool) put(key string, body []byte, m objstore.Meta) error {
	return p.queue(job{key: key, body: body, meta: m})
}

// remove queues an object's deletion.
func (p *pool) remove(key string) error { return p.queue(job{key: key, del: true}) }

func (p *pool) queue(j job) error {
	p.busy.Add(1)
	select {
	case p.jobs <- j:
		return nil
	case <-p.ctx.Done():
		p.busy.Done()
		return p.firstErr()
	}
}

func (p *pool) firstErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	return p.ctx.Err()
}

// wait returns once every queued job is done, with the first error.
func (p *pool) wait() error {
	p.busy.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// stop ends the workers.
func (p *pool) stop() {
	p.cancel()
	close(p.jobs)
	p.wg.Wait()
}

// spool holds a rendered document while it is hashed: in memory up to
// spoolMemory, then in a temporary file.
type spool struct {
	dir  string
	buf  bytes.Buffer
	file *os.File
	n    int64
	h    hash.Hash
}

const spoolMemory = 4 << 20

func newSpool(dir string) *spool { return &spool{dir: dir, h: sha256.New()} }

func (s *spool) Write(b []byte) (int, error) {
	s.h.Write(b)
	s.n += int64(len(b))
	if s.file == nil && s.buf.Len()+len(b) <= spoolMemory {
		return s.buf.Write(b)
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "rsbridge-export-*")
		if err != nil {
			return 0, fmt.Errorf("spool a large document: %w", err)
		}
		s.file = f
		if _, err := f.Write(s.buf.Bytes()); err != nil {
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	return s.file.Write(b)
}

func (s *spool) sum() string { return hex.EncodeToString(s.h.Sum(nil)) }

// reader reads the document from its start.
func (s *spool) reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.buf.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
}
