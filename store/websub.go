package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// The embedded WebSub hub keeps its state here so a restart loses neither
// subscriptions nor undelivered notifications:
//
//	S/topic·callback          Subscription
//	N/id                      Notification (one payload, shared by its deliveries)
//	P/id                      deliveries of notification id still owed (8 bytes)
//	D/id                      Delivery (one payload owed to one callback)
//	C/repo·prefix·set         Channel: how far a resource set's notifications went
//	B/repo·prefix·set         the channel's latest notification (its body), apart:
//	                          the notifier reads C for every set, the body only
//	                          the channel document needs
//	K/name                    counter for the IDs above
//
// The store knows nothing of WebSub's rules; the hub in bridge/websub does.

// Subscription is a verified WebSub subscription.
type Subscription struct {
	Topic    string    `json:"topic"`
	Callback string    `json:"callback"`
	Secret   string    `json:"secret,omitempty"`
	Lease    int64     `json:"lease"` // granted lease in seconds
	Expires  time.Time `json:"expires"`
	Created  time.Time `json:"created"`
}

// Notification is one payload published on a topic. Pending counts the
// deliveries still owed; the notification is removed with its last delivery.
// The count is kept under its own key, so settling a delivery never rewrites
// the payload.
type Notification struct {
	ID          uint64    `json:"-"`
	Topic       string    `json:"topic"`
	ContentType string    `json:"type"`
	Payload     []byte    `json:"payload"`
	Created     time.Time `json:"created"`
	Pending     int       `json:"pending"`
}

// Delivery is one notification owed to one callback.
type Delivery struct {
	ID           uint64    `json:"-"`
	Notification uint64    `json:"n"`
	Topic        string    `json:"topic"`
	Callback     string    `json:"callback"`
	Attempts     int       `json:"attempts,omitempty"`
	NotBefore    time.Time `json:"not_before"`
	Created      time.Time `json:"created"`
	LastError    string    `json:"last_error,omitempty"`
}

// Channel is the notification state of one resource set: the newest change
// event already notified and the until of the last notification, which is
// the from of the next (CN-010).
type Channel struct {
	Started  time.Time `json:"started,omitzero"` // when notifications of the set began (zero: not yet)
	LastSeq  uint64    `json:"last_seq"`
	Until    time.Time `json:"until"`
	LatestID uint64    `json:"latest_id,omitempty"` // newest notification, served at the topic URI
	// Latest is the newest notification's body: stored apart (B/), read by
	// ChannelLatest; Channel leaves it nil. Stores before that kept it here.
	Latest     []byte    `json:"latest,omitempty"`
	LatestTime time.Time `json:"latest_time,omitempty"`
	// Quiet: the newest pass found no subscriber at the hub, so it moved
	// the cursor without building a notification (nobody would receive it).
	// The topic URI builds that notification when asked: the entries in
	// (QuietAfter, LastSeq], from QuietFrom (the Until before the pass).
	Quiet      bool      `json:"quiet,omitempty"`
	QuietAfter uint64    `json:"quiet_after,omitempty"`
	QuietFrom  time.Time `json:"quiet_from,omitzero"`
}

func idKey(table byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{table, '/'}, id)
}

// nextID returns the next value of a named counter inside txn.
func nextID(txn *badger.Txn, name string) (uint64, error) {
	k := key('K', name)
	var n uint64
	it, err := txn.Get(k)
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
	case err != nil:
		return 0, err
	default:
		if err := it.Value(func(v []byte) error {
			if len(v) != 8 {
				return errCorrupt
			}
			n = binary.BigEndian.Uint64(v)
			return nil
		}); err != nil {
			return 0, err
		}
	}
	n++
	return n, txn.Set(k, binary.BigEndian.AppendUint64(nil, n))
}

func setJSON(txn *badger.Txn, k []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set(k, b)
}

