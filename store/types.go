package store

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Change is the kind of a change event, as ResourceSync names them.
type Change uint8

// The change types. The zero value is not a change.
const (
	Created Change = iota + 1
	Updated
	Deleted
)

func (c Change) String() string {
	switch c {
	case Created:
		return "created"
	case Updated:
		return "updated"
	case Deleted:
		return "deleted"
	}
	return fmt.Sprintf("change(%d)", uint8(c))
}

// Record is the current state of one (repository, metadata prefix, identifier).
type Record struct {
	Repo       string `json:"-"`
	Prefix     string `json:"-"`
	Identifier string `json:"-"`

	Datestamp    time.Time `json:"ds"`             // upstream datestamp (UTC)
	DatestampRaw string    `json:"dsr,omitempty"`  // as sent, when it did not parse
	Sets         []string  `json:"sets,omitempty"` // setSpecs as in the header
	Deleted      bool      `json:"del,omitempty"`
	Namespace    string    `json:"ns,omitempty"`   // namespace of the metadata root
	Landing      string    `json:"land,omitempty"` // landing page the metadata names, for rel="describes"
	Length       int64     `json:"len"`
	MD5          string    `json:"md5,omitempty"` // hex
	SHA256       string    `json:"sha256,omitempty"`
	Modified     time.Time `json:"mod"` // when rsbridge's copy last changed (lastmod)
	FirstSeen    time.Time `json:"first"`
	Seq          uint64    `json:"seq,omitempty"` // last event about this record, 0 if none

	// eventShort: the event at Seq is stored short, the record's identifier
	// alone, because it says what this state says (Record.createdEvent);
	// set and cleared by Batch.put only.
	eventShort bool
}

// clone is a copy of r that shares nothing with it (nil for nil).
func (r *Record) clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Sets = slices.Clone(r.Sets)
	return &c
}

// createdEvent is the event that created the record as this state has it:
// what a short event (eventShort) stands for.
func (r *Record) createdEvent() Event {
	return Event{Seq: r.Seq, Repo: r.Repo, Prefix: r.Prefix, Time: r.Modified, Identifier: r.Identifier,
		Change: Created, SetsAfter: r.Members(), SHA256: r.SHA256, MD5: r.MD5, Length: r.Length, Datestamp: r.Datestamp}
}

// sameEvent reports whether ev, just written with r's sequence number and
// time, says nothing r does not: then it is stored short.
func (r *Record) sameEvent(ev *Event) bool {
	want := r.createdEvent()
	return ev.Change == Created && len(ev.SetsBefore) == 0 && !r.Deleted && ev.Seq == r.Seq &&
		ev.Identifier == want.Identifier && ev.Time.Equal(want.Time) && slices.Equal(ev.SetsAfter, want.SetsAfter) &&
		ev.SHA256 == want.SHA256 && ev.MD5 == want.MD5 && ev.Length == want.Length && ev.Datestamp.Equal(want.Datestamp)
}

// Members is the record's set membership with ancestors expanded; empty when deleted.
func (r *Record) Members() []string {
	if r == nil || r.Deleted {
		return nil
	}
	return ExpandSets(r.Sets)
}

// Event is one append-only change event.
type Event struct {
	Seq        uint64    `json:"-"`
	Repo       string    `json:"-"`
	Prefix     string    `json:"-"`
	Time       time.Time `json:"t"` // when rsbridge detected and committed it; strictly increasing per (repo, prefix)
	Identifier string    `json:"id"`
	Change     Change    `json:"c"`
	SetsBefore []string  `json:"sb,omitempty"` // expanded membership before
	SetsAfter  []string  `json:"sa,omitempty"` // expanded membership after
	SHA256     string    `json:"sha256,omitempty"`
	MD5        string    `json:"md5,omitempty"`
	Length     int64     `json:"len,omitempty"`
	Datestamp  time.Time `json:"ds"` // upstream datestamp that came with the change
}

// setEvent is the event as an entry of a resource set's Change Lists.
func (e *Event) setEvent(set string) SetEvent {
	c := e.Change
	if set != AllSet {
		c = e.SetChange(set)
	}
	se := SetEvent{Seq: e.Seq, Time: e.Time, Identifier: e.Identifier, Change: c, Datestamp: e.Datestamp}
	if c != Deleted {
		se.SHA256, se.MD5, se.Length = e.SHA256, e.MD5, e.Length
	}
	return se
}

