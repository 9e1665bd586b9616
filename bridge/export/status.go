package export

import (
	"context"
	"errors"
	"time"

	"github.com/rsbridge/rsbridge/store"
)

// Lag is how far the target is behind the store: the change events not
// exported yet and the time of the oldest.
type Lag struct {
	Changes int64
	Oldest  time.Time // zero when none is pending
}

// Lag reads the export's lag from the store.
func (e *Exporter) Lag(ctx context.Context) (Lag, error) {
	var lag Lag
	err := e.db.View(ctx, func(snap *store.Snap) error {
		for _, repo := range e.src.Config().Repositories {
			for _, prefix := range repo.MetadataPrefixes {
				ctr, err := snap.Counter(repo.Name, prefix)
				if err != nil {
					return err
				}
				var cur cursor
				if _, err := snap.ExportState(e.o.Target, cursorName(repo.Name, prefix), &cur); err != nil {
					return err
				}
				if ctr.Seq <= cur.Seq {
					continue
				}
				lag.Changes += int64(ctr.Seq - cur.Seq)
				if err := snap.Events(repo.Name, prefix, cur.Seq, func(ev *store.Event) error {
					if lag.Oldest.IsZero() || ev.Time.Before(lag.Oldest) {
						lag.Oldest = ev.Time
					}
					return errEnough
				}); err != nil && !errors.Is(err, errEnough) {
					return err
				}
			}
		}
		return nil
	})
	return lag, err
}
