package harvest

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rsbridge/rsbridge/bridge/crosswalk"
	"github.com/rsbridge/rsbridge/store"
)

// Record quality (issue 20): every live record of a format rsbridge can
// check is checked the way IRDB checks it, after each harvest and
// derivation, from the format's change events since the last check (all
// records when the checks change). The findings are kept per record and
// summed per format (store/quality.go); they never hold a record back:
// publishing is the harvest's and the derivation's business alone.

// Check is the record check of one format.
type Check struct {
	Prefix  string
	Version string // changes whenever the findings for some input change
	Run     func(metadata []byte) []store.QualityIssue
}

// Checks are the checks rsbridge has, by format: IRDB's junii2 checks, and
// the JPCOAR 2.0 checks of IRDB and the community validators.
func Checks() map[string]Check {
	conv := func(f func([]byte) []crosswalk.Issue) func([]byte) []store.QualityIssue {
		return func(b []byte) []store.QualityIssue {
			var out []store.QualityIssue
			for _, i := range f(b) {
				if i.Level != crosswalk.LevelNormalised { // a repair, not a fault
					out = append(out, store.QualityIssue{Level: string(i.Level), Code: i.Code})
				}
			}
			return out
		}
	}
	return map[string]Check{
		"junii2":     {Prefix: "junii2", Version: crosswalk.Version, Run: conv(crosswalk.CheckJunii2)},
		"jpcoar_2.0": {Prefix: "jpcoar_2.0", Version: crosswalk.Version, Run: conv(crosswalk.CheckJPCOAR)},
	}
}

// checkAll checks every format of the repository that has a check.
func (h *Harvester) checkAll(ctx context.Context) error {
	var errs []error
	for _, prefix := range h.repo.MetadataPrefixes {
		if c, ok := h.checks[prefix]; ok {
			if err := h.checkFormat(ctx, c); err != nil {
				errs = append(errs, h.fail(Result{Prefix: prefix}, "check", "records", err).Err)
			}
		}
	}
	return errors.Join(errs...)
}

// checkFormat brings a format's quality up to date.
func (h *Harvester) checkFormat(ctx context.Context, c Check) error {
	var q store.Quality
	var head store.Counter
	err := h.db.View(ctx, func(snap *store.Snap) error {
		var err error
		if q, err = snap.Quality(h.repo.Name, c.Prefix); err != nil {
			return err
		}
		head, err = snap.Counter(h.repo.Name, c.Prefix)
		return err
	})
	if err != nil || q.Version == c.Version && q.Seq == head.Seq {
		return err
	}
	k := &checking{h: h, c: c, q: q}
	if q.Version == c.Version {
		err = k.events(ctx, head.Seq)
	}
	if q.Version != c.Version || errors.Is(err, errGap) {
		err = k.everything(ctx, head.Seq)
	}
	if err != nil {
		return err
	}
	return k.summarise(ctx)
}

// checking is one format's check under way.
type checking struct {
	h *Harvester
	c Check
	q store.Quality
}

// events checks the records of the format's events after the cursor.
func (k *checking) events(ctx context.Context, head uint64) error {
	d := &derivation{h: k.h, conv: Conversion{From: k.c.Prefix}, cp: store.Checkpoint{DerivedSeq: k.q.Seq}}
	for k.q.Seq < head {
		ids, last, err := d.nextEvents(ctx, head)
		if err != nil {
			return err
		}
		d.cp.DerivedSeq, k.q.Seq = last, last
		if err := k.commit(ctx, ids); err != nil {
			return err
		}
	}
	return nil
}

// everything checks every live record again and drops the findings of
// records no longer live.
func (k *checking) everything(ctx context.Context, head uint64) error {
	k.q.Version, k.q.Seq = "", 0
	start := ""
	for {
		var ids []string
		var next string
		err := k.h.db.View(ctx, func(snap *store.Snap) error {
			n := 0
			if err := snap.Resources(k.h.repo.Name, k.c.Prefix, store.AllSet, start, "", deriveBatch+1, func(r *store.Record) error {
				if n++; n > deriveBatch {
					next = r.Identifier
				} else {
					ids = append(ids, r.Identifier)
				}
				return nil
			}); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := k.commit(ctx, ids); err != nil {
			return err
		}
		if next == "" {
			break
		}
		start = next
	}
	// Findings of records that are no longer live.
	var gone []string
	err := k.h.db.View(ctx, func(snap *store.Snap) error {
		return snap.QualityIssues(k.h.repo.Name, k.c.Prefix, "", func(id string, _ []store.QualityIssue) error {
			rec, err := snap.Record(k.h.repo.Name, k.c.Prefix, id)
			if err == nil && (rec == nil || rec.Deleted) {
				gone = append(gone, id)
			}
			return err
		})
	})
	if err != nil {
		return err
	}
	k.q.Version, k.q.Seq = k.c.Version, head
	for len(gone) > 0 {
		n := min(len(gone), deriveBatch)
		if err := k.commit(ctx, gone[:n]); err != nil {
			return err
		}
		gone = gone[n:]
	}
	return k.commit(ctx, nil)
}

// commit checks the records ids name (on every core) and stores their
// findings with the cursor.
func (k *checking) commit(ctx context.Context, ids []string) error {
	found := make([][]store.QualityIssue, len(ids))
	metas := make([][]byte, len(ids))
	err := k.h.db.View(ctx, func(snap *store.Snap) error {
		for i, id := range ids {
			// The metadata is stored exactly while the record is live.
			var err error
			if metas[i], err = snap.Metadata(k.h.repo.Name, k.c.Prefix, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(ids), 1)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				if metas[i] != nil {
					found[i] = k.c.Run(metas[i])
				}
			}
		})
	}
	wg.Wait()
	issues := make(map[string][]store.QualityIssue, len(ids))
	for i, id := range ids {
		issues[id] = found[i] // nil: no finding (or no longer live): the entry goes
	}
	return k.h.db.PutQuality(k.h.repo.Name, k.c.Prefix, issues, k.q)
}

// summarise sums the findings per level and per code.
func (k *checking) summarise(ctx context.Context) error {
	k.q.Records, k.q.Codes = map[string]int64{}, map[string]int64{}
	err := k.h.db.View(ctx, func(snap *store.Snap) error {
		ctr, err := snap.Counter(k.h.repo.Name, k.c.Prefix)
		if err != nil {
			return err
		}
		k.q.Checked = ctr.Live
		return snap.QualityIssues(k.h.repo.Name, k.c.Prefix, "", func(_ string, issues []store.QualityIssue) error {
			levels, codes := map[string]bool{}, map[string]bool{}
			for _, i := range issues {
				levels[i.Level], codes[i.Code] = true, true
			}
			for _, l := range slices.Collect(maps.Keys(levels)) {
				k.q.Records[l]++
			}
			for c := range codes {
				k.q.Codes[c]++
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	return k.h.db.PutQuality(k.h.repo.Name, k.c.Prefix, nil, k.q)
}
