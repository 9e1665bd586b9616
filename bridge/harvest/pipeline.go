package harvest

import (
	"context"
	"sync"

	"github.com/rsbridge/rsbridge/oaipmh"
)

// The harvest pipeline: a fetcher goroutine requests and decodes list pages
// one after the other and hands their records over as they are decoded,
// while the harvest applies and commits the pages before them. So page N+1
// is fetched and decoded while page N is written, and the commit wait
// (Badger's write to the value log and memtable, and the periodic fsync)
// overlaps the network and the decoder.
//
// What is in flight is bounded by bytes, not pages: records wait in the
// hand-over only while they fit pipeBudget (a single larger record passes
// alone), so memory stays flat whatever the page size. If a page's body
// breaks off and the client fetches it again, its first records are handed
// over a second time, as without the pipeline: applying a record is
// idempotent within the page's batch.

// pipeBudget is the metadata bytes the fetcher may decode ahead.
const pipeBudget = 16 << 20

// pipeItem is one hand-over: the start of a page (query set), a record, or
// the end of a page (page set, or err when the request failed; the fetcher
// stops after an error or the last page).
type pipeItem struct {
	start bool
	query oaipmh.Query
	rec   *oaipmh.Record
	page  *oaipmh.Page
	err   error
}

// fetcher is one running pipeline.
type fetcher struct {
	items  chan pipeItem
	cancel context.CancelFunc
	done   chan struct{}
	budget *byteBudget
}

// fetch starts fetching the list from q. Stop it (always) when done with it.
func (h *Harvester) fetch(ctx context.Context, q oaipmh.Query) *fetcher {
	ctx, cancel := context.WithCancel(ctx)
	f := &fetcher{items: make(chan pipeItem, 1024), cancel: cancel, done: make(chan struct{}), budget: newByteBudget(pipeBudget)}
	context.AfterFunc(ctx, f.budget.wake) // a fetcher waiting for budget sees the end
	go func() {
		defer close(f.done)
		defer close(f.items)
		send := func(it pipeItem) bool {
			select {
			case f.items <- it:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			if !send(pipeItem{start: true, query: q}) {
				return
			}
			page, err := h.client.ListRecords(ctx, q, func(rec *oaipmh.Record) error {
				if err := f.budget.acquire(ctx, len(rec.Metadata)); err != nil {
					return err
				}
				if !send(pipeItem{rec: rec}) {
					return ctx.Err()
				}
				return nil
			})
			if !send(pipeItem{page: page, err: err}) || err != nil || page.Done() {
				return
			}
			q = oaipmh.Query{Token: page.Token.Value}
		}
	}()
	return f
}

// next returns the next hand-over; ok is false when the fetcher has stopped.
func (f *fetcher) next() (pipeItem, bool) {
	it, ok := <-f.items
	return it, ok
}

// applied gives a record's bytes back to the budget once it is applied.
func (f *fetcher) applied(rec *oaipmh.Record) { f.budget.release(len(rec.Metadata)) }

// stop ends the fetcher and waits for its goroutine.
func (f *fetcher) stop() {
	f.cancel()
	for range f.items { // unblock a pending send
	}
	<-f.done
}

// byteBudget bounds the bytes in flight; one item larger than the whole
// budget passes when nothing else is in flight.
type byteBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int
	used int
}

func newByteBudget(max int) *byteBudget {
	b := &byteBudget{max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *byteBudget) acquire(ctx context.Context, n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.max {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	b.used += n
	return nil
}

// wake lets waiters look at their context again.
func (b *byteBudget) wake() {
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *byteBudget) release(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}
