package store

import (
	"encoding/binary"
	"slices"
	"strings"
)

// Key layout. Every key starts with a one-letter table and the parts are joined
// with 0x00, which cannot occur in XML text, so prefix scans never bleed into a
// neighbour (repository "a" does not match "ab"). Keys sort in the order lists are
// served: records by identifier, events by sequence number.
//
//	r/repo·prefix·id          record state (binary, codec.go)
//	d/repo·prefix·id          metadata bytes of a live record
//	m/repo·prefix·set·id      membership of a live record in a set (ancestors expanded)
//	e/repo·prefix·seq         change event (binary, codec.go; a created one the state says: its identifier alone), seq 8 bytes big-endian
//	x/repo·prefix·set·seq     a set's change entry: empty (the event at seq, as the set sees it) or, once Prune removed that event, the entry in full (binary, codec.go); none for the all-records set, whose entries are the events
//	l/repo·prefix·set·listID  Change List catalog entry
//	L/repo·prefix·set         ID of the set's newest Change List
//	n/repo·prefix             event counter: last seq, last event time, live count
//	c/repo·prefix             harvest checkpoint
//	P/repo·prefix             stems: the start of landing pages and identifiers, set once (stems.go)
//	p/repo·prefix·id          "seen" marks of a reconciliation pass
//	i/repo                    repository description (Identify facts, last harvest)
//	s/repo·setSpec            set description (ListSets)
//	y/repo·prefix·day         events per day (days.go)
//	v/, V/                    kept versions (versions.go); R/, Q/, G/ dumps (dumps.go)
//	z/                        quarantine (quarantine.go); hub state in websub.go
//	X/                        static export state (export.go)
//	u/, U/                    record quality: issues and summary (quality.go)
const sep = "\x00"

func key(table byte, parts ...string) []byte {
	n := 2
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, table, '/')
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// prefixKey is key(...) followed by a separator: the scan prefix for everything
// below the given parts.
func prefixKey(table byte, parts ...string) []byte {
	return append(key(table, parts...), 0)
}

func seqKey(table byte, seq uint64, parts ...string) []byte {
	b := prefixKey(table, parts...)
	return binary.BigEndian.AppendUint64(b, seq)
}

func lastPart(k []byte) string {
	s := string(k)
	if i := strings.LastIndexByte(s, 0); i >= 0 {
		return s[i+1:]
	}
	return s
}

func seqOf(k []byte) uint64 {
	if len(k) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k[len(k)-8:])
}

// ExpandSets returns the setSpecs with every ancestor added ("a:b:c" implies "a"
// and "a:b", OAI-PMH §2.6), sorted and without duplicates.
func ExpandSets(specs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range specs {
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == ':' {
				p := s[:i]
				if p != "" && !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
