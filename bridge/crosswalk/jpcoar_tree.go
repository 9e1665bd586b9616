package crosswalk

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// node is a minimal element tree for CheckJPCOAR: JPCOAR records are small
// and the checks look across siblings, so a tree is simpler than a stream.
type node struct {
	space, local string
	qkey         string // key(), computed once: the checks ask for it again and again
	attrs        []xml.Attr
	text         string
	kids         []*node
	n            int // 1-based position among same-name siblings
}

// attr returns the attribute value; space "" is an unqualified attribute.
func (n *node) attr(space, local string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func (n *node) lang() string {
	v, _ := n.attr(nsXML, "lang")
	return v
}

// key is the element's qualified name with the conventional prefix
// (dc:title), or {ns}local for namespaces outside JPCOAR.
func (n *node) key() string { return n.qkey }

func (n *node) path() string { return path(n.key(), n.n) }

// children returns the children with the given key.
func (n *node) children(key string) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.key() == key {
			out = append(out, k)
		}
	}
	return out
}

var prefixes = map[string]string{
	nsJPCOAR: "jpcoar", nsDC: "dc", nsDCTerms: "dcterms", nsDatacite: "datacite",
	nsOAIRE: "oaire", nsDCNDL: "dcndl", nsRDF: "rdf",
}

// elementKey is node.key for an element named qname as written, p and ok
// being prefixes[space]. When the document uses the conventional prefix,
// the key is qname itself and costs no allocation.
func elementKey(space, local, qname, p string, ok bool) string {
	if !ok {
		return "{" + space + "}" + local
	}
	if len(qname) == len(p)+1+len(local) && qname[len(p)] == ':' && strings.HasPrefix(qname, p) {
		return qname
	}
	return p + ":" + local
}

// parseTree reads a whole document into a node tree. Errors wrap
// errNotWellFormed: the scanner's (encoding/xml's, word for word), a
// second root element, text outside the root element, and no root.
func parseTree(doc []byte) (*node, error) {
	s := newScanner(doc)
	b := newTreeBuilder(s.src)
	for {
		kind, err := s.next()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errNotWellFormed, err)
		}
		switch kind {
		case tokEOF:
			if b.root == nil {
				return nil, fmt.Errorf("%w: incomplete document", errNotWellFormed)
			}
			return b.root, nil
		case tokStart:
			if len(b.open) == 0 && b.root != nil {
				return nil, fmt.Errorf("%w: second root element", errNotWellFormed)
			}
			b.start(&s)
		case tokEnd:
			b.end()
		case tokText:
			if len(b.open) > 0 {
				b.open[len(b.open)-1].text.add(s.text)
			} else if strings.TrimSpace(s.text) != "" {
				return nil, fmt.Errorf("%w: text outside the root element", errNotWellFormed)
			}
		}
	}
}