// PutSubscription creates or replaces the subscription of (topic, callback).
func (db *DB) PutSubscription(s Subscription) error {
	err := db.update(func(txn *badger.Txn) error { return setJSON(txn, key('S', s.Topic, s.Callback), s) })
	if err != nil {
		return fmt.Errorf("store: subscription %s -> %s: %w", s.Topic, s.Callback, err)
	}
	return nil
}

// DeleteSubscription removes the subscription of (topic, callback), if any.
// Deliveries already owed to it stay until the hub drops them.
func (db *DB) DeleteSubscription(topic, callback string) error {
	err := db.update(func(txn *badger.Txn) error { return txn.Delete(key('S', topic, callback)) })
	if err != nil {
		return fmt.Errorf("store: subscription %s -> %s: %w", topic, callback, err)
	}
	return nil
}

// Subscription returns the subscription of (topic, callback), or nil.
func (s *Snap) Subscription(topic, callback string) (*Subscription, error) {
	var sub Subscription
	found, err := getJSON(s.txn, key('S', topic, callback), &sub)
	if err != nil {
		return nil, fmt.Errorf("store: subscription %s -> %s: %w", topic, callback, err)
	}
	if !found {
		return nil, nil
	}
	return &sub, nil
}

// Subscriptions calls fn for every subscription of topic ("" = every topic),
// expired ones included.
func (s *Snap) Subscriptions(topic string, fn func(Subscription) error) error {
	p := prefixKey('S', topic)
	if topic == "" {
		p = []byte("S/")
	}
	return scan(s.txn, p, true, func(_, v []byte) error {
		var sub Subscription
		if err := json.Unmarshal(v, &sub); err != nil {
			return fmt.Errorf("store: subscription: %w", err)
		}
		return fn(sub)
	})
}

// Publish stores a notification and one delivery of it to each callback, due
// at once, in one transaction, and returns the notification's ID. With no
// callbacks nothing is stored and the ID is 0.
func (db *DB) Publish(n Notification, callbacks []string) (uint64, error) {
	stored, _, err := db.PublishDeliveries(n, callbacks)
	return stored.ID, err
}

// PublishDeliveries is Publish returning the notification and its deliveries
// as stored (IDs, Pending), so the hub can queue them without reading them
// back. With no callbacks nothing is stored: the ID is 0 and there are no
// deliveries.
func (db *DB) PublishDeliveries(n Notification, callbacks []string) (Notification, []Delivery, error) {
	if len(callbacks) == 0 {
		return n, nil, nil
	}
	var ds []Delivery
	err := db.update(func(txn *badger.Txn) error {
		ds = make([]Delivery, 0, len(callbacks))
		var err error
		if n.ID, err = nextID(txn, "notification"); err != nil {
			return err
		}
		n.Pending = len(callbacks)
		if err := setJSON(txn, idKey('N', n.ID), n); err != nil {
			return err
		}
		if err := setPending(txn, n.ID, n.Pending); err != nil {
			return err
		}
		for _, cb := range callbacks {
			id, err := nextID(txn, "delivery")
			if err != nil {
				return err
			}
			d := Delivery{Notification: n.ID, Topic: n.Topic, Callback: cb, NotBefore: n.Created, Created: n.Created}
			if err := setJSON(txn, idKey('D', id), d); err != nil {
				return err
			}
			d.ID = id
			ds = append(ds, d)
		}
		return nil
	})
	if err != nil {
		return Notification{}, nil, fmt.Errorf("store: publish on %s: %w", n.Topic, err)
	}
	return n, ds, nil
}

// Deliveries calls fn for every owed delivery in the order they were queued.
func (s *Snap) Deliveries(fn func(Delivery) error) error {
	return scan(s.txn, []byte("D/"), true, func(k, v []byte) error {
		d := Delivery{ID: seqOf(k)}
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("store: delivery %d: %w", d.ID, err)
		}
		return fn(d)
	})
}

