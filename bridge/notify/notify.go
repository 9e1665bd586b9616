package notify

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/rsbridge/rsbridge/bridge/source"
	"github.com/rsbridge/rsbridge/bridge/websub"
	"github.com/rsbridge/rsbridge/config"
	"github.com/rsbridge/rsbridge/store"
)

// Package notify publishes ResourceSync Change Notification
// (change-notification.md): every
// resource set is a channel, a WebSub topic at {set}/changenotification.xml,
// advertised in its Capability List. After each harvest commit that changed a
// set, the Notifier publishes the set's new changes through the hub (the
// embedded one at {base}/websub, or an external one): one notification per
// max_entries changes, in order, each covering [from, until] where from is the
// previous notification's until (CN-010) and until the time of its last
// change, so an event committed later can never fall before it.

// Options are the optional parts of New.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	// Hub settings tests override (nil = the configuration's).
	HubOptions func(*websub.Options)
}

// Notifier publishes change notifications; it owns the hub.
type Notifier struct {
	src    *source.Source
	cfg    *config.Config
	db     *store.DB
	log    *slog.Logger
	now    func() time.Time
	hub    *websub.Hub
	hubURL string
	wake   chan struct{}

	mu      sync.Mutex
	topics  map[string]string // topic -> Capability List, refreshed every minute
	fetched time.Time
	last    error

	pubMu sync.Mutex               // one publishing pass at a time
	done  map[string]publishedMark // repository·format → what the last pass published completely
}

// publishedMark is how far a pass published a repository's format: up to
// its newest event, for these sets. A pass skips the format while both stay
// the same: with 700 repositories and 24,000 resource sets, reading every
// set's channel after each commit cost more than the harvest it followed.
type publishedMark struct {
	seq  uint64 // the format's newest event when the pass read it
	sets uint64 // FNV-64a of its resource sets' specs
}

// New builds the notifier of a source and its hub (not started: Run
// starts it).
func New(src *source.Source, db *store.DB, o Options) (*Notifier, error) {
	cfg := src.Config()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base := src.Base()
	n := &Notifier{src: src, cfg: cfg, db: db, log: o.Logger.With("component", "notify"),
		now: o.Now, hubURL: src.Hub(), wake: make(chan struct{}, 1)}
	nc := cfg.Notification
	ho := websub.Options{HubURL: base + "/websub", DB: db, Topic: n.topic, ExternalHub: nc.HubURL,
		AllowPrivateCallbacks: nc.AllowPrivateCallbacks, Workers: nc.Workers, MaxAttempts: nc.MaxAttempts,
		Timeout: nc.Timeout, MaxSubscriptions: nc.MaxSubscriptions, MaxPerTopic: nc.MaxSubscriptionsPerTopic,
		Logger: o.Logger.With("component", "websub"), Now: o.Now}
	if o.HubOptions != nil {
		o.HubOptions(&ho)
	}
	hub, err := websub.New(ho)
	if err != nil {
		return nil, fmt.Errorf("notification hub: %w", err)
	}
	n.hub = hub
	return n, nil
}

// Hub is the embedded hub's HTTP handler (it refuses subscriptions, pointing
// to the external hub, when notification.hub_url is set).
func (n *Notifier) Hub() http.Handler { return n.hub }

// Stats are the hub's figures: subscribers per topic, deliveries, failures,
// the oldest undelivered notification.
func (n *Notifier) Stats() websub.Stats { return n.hub.Stats() }

// LastError is the last round's failure, or nil.
func (n *Notifier) LastError() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last
}

// topic tells the hub whether a topic is a channel of this source, and its
// Capability List.
func (n *Notifier) topic(topic string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.topics == nil || n.now().Sub(n.fetched) > time.Minute {
		sets, err := n.src.Sets(context.Background())
		if err != nil {
			n.log.Warn("cannot list the channels", "err", err)
			return "", false
		}
		n.topics = make(map[string]string, len(sets))
		for _, rs := range sets {
			n.topics[rs.Topic()] = rs.CapabilityList()
		}
		n.fetched = n.now()
	}
	cl, ok := n.topics[topic]
	return cl, ok
}

