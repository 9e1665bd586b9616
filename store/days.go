package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Events per day, for the status page's chart: one small counter per
// (repository, format, UTC day), kept by Batch as it appends events and
// never pruned (a year is 365 keys).
//
//	y/repo·prefix·YYYY-MM-DD  DayCount (JSON)

// DayCount is how many change events of each kind a day brought.
type DayCount struct {
	Day     string `json:"day"` // YYYY-MM-DD, UTC
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
	Deleted int64  `json:"deleted"`
}

// Total is the day's number of events.
func (d DayCount) Total() int64 { return d.Created + d.Updated + d.Deleted }

const dayLayout = "2006-01-02"

// countDay counts an event into its day, loading the day's counter the first
// time the batch sees that day.
func (b *Batch) countDay(ev *Event) error {
	day := ev.Time.UTC().Format(dayLayout)
	if b.day == nil || b.day.Day != day {
		if err := b.flushDay(); err != nil {
			return err
		}
		d := &DayCount{}
		if _, err := getJSON(b.txn, key('y', b.repo, b.prefix, day), d); err != nil {
			return fmt.Errorf("store: day counter %s/%s %s: %w", b.repo, b.prefix, day, err)
		}
		d.Day = day
		b.day = d
	}
	switch ev.Change {
	case Created:
		b.day.Created++
	case Updated:
		b.day.Updated++
	case Deleted:
		b.day.Deleted++
	}
	b.dayDirty = true
	return nil
}

// flushDay stages the day counter if it changed.
func (b *Batch) flushDay() error {
	if b.day == nil || !b.dayDirty {
		return nil
	}
	v, err := json.Marshal(b.day)
	if err != nil {
		return err
	}
	b.stage(key('y', b.repo, b.prefix, b.day.Day), v)
	b.dayDirty = false
	return nil
}

// EventsPerDay returns the counts of the days from..to (inclusive, UTC),
// one entry per day, zero for days without events.
func (s *Snap) EventsPerDay(repo, prefix string, from, to time.Time) ([]DayCount, error) {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
	if to.Before(from) {
		return nil, nil
	}
	stored := map[string]DayCount{}
	pk := prefixKey('y', repo, prefix)
	err := scanFrom(s.txn, pk, append(pk, from.Format(dayLayout)...), func(k, v []byte) error {
		day := lastPart(k)
		if day > to.Format(dayLayout) {
			return errStop
		}
		var d DayCount
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("store: day counter %s/%s %s: %w", repo, prefix, day, err)
		}
		stored[day] = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []DayCount
	for t := from; !t.After(to); t = t.Add(24 * time.Hour) {
		day := t.Format(dayLayout)
		d := stored[day]
		d.Day = day
		out = append(out, d)
	}
	return out, nil
}