// Notification returns a stored notification, or nil.
func (s *Snap) Notification(id uint64) (*Notification, error) {
	n := &Notification{ID: id}
	found, err := getJSON(s.txn, idKey('N', id), n)
	if err == nil && found {
		n.Pending, _, err = getPending(s.txn, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: notification %d: %w", id, err)
	}
	if !found {
		return nil, nil
	}
	return n, nil
}

// UpdateDelivery records a failed attempt (attempts, next try, error).
func (db *DB) UpdateDelivery(d Delivery) error {
	err := db.update(func(txn *badger.Txn) error {
		if _, err := txn.Get(idKey('D', d.ID)); err != nil {
			return err // gone (done or dropped) is an error the hub may ignore
		}
		return setJSON(txn, idKey('D', d.ID), d)
	})
	if err != nil {
		return fmt.Errorf("store: delivery %d: %w", d.ID, err)
	}
	return nil
}

// FinishDelivery removes a delivery that succeeded or was given up, and its
// notification with its last delivery.
func (db *DB) FinishDelivery(id uint64) error {
	err := db.update(func(txn *badger.Txn) error {
		var d Delivery
		found, err := getJSON(txn, idKey('D', id), &d)
		if err != nil || !found {
			return err
		}
		if err := txn.Delete(idKey('D', id)); err != nil {
			return err
		}
		pending, found, err := getPending(txn, d.Notification)
		if err != nil || !found {
			return err
		}
		if pending--; pending <= 0 {
			if err := txn.Delete(idKey('P', d.Notification)); err != nil {
				return err
			}
			return txn.Delete(idKey('N', d.Notification))
		}
		return setPending(txn, d.Notification, pending)
	})
	if err != nil {
		return fmt.Errorf("store: finish delivery %d: %w", id, err)
	}
	return nil
}

func setPending(txn *badger.Txn, id uint64, n int) error {
	return txn.Set(idKey('P', id), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// getPending reads the count of deliveries a notification still owes. A
// notification stored before the count had its own key keeps it inside.
func getPending(txn *badger.Txn, id uint64) (int, bool, error) {
	it, err := txn.Get(idKey('P', id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		var n Notification
		found, err := getJSON(txn, idKey('N', id), &n)
		return n.Pending, found, err
	}
	if err != nil {
		return 0, false, err
	}
	var n int
	err = it.Value(func(v []byte) error {
		if len(v) != 8 {
			return errCorrupt
		}
		n = int(binary.BigEndian.Uint64(v))
		return nil
	})
	return n, err == nil, err
}

// Channel returns the notification state of a resource set (zero if none).
func (s *Snap) Channel(repo, prefix, set string) (Channel, error) {
	var c Channel
	_, err := getJSON(s.txn, key('C', repo, prefix, set), &c)
	c.Latest = nil // ChannelLatest reads it
	return c, err
}

// ChannelLatest is the notification state of a resource set with its newest
// notification's body.
func (s *Snap) ChannelLatest(repo, prefix, set string) (Channel, error) {
	var c Channel
	if _, err := getJSON(s.txn, key('C', repo, prefix, set), &c); err != nil {
		return c, fmt.Errorf("store: channel %s/%s/%q: %w", repo, prefix, set, err)
	}
	it, err := s.txn.Get(key('B', repo, prefix, set))
	switch {
	case errors.Is(err, badger.ErrKeyNotFound): // none yet, or a store from before B/ (Latest came with C)
		return c, nil
	case err == nil:
		c.Latest, err = it.ValueCopy(nil)
	}
	if err != nil {
		err = fmt.Errorf("store: latest notification of channel %s/%s/%q: %w", repo, prefix, set, err)
	}
	return c, err
}

// PutChannel stores the notification state of a resource set, and its
// newest notification's body when c.Latest is set (nil keeps the stored one).
func (db *DB) PutChannel(repo, prefix, set string, c Channel) error {
	err := db.update(func(txn *badger.Txn) error {
		if c.Latest != nil {
			if err := txn.Set(key('B', repo, prefix, set), c.Latest); err != nil {
				return err
			}
		}
		c.Latest = nil
		return setJSON(txn, key('C', repo, prefix, set), c)
	})
	if err != nil {
		return fmt.Errorf("store: channel %s/%s/%q: %w", repo, prefix, set, err)
	}
	return nil
}