// Changed tells the notifier a harvest committed changes.
func (n *Notifier) Changed() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Run starts the hub and publishes until ctx ends, then closes the hub
// (undelivered notifications stay in the store for the next start).
func (n *Notifier) Run(ctx context.Context) {
	n.hub.Start()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.hub.Close(shut); err != nil {
			n.log.Warn("notification hub shutdown", "err", err)
		}
	}()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		n.Publish(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.wake:
			// Let the pages of a burst commit together: one notification
			// rather than one per page (still within a second of a commit).
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// Publish sends every set's changes not yet notified; errors are logged and
// kept for the status page, and the next round tries again.
func (n *Notifier) Publish(ctx context.Context) {
	err := n.publish(ctx)
	n.mu.Lock()
	n.last = err
	n.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		n.log.Error("change notification: will try again", "err", err)
	}
}

func (n *Notifier) publish(ctx context.Context) error {
	n.pubMu.Lock()
	defer n.pubMu.Unlock()
	sets, err := n.src.Sets(ctx)
	if err != nil {
		return err
	}
	// Who listens, as of this pass: a channel nobody subscribes to gets no
	// notification built (see publishSet).
	listening, err := n.hub.Listening(ctx)
	if err != nil {
		return err
	}
	groups := map[string][]source.Set{}
	var order []string
	for _, rs := range sets {
		k := rs.Repo.Name + "\x00" + rs.Prefix
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], rs)
	}
	var errs []error
	for _, k := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := n.publishFormat(ctx, k, groups[k], listening); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publishFormat publishes the sets of one repository's format, unless
// nothing happened in it since the last pass that published them all.
func (n *Notifier) publishFormat(ctx context.Context, k string, sets []source.Set, listening func(topic string) bool) error {
	h := fnv.New64a()
	for _, rs := range sets {
		h.Write([]byte(rs.Spec + "\x00"))
	}
	mark := publishedMark{sets: h.Sum64()}
	err := n.db.View(ctx, func(snap *store.Snap) error {
		ctr, err := snap.Counter(sets[0].Repo.Name, sets[0].Prefix)
		mark.seq = ctr.Seq
		return err
	})
	if err != nil {
		return err
	}
	if n.done[k] == mark && mark.seq != 0 {
		return nil
	}
	var errs []error
	for _, rs := range sets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := n.publishSet(ctx, rs, !listening(rs.Topic())); err != nil {
			errs = append(errs, fmt.Errorf("channel %s: %w", rs.Topic(), err))
		}
	}
	if len(errs) == 0 {
		if n.done == nil {
			n.done = map[string]publishedMark{}
		}
		n.done[k] = mark
	}
	return errors.Join(errs...)
}

// KeepQuiet stores, as if it had been sent, the topic document of every
// quiet channel whose window may reach back to cutoff: retention removes
// change entries timed before it (and Change Lists closed by it), and the
// topic URI of a quiet channel builds its document from the entries of its
// newest pass (source.Channel). Built from fewer, that document would
// claim fewer changes between its from and until than there were. The
// entries of a window are timed at or after its QuietFrom (or, for the
// channel's first window, when it started), so a channel whose window
// starts after cutoff has nothing to lose: with the default retention of
// 180 days, only channels quiet for that long are stored. Runs between
// passes (pubMu), before each retention pass (dumps.Options.BeforePrune).
func (n *Notifier) KeepQuiet(ctx context.Context, cutoff time.Time) error {
	n.pubMu.Lock()
	defer n.pubMu.Unlock()
	sets, err := n.src.Sets(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, rs := range sets {
		if err := ctx.Err(); err != nil {
			return err
		}
		var ch store.Channel
		var body []byte
		err := n.db.View(ctx, func(snap *store.Snap) error {
			var err error
			ch, err = snap.Channel(rs.Repo.Name, rs.Prefix, rs.Spec) // without the body: most are not quiet
			if err != nil || !ch.Quiet || cmp.Or(ch.QuietFrom, ch.Started).After(cutoff) {
				return err
			}
			doc, err := n.src.Channel(snap, rs)
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := doc.Write(&b); err != nil {
				return err
			}
			body = b.Bytes()
			return nil
		})
		if err == nil && body != nil {
			ch.Latest, ch.Quiet, ch.QuietAfter, ch.QuietFrom = body, false, 0, time.Time{}
			err = n.db.PutChannel(rs.Repo.Name, rs.Prefix, rs.Spec, ch)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("channel %s: %w", rs.Topic(), err))
		}
	}
	return errors.Join(errs...)
}

