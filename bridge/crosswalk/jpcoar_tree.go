package crosswalk

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// node is a minimal element tree for CheckJPCOAR: JPCOAR records are small
// and the checks look across siblings, so a tree is simpler than a stream.
type node struct {
	space, local string
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
func (n *node) key() string {
	if p, ok := prefixes[n.space]; ok {
		return p + ":" + n.local
	}
	return "{" + n.space + "}" + n.local
}

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

// parseTree reads a whole document into a node tree with encoding/xml.
func parseTree(doc []byte) (*node, error) {
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
			n := &node{space: t.Name.Space, local: t.Name.Local, attrs: t.Attr}
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
