package oaiserver

import "strings"

// Hostility is a fault the provider builds into one item, for tests of a
// harvester's recovery (Options.Hostile). Each kind breaks one thing in one
// record; the rest of the page stays valid. Kinds marked "repaired" are ones a
// harvester may repair safely (Item returns the bytes it should then store);
// kinds marked "quarantined" leave nothing a harvester can use.
type Hostility int

const (
	// HostileNone serves the item normally.
	HostileNone Hostility = iota
	// HostileInvalidUTF8 puts the bytes FF FE (invalid UTF-8) in the metadata
	// text; repaired: each becomes U+FFFD.
	HostileInvalidUTF8
	// HostileCharRef puts &#1; (a character XML forbids) in the metadata text;
	// repaired: it becomes &#xFFFD;.
	HostileCharRef
	// HostileBadDatestamp serves the datestamp "2024-13-45"; the record is
	// usable, its datestamp is not.
	HostileBadDatestamp
	// HostileMalformed puts a mismatched end tag in the metadata; quarantined.
	HostileMalformed
	// HostileBadIdentifier ends the identifier with the byte FF; quarantined
	// (repairing it would make another identifier).
	HostileBadIdentifier
	// HostileLongIdentifier appends 70,000 bytes to the identifier, more than a
	// Badger key holds; quarantined.
	HostileLongIdentifier
	// HostileOversize pads the metadata text to Options.OversizeBytes (default
	// 17 MiB, just over rsbridge's default max_record_bytes); quarantined.
	HostileOversize
)

// Quarantined reports whether a correct harvester cannot use the item.
func (h Hostility) Quarantined() bool {
	switch h {
	case HostileMalformed, HostileBadIdentifier, HostileLongIdentifier, HostileOversize:
		return true
	}
	return false
}

func (s *Synthetic) hostility(i int) Hostility {
	if s.hostile == nil {
		return HostileNone
	}
	return s.hostile(i)
}

// writeHostileIdentifier writes what follows the identifier of a hostile item.
func (s *Synthetic) writeHostileIdentifier(x *xw, i int) {
	switch s.hostility(i) {
	case HostileBadIdentifier:
		x.s("\xff")
	case HostileLongIdentifier:
		x.s(strings.Repeat("x", 70000))
	}
}

// writeHostileText writes the fault that goes into the metadata text, at the
// end of the description. standalone is set for Item: what a harvester stores.
func (s *Synthetic) writeHostileText(x *xw, i int, standalone bool) {
	switch s.hostility(i) {
	case HostileInvalidUTF8:
		if standalone {
			x.s(" \uFFFD\uFFFD")
		} else {
			x.s(" \xff\xfe")
		}
	case HostileCharRef:
		if standalone {
			x.s(" &#xFFFD;")
		} else {
			x.s(" &#1;")
		}
	case HostileMalformed:
		if !standalone {
			x.s("<b>bold</i>")
		}
	case HostileOversize:
		if !standalone {
			for n := 0; n < s.oversize; n += len(padText) {
				x.s(padText)
			}
		}
	}
}