// SetChange is how a set sees an event: a record that joins the set is created in
// it, one that leaves is deleted from it, otherwise the event's own change.
// Zero means the event does not concern the set.
func (e *Event) SetChange(set string) Change {
	in := func(list []string) bool {
		for _, s := range list {
			if s == set {
				return true
			}
		}
		return false
	}
	before, after := in(e.SetsBefore), in(e.SetsAfter)
	switch {
	case !before && !after:
		return 0
	case !before:
		return Created
	case !after:
		return Deleted
	}
	return e.Change
}

// Checkpoint is the harvest state of one (repository, prefix). Everything a page
// produced and the checkpoint commit together, so after a crash the harvest resumes
// at the first page that was not applied.
type Checkpoint struct {
	// The sequence in progress (InProgress): its original arguments, the token of
	// its next page, and what it has seen so far.
	InProgress      bool      `json:"in_progress,omitempty"`
	Token           string    `json:"token,omitempty"`
	SeqFrom         time.Time `json:"seq_from,omitempty"` // zero: a full harvest
	SeqResponseDate time.Time `json:"seq_response_date,omitempty"`
	SeqMaxDatestamp time.Time `json:"seq_max_datestamp,omitempty"`
	SeqPages        int64     `json:"seq_pages,omitempty"`
	SeqRecords      int64     `json:"seq_records,omitempty"`
	SeqStarted      time.Time `json:"seq_started,omitempty"`   // local clock
	SeqListSize     int64     `json:"seq_list_size,omitempty"` // completeListSize the repository announced, 0 if none
	SeqResumed      bool      `json:"seq_resumed,omitempty"`   // a run resumed it from a stored token
	SeqGuarded      bool      `json:"seq_guarded,omitempty"`   // a token guard stopped a run of it

	// HighWater is where the next incremental harvest starts (before the overlap
	// of one granule); zero until a sequence has completed.
	HighWater    time.Time `json:"high_water,omitempty"`
	Granularity  string    `json:"granularity,omitempty"`
	LastComplete time.Time `json:"last_complete,omitempty"` // local clock
	// FullNext makes the next list a full one whatever the high-water mark:
	// the last one ended with fewer records than announced after a resume or
	// a guard, so records may be missing below the mark.
	FullNext bool `json:"full_next,omitempty"`

	// A derived format (config derive) is converted, not harvested: its
	// checkpoint says from which format, by which converter version, and up
	// to which change event of the source it is derived.
	DerivedFrom    string `json:"derived_from,omitempty"`
	DerivedVersion string `json:"derived_version,omitempty"`
	DerivedSeq     uint64 `json:"derived_seq,omitempty"`
}

// RepoInfo describes a repository for the served documents.
type RepoInfo struct {
	Name                 string    `json:"name"`
	BaseURL              string    `json:"base_url"`
	RepositoryName       string    `json:"repository_name,omitempty"`
	ProtocolVersion      string    `json:"protocol_version,omitempty"`
	EarliestDatestamp    string    `json:"earliest_datestamp,omitempty"`
	DeletedRecord        string    `json:"deleted_record,omitempty"`
	Granularity          string    `json:"granularity,omitempty"`
	AdminEmails          []string  `json:"admin_emails,omitempty"`
	RepositoryIdentifier string    `json:"repository_identifier,omitempty"`
	Identified           time.Time `json:"identified"`
	LastHarvest          time.Time `json:"last_harvest,omitempty"`
	LastHarvestOK        bool      `json:"last_harvest_ok,omitempty"`
	LastError            string    `json:"last_error,omitempty"`
	LastReconcile        time.Time `json:"last_reconcile,omitempty"`
	// The last run that succeeded and the last that failed, of any kind.
	LastSuccess *RunRecord `json:"last_success,omitempty"`
	LastFailure *RunRecord `json:"last_failure,omitempty"`
}

