package crosswalk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// field is one junii2 child element with its text trimmed (J2N-01).
type field struct {
	name    string
	n       int // 1-based position among same-name siblings, for Issue.Path
	value   string
	lang    string // the lang (or xml:lang) attribute, trimmed
	hasLang bool
	id      string // creator/contributor/publisher @id (J2E-09)
	hasID   bool
	ra      string // selfDOI @ra (J2E-08)
	hasRA   bool
}

func (f *field) path() string { return path(f.name, f.n) }

// foreign is a child element outside the root's namespace.
type foreign struct{ space, local string }

// junii2 is a parsed junii2 record: the root, its dialect, and the non-empty
// children in document order. Children are read by local name, never by
// position (J2E-03, D-J2J-04).
type junii2 struct {
	space, local string
	fields       []field
	byName       map[string][]int
	foreign      []foreign
	nested       []string // paths of children that contained markup
}

// get returns the fields with the given name, in document order.
func (r *junii2) get(name string) []*field {
	idx := r.byName[name]
	if len(idx) == 0 {
		return nil
	}
	out := make([]*field, len(idx))
	for i, j := range idx {
		out[i] = &r.fields[j]
	}
	return out
}

// first returns the first field with the given name, or nil.
func (r *junii2) first(name string) *field {
	if idx := r.byName[name]; len(idx) > 0 {
		return &r.fields[idx[0]]
	}
	return nil
}

// has reports whether a non-empty field with the given name exists.
func (r *junii2) has(name string) bool { return len(r.byName[name]) > 0 }

// dialect names the record's dialect for GW-J2J-02: "" for the canonical
// form (`junii2` in http://irdb.nii.ac.jp/oai), `<ns>|<root>` otherwise.
func (r *junii2) dialect() string {
	if r.space == nsJunii2 && r.local == "junii2" {
		return ""
	}
	return r.space + "|" + r.local
}

// acceptedRoot is GW-J2J-02: the dialects read as junii2.
func acceptedRoot(space, local string) bool {
	if local != "junii2" && local != "meta" {
		return false
	}
	switch space {
	case nsJunii2, nsJunii2Legacy, nsTulips, "":
		return true
	}
	return false
}

// errNotWellFormed marks input that encoding/xml rejects (and so the
// scanner, which follows it); it becomes the quarantine reason
// not-well-formed rather than a Go error.
var errNotWellFormed = errors.New("not well-formed")

// notJunii2Error is a well-formed document whose root is not junii2.
type notJunii2Error struct{ space, local string }

func (e *notJunii2Error) Error() string { return "root is not junii2: " + e.qname() }

func (e *notJunii2Error) qname() string {
	if e.space == "" {
		return e.local
	}
	return "{" + e.space + "}" + e.local
}

// isTrimSpace is J2N-01: Unicode white space (which includes U+3000) plus
// the zero-width characters that editors leave at the ends of values.
func isTrimSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\uFEFF' || r == '\u200B'
}

func trim(s string) string { return strings.TrimFunc(s, isTrimSpace) }

// textAcc gathers an element's text, the pieces of character data inside
// it, for trim. An element's text is usually one piece, which then stays a
// substring of the document: blank pieces (which trim would remove
// entirely) are dropped at the start and held back after text, and pieces
// are copied into buf only when a second non-blank one or a second blank
// one comes. The result is trim of all the pieces joined.
type textAcc struct {
	text, blank string
	buf         []byte // the pieces so far, once joined
}

func (t *textAcc) add(piece string) {
	switch {
	case t.buf != nil:
		t.buf = append(t.buf, piece...)
	case strings.IndexFunc(piece, notTrimSpace) < 0:
		if t.text == "" {
			return
		}
		if t.blank == "" {
			t.blank = piece
			return
		}
		t.join(piece)
	case t.text == "":
		t.text = piece
	default:
		t.join(piece)
	}
}

func (t *textAcc) join(piece string) {
	t.buf = make([]byte, 0, 2*(len(t.text)+len(t.blank)+len(piece)))
	t.buf = append(append(append(t.buf, t.text...), t.blank...), piece...)
}

func (t *textAcc) value() string {
	if t.buf != nil {
		return string(bytes.TrimFunc(t.buf, isTrimSpace))
	}
	return trim(t.text)
}

func notTrimSpace(r rune) bool { return !isTrimSpace(r) }

