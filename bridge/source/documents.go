package source

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
	"github.com/rsbridge/rsbridge/store"
)

// Capability names rsync does not define.
const ChangeNotification = "change-notification"

// SourceDescription is one <urlset> of every Capability List while they fit
// one sitemap, else a Source Description Index (RS-057) whose pages are key
// ranges of the Capability Lists' paths, cut like Resource List pages, so a
// set published while a destination walks the index changes one page and
// drops none.
func (s *Source) SourceDescription(ctx context.Context) (Doc, error) {
	sets, err := s.sortedSets(ctx)
	if err != nil {
		return Doc{}, err
	}
	if len(sets) <= s.sdLimit {
		return Doc{Write: func(w io.Writer) error { return s.writeSourceDescription(w, sets, false) }}, nil
	}
	return Doc{Write: func(w io.Writer) error {
		cut := max(s.sdLimit*9/10, 1)
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.Description}, rsync.Link{Rel: "describedby", Href: s.base + "/"})
		for i := 0; i < len(sets); i += cut {
			var start, end string
			if i > 0 {
				start = s.setKey(sets[i])
			}
			if i+cut < len(sets) {
				end = s.setKey(sets[i+cut])
			}
			d.Write(rsync.Entry{Loc: s.sourceDescriptionPage(i/cut+1, start, end)})
		}
		return d.Close()
	}}, nil
}

// SourceDescriptionPage is one page of the Source Description Index: the
// Capability Lists whose paths are in [start, end).
func (s *Source) SourceDescriptionPage(ctx context.Context, start, end string) (Doc, error) {
	sets, err := s.sortedSets(ctx)
	if err != nil {
		return Doc{}, err
	}
	sets = slices.DeleteFunc(sets, func(rs Set) bool {
		k := s.setKey(rs)
		return k < start || end != "" && k >= end
	})
	if len(sets) > rsync.MaxEntries {
		return Doc{}, conflict("this page's range now holds %d Capability Lists, more than one sitemap may; read the Source Description Index again: %s", len(sets), s.SourceDescriptionURL())
	}
	return Doc{Write: func(w io.Writer) error { return s.writeSourceDescription(w, sets, true) }}, nil
}

func (s *Source) writeSourceDescription(w io.Writer, sets []Set, inIndex bool) error {
	entries := make([]rsync.Entry, len(sets))
	for i, rs := range sets {
		entries[i] = CapabilityEntry(rs)
	}
	return s.WriteSourceDescription(w, entries, inIndex, "")
}

// CapabilityEntry is a set's entry in a Source Description.
func CapabilityEntry(rs Set) rsync.Entry {
	return rsync.Entry{Loc: rs.CapabilityList(), MD: &rsync.MD{Capability: rsync.CapabilityList},
		Links: []rsync.Link{{Rel: "describedby", Href: rs.About()}}}
}

// WriteSourceDescription writes a Source Description of Capability List
// entries, or (inIndex) a page of the Source Description Index; about is
// the page describing the source ("" = the base URL's home page).
func (s *Source) WriteSourceDescription(w io.Writer, entries []rsync.Entry, inIndex bool, about string) error {
	links := []rsync.Link{{Rel: "describedby", Href: cmp.Or(about, s.base+"/")}}
	if inIndex {
		links = append(links, rsync.Link{Rel: "index", Href: s.SourceDescriptionURL()})
	}
	d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.Description}, links...)
	for _, e := range entries {
		d.Write(e)
	}
	return d.Close()
}

// WriteSourceDescriptionIndex writes a Source Description Index of pages;
// about as for WriteSourceDescription.
func (s *Source) WriteSourceDescriptionIndex(w io.Writer, pages []string, about string) error {
	d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.Description}, rsync.Link{Rel: "describedby", Href: cmp.Or(about, s.base+"/")})
	for _, p := range pages {
		d.Write(rsync.Entry{Loc: p})
	}
	return d.Close()
}

// SortedSets is every resource set in the order of the Source Description
// Index: by path.
func (s *Source) SortedSets(ctx context.Context) ([]Set, error) { return s.sortedSets(ctx) }

// sortedSets is every resource set in the order of setKey.
func (s *Source) sortedSets(ctx context.Context) ([]Set, error) {
	sets, err := s.Sets(ctx)
	slices.SortFunc(sets, func(a, b Set) int { return strings.Compare(s.setKey(a), s.setKey(b)) })
	return sets, err
}

