package rsync

import (
	"encoding/xml"
)

// Start tags of the fast parser (fastparse.go): attributes, their values
// and namespace declarations, checked as encoding/xml checks them.

// startTag reads a start tag whose name is at i, and gives its element to
// the builder (an empty element's end too).
func (f *fastParser) startTag(i int) (int, bool, error) {
	nameStart := i
	prefix, local, i, ok := f.name(i)
	if !ok {
		return 0, false, nil
	}
	raw := f.b[nameStart:i]
	i, empty, ok := f.attributes(i)
	if !ok {
		return 0, false, nil
	}
	// Declarations first: they apply to the element's own name.
	nsBefore := len(f.ns)
	if !f.declare() {
		return 0, false, nil
	}
	space := f.lookup(prefix)
	f.open = append(f.open, openElem{name: raw, ns: nsBefore})
	name := internName(local)
	attrs, ok := f.builderAttrs(space, name)
	if !ok {
		return 0, false, nil
	}
	if err := f.p.start(space, name, attrs); err != nil {
		return 0, true, err
	}
	if empty {
		return f.close(i, name)
	}
	return i, true, nil
}

// attributes reads a start tag's attributes into f.attrs, from i just after
// the element's name to the end of the tag: the index after the tag, and
// whether it ends with "/>".
func (f *fastParser) attributes(i int) (end int, empty, ok bool) {
	b := f.b
	f.attrs = f.attrs[:0]
	for {
		j := f.space(i)
		if j >= len(b) {
			return 0, false, false
		}
		switch b[j] {
		case '/':
			if j+1 >= len(b) || b[j+1] != '>' {
				return 0, false, false
			}
			return j + 2, true, true
		case '>':
			return j + 1, false, true
		}
		if j == i { // no white space before the attribute
			return 0, false, false
		}
		if i, ok = f.attribute(j); !ok {
			return 0, false, false
		}
	}
}

// attribute reads name="value" or name='value' at i into f.attrs, and
// returns the index after it.
func (f *fastParser) attribute(i int) (end int, ok bool) {
	b := f.b
	var a fastAttr
	if a.prefix, a.local, i, ok = f.name(i); !ok {
		return 0, false
	}
	if i = f.space(i); i >= len(b) || b[i] != '=' {
		return 0, false
	}
	if i = f.space(i + 1); i >= len(b) || b[i] != '"' && b[i] != '\'' {
		return 0, false
	}
	k, amp, ok := f.scanValue(i+1, b[i])
	if !ok {
		return 0, false
	}
	a.value, a.amp = b[i+1:k], amp
	f.attrs = append(f.attrs, a)
	return k + 1, true
}

// scanValue finds the closing quote of an attribute value that starts at i
// and whether the value has a reference; not ok on '<', a byte parseFast
// leaves to encoding/xml, or no closing quote.
func (f *fastParser) scanValue(i int, quote byte) (end int, amp, ok bool) {
	b := f.b
	for ; i < len(b) && b[i] != quote; i++ {
		switch byteClasses[b[i]] {
		case cLT, cBad:
			return 0, false, false
		case cAmp:
			amp = true
		case cUTF8:
			n := char(b, i)
			if n == 0 {
				return 0, false, false
			}
			i += n - 1
		}
	}
	if i >= len(b) {
		return 0, false, false
	}
	return i, amp, true
}

// declare puts the namespace declarations among f.attrs in scope; not ok on
// one parseFast leaves to encoding/xml, or past maxBindings in scope.
func (f *fastParser) declare() bool {
	for _, a := range f.attrs {
		var prefix string
		switch {
		case string(a.prefix) == "xmlns":
			if string(a.local) == "xml" || string(a.local) == "xmlns" || len(a.value) == 0 {
				return false
			}
			prefix = string(a.local)
		case a.prefix == nil && string(a.local) == "xmlns":
		default:
			continue
		}
		v, ok := f.value(a)
		if !ok {
			return false
		}
		f.ns = append(f.ns, nsBinding{prefix, string(v)})
	}
	return len(f.ns) <= maxBindings
}

// builderAttrs are the attributes the builder gets for the element space
// name: on rs:md and rs:ln those without a prefix (parseMD, parseLink: they
// are in no namespace, as encoding/xml has them), on others none. Not ok on
// a value whose references parseFast leaves to encoding/xml, which checks
// every value's references.
func (f *fastParser) builderAttrs(space, name string) ([]xml.Attr, bool) {
	if space != RSNS || name != "md" && name != "ln" {
		for _, a := range f.attrs {
			if _, ok := f.value(a); !ok {
				return nil, false
			}
		}
		return nil, true
	}
	attrs := f.xattrs[:0]
	for _, a := range f.attrs {
		if a.prefix != nil {
			continue
		}
		v, ok := f.value(a)
		if !ok {
			return nil, false
		}
		attrs = append(attrs, xml.Attr{Name: xml.Name{Local: internName(a.local)}, Value: string(v)})
	}
	f.xattrs = attrs
	return attrs, true
}

// value is an attribute's value with references decoded.
func (f *fastParser) value(a fastAttr) ([]byte, bool) {
	if !a.amp {
		return a.value, true
	}
	return f.decode(a.value)
}

// lookup is the namespace an element prefix stands for, as encoding/xml's
// translate has it.
func (f *fastParser) lookup(prefix []byte) string {
	switch string(prefix) {
	case "xmlns":
		return "xmlns"
	case "xml":
		return xmlNS
	}
	for k := len(f.ns) - 1; k >= 0; k-- {
		if f.ns[k].prefix == string(prefix) {
			return f.ns[k].url
		}
	}
	return string(prefix)
}