// errFull stops a read of change entries at max_entries.
var errFull = errors.New("notification full")

// publishSet sends the set's changes after its channel's cursor, in
// notifications of at most max_entries. A quiet channel (no subscriber at
// the embedded hub) gets none built: its cursor moves past the newest
// change, and the topic URI builds the notification the pass would have
// sent last when someone asks for it (source.Channel). Building them cost a
// tenth of a first harvest of 700 repositories, nearly all for channels
// nobody listened to (docs/benchmarks.md, run W).
func (n *Notifier) publishSet(ctx context.Context, rs source.Set, quiet bool) error {
	for {
		var ch store.Channel
		var payload bytes.Buffer
		var count int
		var lastSeq uint64
		var until time.Time
		started := false
		err := n.db.View(ctx, func(snap *store.Snap) error {
			var err error
			if ch, err = snap.Channel(rs.Repo.Name, rs.Prefix, rs.Spec); err != nil {
				return err
			}
			if ch.Started.IsZero() {
				// A new channel notifies the changes from now on; the past is
				// in the Change Lists.
				lists, err := snap.ChangeLists(rs.Repo.Name, rs.Prefix, rs.Spec)
				if err != nil {
					return err
				}
				for _, l := range lists {
					if l.LastSeq > ch.LastSeq {
						ch.LastSeq, ch.Until = l.LastSeq, l.LastTime
					}
				}
				ch.Started, started = n.now().UTC(), true
				return nil
			}
			if quiet {
				last, err := snap.LastSetEvent(rs.Repo.Name, rs.Prefix, rs.Spec, ch.LastSeq)
				if err != nil || last == nil {
					return err
				}
				lastSeq, until, count = last.Seq, last.Time, -1
				return nil
			}
			var entries []*store.SetEvent
			err = snap.SetEvents(rs.Repo.Name, rs.Prefix, rs.Spec, ch.LastSeq+1, math.MaxUint64, func(ev *store.SetEvent) error {
				if len(entries) == n.cfg.Notification.MaxEntries {
					return errFull
				}
				entries = append(entries, ev)
				return nil
			})
			if err != nil && !errors.Is(err, errFull) {
				return err
			}
			if len(entries) == 0 {
				return nil
			}
			from := ch.Until
			if from.IsZero() || from.After(entries[0].Time) {
				from = entries[0].Time
			}
			until = entries[len(entries)-1].Time
			lastSeq, count = entries[len(entries)-1].Seq, len(entries)
			return n.src.Notification(&payload, rs, from, until, entries)
		})
		if err != nil {
			return err
		}
		if started {
			if err := n.db.PutChannel(rs.Repo.Name, rs.Prefix, rs.Spec, ch); err != nil {
				return err
			}
			continue
		}
		if count == 0 {
			return nil
		}
		if count < 0 { // quiet
			ch.Quiet, ch.QuietAfter, ch.QuietFrom = true, ch.LastSeq, ch.Until
			ch.LastSeq, ch.Until, ch.Latest, ch.LatestTime = lastSeq, until, nil, n.now().UTC()
			if err := n.db.PutChannel(rs.Repo.Name, rs.Prefix, rs.Spec, ch); err != nil {
				return err
			}
			n.log.Debug("no subscriber: change notification not built", "topic", rs.Topic(), "last_seq", lastSeq)
			return nil
		}
		if err := n.hub.Publish(ctx, rs.Topic(), payload.Bytes()); err != nil {
			return err
		}
		ch.LastSeq, ch.Until, ch.Latest, ch.LatestTime = lastSeq, until, payload.Bytes(), n.now().UTC()
		ch.Quiet, ch.QuietAfter, ch.QuietFrom = false, 0, time.Time{}
		if err := n.db.PutChannel(rs.Repo.Name, rs.Prefix, rs.Spec, ch); err != nil {
			return err
		}
		n.log.Debug("change notification published", "topic", rs.Topic(), "changes", count)
	}
}