// setKey orders resource sets for the Source Description Index: the path
// of the set below the base URL.
func (s *Source) setKey(rs Set) string { return strings.TrimPrefix(rs.Path(), s.base) }

// CapabilityList lists the set's capabilities: the Resource List, the
// Resource Dump once one is built, the Change List Index, the Change Dump
// (for sets that get dumps) and the notification channel (when on).
func (s *Source) CapabilityList(snap *store.Snap, rs Set) (Doc, error) {
	var hasDump bool
	if s.Dumped(rs) {
		dump, err := snap.ResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return Doc{}, err
		}
		hasDump = dump != nil
	}
	return Doc{Write: func(w io.Writer) error {
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.CapabilityList},
			rsync.Link{Rel: "up", Href: s.SourceDescriptionURL()}, rsync.Link{Rel: "describedby", Href: rs.About()})
		d.Write(rsync.Entry{Loc: rs.ResourceList(), MD: &rsync.MD{Capability: rsync.ResourceList}})
		if hasDump {
			d.Write(rsync.Entry{Loc: rs.ResourceDump(), MD: &rsync.MD{Capability: rsync.ResourceDump}})
		}
		d.Write(rsync.Entry{Loc: rs.ChangeListIndex(), MD: &rsync.MD{Capability: rsync.ChangeList}})
		if s.Dumped(rs) {
			d.Write(rsync.Entry{Loc: rs.ChangeDump(), MD: &rsync.MD{Capability: rsync.ChangeDump}})
		}
		if s.cfg.Notification.On() {
			d.Write(rsync.Entry{Loc: rs.Topic(), MD: &rsync.MD{Capability: ChangeNotification},
				Links: []rsync.Link{{Rel: "hub", Href: s.Hub()}}})
		}
		return d.Close()
	}}, nil
}

// version is what the documents of a set are computed from: the Version of
// its (repository, prefix), which every record write moves.
func version(snap *store.Snap, rs Set) (uint64, error) {
	c, err := snap.Counter(rs.Repo.Name, rs.Prefix)
	return c.Version, err
}

// Slot is the Change List period a time falls in: open lists close when
// it changes, without a write.
func (s *Source) Slot(t time.Time) int64 { return s.slot(t) }

func (s *Source) slot(t time.Time) int64 {
	return t.UnixNano() / int64(s.cfg.ResourceSync.ChangeListPeriod)
}

// ChangeListIndex lists the set's Change Lists as they are at the store's
// horizon: a list closes only when no uncommitted page can add to it.
func (s *Source) ChangeListIndex(snap *store.Snap, rs Set) (Doc, error) {
	at := snap.At(rs.Repo.Name, rs.Prefix)
	v, err := version(snap, rs)
	if err != nil {
		return Doc{}, err
	}
	return Doc{Key: fmt.Sprintf("changelist-index|%s|%d|%d", rs.Path(), v, s.slot(at)), Modified: at, Write: func(w io.Writer) error {
		lists, err := snap.ChangeLists(rs.Repo.Name, rs.Prefix, rs.Spec)
		if err != nil {
			return err
		}
		d := rsync.NewSitemapIndex(w, rsync.MD{Capability: rsync.ChangeList, From: lists[0].From}, rsync.Link{Rel: "up", Href: rs.CapabilityList()})
		for _, l := range lists {
			d.Write(rsync.Entry{Loc: rs.ChangeList(l.ID), MD: &rsync.MD{From: l.From, Until: l.Until(at)}})
		}
		return d.Close()
	}}, nil
}

