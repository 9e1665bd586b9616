package crosswalk

// The encoding/xml implementations that the scanner replaced, kept as the
// oracle of the differential tests (xmlscan_test.go): stdParseTree is the
// old parseTree and stdParseJunii2 the old parseJunii2, unchanged but for
// their names and the key the tree now caches.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// stdKey is the old node.key, computed from the name.
func stdKey(space, local string) string {
	if p, ok := prefixes[space]; ok {
		return p + ":" + local
	}
	return "{" + space + "}" + local
}

// stdParseTree reads a whole document into a node tree with encoding/xml.
func stdParseTree(doc []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var root *node
	var stack []*node
	var texts []*strings.Builder
	var counts []map[string]int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == nil || len(stack) > 0 {
				return nil, fmt.Errorf("%w: incomplete document", errNotWellFormed)
			}
			return root, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{space: t.Name.Space, local: t.Name.Local, qkey: stdKey(t.Name.Space, t.Name.Local), attrs: t.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, fmt.Errorf("%w: second root element", errNotWellFormed)
				}
				root = n
			} else {
				p, cnt := stack[len(stack)-1], counts[len(counts)-1]
				cnt[n.space+" "+n.local]++
				n.n = cnt[n.space+" "+n.local]
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
			texts = append(texts, &strings.Builder{})
			counts = append(counts, map[string]int{})
		case xml.EndElement:
			top := stack[len(stack)-1]
			top.text = trim(texts[len(texts)-1].String())
			stack, texts, counts = stack[:len(stack)-1], texts[:len(texts)-1], counts[:len(counts)-1]
		case xml.CharData:
			if len(texts) > 0 {
				texts[len(texts)-1].Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("%w: text outside the root element", errNotWellFormed)
			}
		}
	}
}

// stdParseJunii2 reads one junii2 metadata element with encoding/xml.
func stdParseJunii2(metadata []byte) (*junii2, error) {
	d := xml.NewDecoder(bytes.NewReader(metadata))
	root, err := stdFirstStart(d)
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
			if err := r.stdReadChild(d, t, counts); err != nil {
				return nil, err
			}
		case xml.EndElement:
			return r, stdTrailing(d)
		}
	}
}

func stdFirstStart(d *xml.Decoder) (xml.StartElement, error) {
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

func stdTrailing(d *xml.Decoder) error {
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

func (r *junii2) stdReadChild(d *xml.Decoder, start xml.StartElement, counts map[string]int) error {
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
