package crosswalk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
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

// errNotWellFormed marks input that encoding/xml rejects; it becomes the
// quarantine reason not-well-formed rather than a Go error.
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

// parseJunii2 reads one junii2 metadata element with encoding/xml. The
// decoder is strict, so undefined entities, mismatched tags and characters
// outside the XML range are errors (wrapping errNotWellFormed). A document
// that is not junii2 returns *notJunii2Error.
func parseJunii2(metadata []byte) (*junii2, error) {
	d := xml.NewDecoder(bytes.NewReader(metadata))
	root, err := firstStart(d)
	if err != nil {
		return nil, err
	}
	if !acceptedRoot(root.Name.Space, root.Name.Local) {
		return nil, &notJunii2Error{root.Name.Space, root.Name.Local}
	}
	r := &junii2{space: root.Name.Space, local: root.Name.Local, byName: map[string][]int{}}
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := r.readChild(d, t, counts); err != nil {
				return nil, err
			}
		case xml.EndElement:
			return r, trailing(d)
		}
	}
}

// firstStart skips the prolog (declaration, comments, PIs, white space) and
// returns the root start tag.
func firstStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return xml.StartElement{}, fmt.Errorf("%w: no root element", errNotWellFormed)
		}
		if err != nil {
			return xml.StartElement{}, fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, fmt.Errorf("%w: text before the root element", errNotWellFormed)
			}
		}
	}
}

// trailing checks that nothing but white space, comments and PIs follows
// the root element.
func trailing(d *xml.Decoder) error {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return fmt.Errorf("%w: second root element %s", errNotWellFormed, t.Name.Local)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return fmt.Errorf("%w: text after the root element", errNotWellFormed)
			}
		}
	}
}

// readChild reads one child of the root up to its end tag. Text of nested
// elements is concatenated (junii2 children are simple; nesting is noted).
func (r *junii2) readChild(d *xml.Decoder, start xml.StartElement, counts map[string]int) error {
	var text strings.Builder
	depth, nested := 1, false
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			nested = true
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(t)
		}
	}
	if start.Name.Space != r.space {
		r.foreign = append(r.foreign, foreign{start.Name.Space, start.Name.Local})
		return nil
	}
	name := start.Name.Local
	counts[name]++
	f := field{name: name, n: counts[name], value: trim(text.String())}
	if nested {
		r.nested = append(r.nested, f.path())
	}
	if f.value == "" {
		return nil // J2N-01: empty after trimming counts as absent
	}
	for _, a := range start.Attr {
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
	r.byName[name] = append(r.byName[name], len(r.fields))
	r.fields = append(r.fields, f)
	return nil
}