// ChangeList is one Change List: one entry per change in the set, in order.
// A list is closed only when the store's horizon has passed its end, so
// every change it will ever hold is in the snapshot: only then is it Final.
// An open list, empty or not, keeps its URL until it closes.
func (s *Source) ChangeList(snap *store.Snap, rs Set, id string) (Doc, error) {
	at := snap.At(rs.Repo.Name, rs.Prefix)
	l, err := snap.ChangeList(rs.Repo.Name, rs.Prefix, rs.Spec, id)
	if err != nil {
		return Doc{}, err
	}
	if l == nil {
		return Doc{}, NotFound("no change list %q; see %s", id, rs.ChangeListIndex())
	}
	until := l.Until(at)
	doc := Doc{Key: fmt.Sprintf("changelist|%s|%s|closed", rs.Path(), id), Final: true, Modified: until}
	if until.IsZero() {
		v, err := version(snap, rs)
		if err != nil {
			return Doc{}, err
		}
		doc = Doc{Key: fmt.Sprintf("changelist|%s|%s|%d|%d", rs.Path(), id, v, s.slot(at)), Modified: at}
	}
	doc.Write = func(w io.Writer) error {
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeList, From: l.From, Until: until},
			rsync.Link{Rel: "up", Href: rs.CapabilityList()}, rsync.Link{Rel: "index", Href: rs.ChangeListIndex()})
		if l.Count > 0 {
			via := s.via(rs)
			err := snap.SetEvents(rs.Repo.Name, rs.Prefix, rs.Spec, l.FirstSeq, l.LastSeq, func(ev *store.SetEvent) error {
				return d.Write(ChangeEntry(rs, via, ev))
			})
			if err != nil {
				return err
			}
		}
		return d.Close()
	}
	return doc, nil
}

// ResourceDump lists the packages of the set's Resource Dump; before the
// first is built it answers CodeNotYet.
func (s *Source) ResourceDump(snap *store.Snap, rs Set) (Doc, error) {
	if !s.Dumped(rs) {
		return Doc{}, NotFound("this resource set has no dumps (resourcesync.dump_sets)")
	}
	dump, err := snap.ResourceDump(rs.Repo.Name, rs.Prefix, rs.Spec)
	if err != nil {
		return Doc{}, err
	}
	if dump == nil {
		return Doc{}, &Error{Code: CodeNotYet, RetryAfter: time.Minute,
			Msg: "no Resource Dump yet: it is built in the background after the first harvest; use " + rs.ResourceList() + " meanwhile"}
	}
	return Doc{Write: func(w io.Writer) error {
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceDump, At: dump.At, Completed: dump.Done}, rsync.Link{Rel: "up", Href: rs.CapabilityList()})
		return writePackages(d, rs, dump.Packages, func(p store.Package, md *rsync.MD) { md.At, md.Completed = p.At, p.Done })
	}}, nil
}

// ChangeDump lists one package per closed Change List that has one; its
// from is the oldest change kept, or now when there is none.
func (s *Source) ChangeDump(snap *store.Snap, rs Set, now time.Time) (Doc, error) {
	if !s.Dumped(rs) {
		return Doc{}, NotFound("this resource set has no dumps (resourcesync.dump_sets)")
	}
	var pkgs []store.Package
	if err := snap.ChangeDumps(rs.Repo.Name, rs.Prefix, rs.Spec, func(_ string, p store.Package) error {
		pkgs = append(pkgs, p)
		return nil
	}); err != nil {
		return Doc{}, err
	}
	from := now
	if len(pkgs) > 0 {
		from = pkgs[0].From
	} else if oldest, err := snap.Oldest(rs.Repo.Name, rs.Prefix, rs.Spec); err != nil {
		return Doc{}, err
	} else if !oldest.IsZero() {
		from = oldest
	}
	return Doc{Write: func(w io.Writer) error {
		d := rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeDump, From: from}, rsync.Link{Rel: "up", Href: rs.CapabilityList()})
		return writePackages(d, rs, pkgs, func(p store.Package, md *rsync.MD) { md.From, md.Until = p.From, p.Until })
	}}, nil
}

// writePackages lists dump packages, each with the copy of its manifest as
// its contents link, and closes the document; times sets what the package
// covers (at/completed, or from/until).
func writePackages(d *rsync.Writer, rs Set, pkgs []store.Package, times func(store.Package, *rsync.MD)) error {
	for _, p := range pkgs {
		md := packageMD(p)
		times(p, &md)
		d.Write(rsync.Entry{Loc: rs.DumpFile(p.File), LastMod: p.Built, MD: &md,
			Links: []rsync.Link{{Rel: "contents", Href: rs.DumpFile(p.Manifest), Type: XMLType}}})
	}
	return d.Close()
}

// ResourceManifest starts a Resource Dump Manifest (entries:
// ResourceManifestEntry).
func ResourceManifest(w io.Writer, rs Set, at, completed time.Time) *rsync.Writer {
	return rsync.NewURLSet(w, rsync.MD{Capability: rsync.ResourceDumpManifest, At: at, Completed: completed},
		rsync.Link{Rel: "up", Href: rs.CapabilityList()})
}