// RunRecord is what one harvest or reconciliation did.
type RunRecord struct {
	Kind        string    `json:"kind"` // harvest, full-harvest or reconcile
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	Pages       int64     `json:"pages"`
	Records     int64     `json:"records"`
	Created     int64     `json:"created"`
	Updated     int64     `json:"updated"`
	Deleted     int64     `json:"deleted"`
	Quarantined int64     `json:"quarantined,omitempty"`
	Repaired    int64     `json:"repaired,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// SetInfo describes one OAI set.
type SetInfo struct {
	Spec        string `json:"spec"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// Counter is the per-(repository, prefix) event counter and live-record count.
type Counter struct {
	Seq      uint64    `json:"seq"`
	LastTime time.Time `json:"last"`
	Live     int64     `json:"live"`
	Deleted  int64     `json:"deleted"` // tombstones
	// Version changes with every write to a record of (repo, prefix), event
	// or not (a datestamp bump changes the lists' via links): documents
	// computed from the same Version are the same.
	Version uint64 `json:"version"`
	// Began is when the first batch of (repo, prefix) ran, to the second: the
	// From of every set's first Change List, so an empty set's open list
	// keeps one URL.
	Began time.Time `json:"began,omitzero"`
}

// SetEvent is one change as a resource set sees it: what a Change List entry
// needs, stored under the set so a Change List page is one prefix scan.
type SetEvent struct {
	Seq        uint64    `json:"-"`
	Time       time.Time `json:"t"`
	Identifier string    `json:"id"`
	Change     Change    `json:"c"`
	SHA256     string    `json:"sha256,omitempty"`
	MD5        string    `json:"md5,omitempty"`
	Length     int64     `json:"len,omitempty"`
	Datestamp  time.Time `json:"ds"`
}

// ChangeListInfo is one Change List of a resource set. A list starts where the
// previous one ended (the first at the counter's Began), so lists are
// contiguous, and is named after that start: its URL never changes while it
// is open. It stays open, empty, until its first change comes; then it closes
// when the period (UTC, aligned to the Unix epoch) of that first change ends,
// or at its last change when it holds the limit of entries or the next entry
// would take it past the limit of bytes. The catalog is
// written with the events, so a closed list never changes.
type ChangeListInfo struct {
	Set      string        `json:"-"`
	ID       string        `json:"-"` // sorts in time order: 20261122T000000Z-0001, the second of From and a part
	Period   time.Time     `json:"period"`
	Dur      time.Duration `json:"dur"`
	Part     int           `json:"part"`
	From     time.Time     `json:"from"`
	Count    int           `json:"count"`
	Limit    int           `json:"limit"`
	FirstSeq uint64        `json:"first"`
	LastSeq  uint64        `json:"last"`
	LastTime time.Time     `json:"last_time"`
	// Bytes bounds the size of the list's entries (Options.ChangeEntryBytes);
	// Full says the next entry would not have fitted, so the list closed at
	// its last entry.
	Bytes int64 `json:"bytes,omitempty"`
	Full  bool  `json:"full,omitempty"`
	// Succeeded is set by Snap for a list that has a successor: closed,
	// whatever the horizon.
	Succeeded bool `json:"-"`
}

// full reports whether the list closed at its last entry.
func (c *ChangeListInfo) full() bool { return c.Count >= c.Limit || c.Full }

// Until is when the list closed, or zero while it is open at the horizon at
// (Snap.At): a list whose period ended before every event still uncommitted
// was timed can get no more entries.
func (c *ChangeListInfo) Until(at time.Time) time.Time {
	switch {
	case c.full():
		return c.LastTime
	case c.Count == 0:
		return time.Time{}
	}
	if end := c.Period.Add(c.Dur); c.Succeeded || !at.Before(end) {
		return end
	}
	return time.Time{}
}

// NextList is the list that follows last: it starts at last's Until (or, with
// no last list, at began) and is named after that start, so an open list's
// ID and From do not depend on when it is asked for. Its period is set by its
// first change (Batch). dur and limit are the policy for new lists.
func NextList(last *ChangeListInfo, began time.Time, dur time.Duration, limit int) ChangeListInfo {
	next := ChangeListInfo{Dur: dur, Part: 1, From: began.UTC(), Limit: limit}
	if last != nil {
		next.Set = last.Set
		if last.full() {
			next.From = last.LastTime
		} else {
			next.From = last.Period.Add(last.Dur)
		}
	}
	sec := next.From.Truncate(time.Second)
	if last != nil && strings.HasPrefix(last.ID, ListID(sec, 0)[:len(listIDLayout)]) {
		next.Part = last.Part + 1
	}
	next.ID = ListID(sec, next.Part)
	return next
}

// Covers reports whether a change at t still belongs in the list.
func (c *ChangeListInfo) Covers(t time.Time) bool {
	return !c.full() && (c.Count == 0 || t.Before(c.Period.Add(c.Dur)))
}

const listIDLayout = "20060102T150405Z"

// ListID names the list starting in a second (or, for lists written before
// lists were named after their start, of a period) and part.
func ListID(t time.Time, part int) string {
	return t.UTC().Format(listIDLayout) + "-" + fmt.Sprintf("%04d", part)
}

// AllSet is the set name under which the all-records resource set is kept; no
// setSpec is empty.
const AllSet = ""