// parseJunii2 reads one junii2 metadata element. Like encoding/xml, which
// it replaces (see scanner), it is strict: undefined entities, mismatched
// tags and characters outside the XML range are errors (wrapping
// errNotWellFormed). A document that is not junii2 returns
// *notJunii2Error, whatever follows its root start tag.
func parseJunii2(metadata []byte) (*junii2, error) {
	s := newScanner(metadata)
	if err := firstStart(&s); err != nil {
		return nil, err
	}
	if !acceptedRoot(s.space, s.local) {
		return nil, &notJunii2Error{s.space, s.local}
	}
	rd := newJunii2Reader(s.space, s.local, elementBound(s.src))
	for {
		kind, err := s.next()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch kind {
		case tokStart:
			if err := rd.readChild(&s); err != nil {
				return nil, err
			}
		case tokEnd:
			return rd.r, trailing(&s)
		}
	}
}

// junii2Reader is parseJunii2's state: the record, how often each name
// occurred (empty values too, for field.n), and the array the first index
// of each name in byName comes from, so that only repeated names allocate.
type junii2Reader struct {
	r      *junii2
	counts map[string]int
	firsts []int
}

// newJunii2Reader sizes the record for n children, up to what a record
// has (a hostile one with more grows as it needs).
func newJunii2Reader(space, local string, n int) *junii2Reader {
	n = min(n, 128)
	return &junii2Reader{
		r:      &junii2{space: space, local: local, byName: make(map[string][]int, n), fields: make([]field, 0, n)},
		counts: make(map[string]int, n),
		firsts: make([]int, 0, n),
	}
}

// firstStart skips the prolog (declaration, comments, PIs, white space) and
// stops at the root start tag.
func firstStart(s *scanner) error {
	for {
		kind, err := s.next()
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotWellFormed, err)
		case kind == tokEOF:
			return fmt.Errorf("%w: no root element", errNotWellFormed)
		case kind == tokStart:
			return nil
		case kind == tokText && strings.TrimSpace(s.text) != "":
			return fmt.Errorf("%w: text before the root element", errNotWellFormed)
		}
	}
}

// trailing checks that nothing but white space, comments and PIs follows
// the root element.
func trailing(s *scanner) error {
	for {
		kind, err := s.next()
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotWellFormed, err)
		case kind == tokEOF:
			return nil
		case kind == tokStart:
			return fmt.Errorf("%w: second root element %s", errNotWellFormed, s.local)
		case kind == tokText && strings.TrimSpace(s.text) != "":
			return fmt.Errorf("%w: text after the root element", errNotWellFormed)
		}
	}
}

// readChild reads one child of the root, whose start tag the scanner just
// read, up to its end tag. Text of nested elements is concatenated (junii2
// children are simple; nesting is noted).
func (rd *junii2Reader) readChild(s *scanner) error {
	space, name := s.space, s.local
	var f field
	f.setAttrs(s.attrs) // before the scanner reuses them
	var text textAcc
	depth, nested := 1, false
	for depth > 0 {
		kind, err := s.next()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch kind {
		case tokStart:
			depth++
			nested = true
		case tokEnd:
			depth--
		case tokText:
			text.add(s.text)
		}
	}
	r := rd.r
	if space != r.space {
		r.foreign = append(r.foreign, foreign{space, name})
		return nil
	}
	rd.counts[name]++
	f.name, f.n, f.value = name, rd.counts[name], text.value()
	if nested {
		r.nested = append(r.nested, f.path())
	}
	if f.value == "" {
		return nil // J2N-01: empty after trimming counts as absent
	}
	rd.index(name)
	r.fields = append(r.fields, f)
	return nil
}

// index records the next field under its name in byName.
func (rd *junii2Reader) index(name string) {
	i := len(rd.r.fields)
	if idx, ok := rd.r.byName[name]; ok {
		rd.r.byName[name] = append(idx, i)
		return
	}
	rd.firsts = append(rd.firsts, i)
	n := len(rd.firsts)
	rd.r.byName[name] = rd.firsts[n-1 : n : n]
}

// setAttrs reads lang (or xml:lang; lang wins), id and ra, trimmed; an
// empty lang counts as absent.
func (f *field) setAttrs(attrs []xml.Attr) {
	for _, a := range attrs {
		switch {
		case a.Name.Local == "lang" && (a.Name.Space == "" || a.Name.Space == nsXML):
			if !f.hasLang || a.Name.Space == "" {
				f.lang, f.hasLang = trim(a.Value), true
			}
		case a.Name.Local == "id" && a.Name.Space == "":
			f.id, f.hasID = trim(a.Value), true
		case a.Name.Local == "ra" && a.Name.Space == "":
			f.ra, f.hasRA = trim(a.Value), true
		}
	}
	if f.hasLang && f.lang == "" {
		f.hasLang = false
	}
}