// ChangeManifest starts a Change Dump Manifest (entries:
// ChangeManifestEntry).
func ChangeManifest(w io.Writer, rs Set, from, until time.Time) *rsync.Writer {
	return rsync.NewURLSet(w, rsync.MD{Capability: rsync.ChangeDumpManifest, From: from, Until: until},
		rsync.Link{Rel: "up", Href: rs.CapabilityList()})
}

// Notification is a change notification payload (CN-010): the changes in
// order, covering [from, until].
func (s *Source) Notification(w io.Writer, rs Set, from, until time.Time, changes []*store.SetEvent) error {
	d := rsync.NewURLSet(w, rsync.MD{Capability: ChangeNotification, From: from, Until: until},
		rsync.Link{Rel: "up", Href: rs.CapabilityList()})
	via := s.via(rs)
	for _, ev := range changes {
		d.Write(ChangeEntry(rs, via, ev))
	}
	return d.Close()
}

// Channel is a set's change-notification topic document (CN-024..CN-027):
// the latest notification. Before the first one it is an empty
// notification (from = until = where the channel's changes start) rather
// than nothing: an empty body is legal, but XML clients fail on it.
func (s *Source) Channel(snap *store.Snap, rs Set) (Doc, error) {
	if !s.cfg.Notification.On() {
		return Doc{}, NotFound("change notification is off (notification.enabled)")
	}
	ch, err := snap.ChannelLatest(rs.Repo.Name, rs.Prefix, rs.Spec)
	if err != nil {
		return Doc{}, err
	}
	if ch.Quiet {
		return s.quietChannel(snap, rs, ch)
	}
	body, modified := ch.Latest, ch.LatestTime
	if len(body) == 0 {
		ctr, err := snap.Counter(rs.Repo.Name, rs.Prefix)
		if err != nil {
			return Doc{}, err
		}
		// Before the notifier started: from when the format was first
		// harvested, a time that does not move (the document stays the same).
		since := cmp.Or(ch.Until, ch.Started, ctr.Began, snap.At(rs.Repo.Name, rs.Prefix))
		var b bytes.Buffer
		if err := s.Notification(&b, rs, since, since, nil); err != nil {
			return Doc{}, err
		}
		body, modified = b.Bytes(), since
	}
	return Doc{Modified: modified, Write: func(w io.Writer) error { _, err := w.Write(body); return err }}, nil
}

// quietChannel is the topic document of a quiet channel (notify.publishSet):
// the notification its newest pass would have sent last, as it would have
// sent it. That pass read the entries in (QuietAfter, LastSeq] and sent
// them max_entries at a time from the first, so the last one holds the
// remainder; each one's from is the until before it (QuietFrom for the
// first), or its first change's time when that is earlier. The entries are
// read again here (a ring of max_entries + 1 of them, whatever the pass
// held). Retention would remove them: the notifier stores this document
// first (notify.Notifier.KeepQuiet).
func (s *Source) quietChannel(snap *store.Snap, rs Set, ch store.Channel) (Doc, error) {
	m := max(s.cfg.Notification.MaxEntries, 1)
	ring := make([]*store.SetEvent, m+1)
	count := 0
	err := snap.SetEvents(rs.Repo.Name, rs.Prefix, rs.Spec, ch.QuietAfter+1, ch.LastSeq, func(ev *store.SetEvent) error {
		ring[count%len(ring)] = ev
		count++
		return nil
	})
	if err != nil {
		return Doc{}, err
	}
	from, until := ch.QuietFrom, ch.Until
	var last []*store.SetEvent
	if count > 0 {
		n := count - (count-1)/m*m // the last notification's changes
		for i := count - n; i < count; i++ {
			last = append(last, ring[i%len(ring)])
		}
		if count > n {
			from = ring[(count-n-1)%len(ring)].Time // the previous one's until
		}
		if from.IsZero() || from.After(last[0].Time) {
			from = last[0].Time
		}
		until = last[len(last)-1].Time
	}
	var b bytes.Buffer
	if err := s.Notification(&b, rs, from, until, last); err != nil {
		return Doc{}, err
	}
	body := b.Bytes()
	return Doc{Modified: ch.LatestTime, Write: func(w io.Writer) error { _, err := w.Write(body); return err }}, nil
}
