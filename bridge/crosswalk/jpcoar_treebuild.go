package crosswalk

import (
	"encoding/xml"
	"strings"
)

// treeBuilder assembles parseTree's tree with few allocations: nodes,
// attributes and child lists are carved from chunks shared by the whole
// tree (a full chunk is replaced, never grown, so earlier pointers and
// slices stay valid), and names, values and text are mostly substrings of
// the document (see scanner and textAcc).
type treeBuilder struct {
	root  *node
	open  []frame    // the open elements, the root first
	sibs  []*node    // the children of the open elements so far, each after its parent's frame.mark
	nodes []node     // chunk of nodes
	attrs []xml.Attr // chunk of attribute lists
	kids  []*node    // chunk of child lists
	known [maxKnown]spacePrefix
	nk    int // known[:nk] are in use
}

// spacePrefix is a namespace's entry in prefixes, or its absence (ok).
type spacePrefix struct {
	space, prefix string
	ok            bool
}

// maxKnown bounds treeBuilder.known: a record has a handful of namespaces.
const maxKnown = 16

// prefix is prefixes[space], remembered: comparing a namespace with one
// seen before (usually the very same substring) is cheaper than hashing it.
func (b *treeBuilder) prefix(space string) (string, bool) {
	for _, k := range b.known[:b.nk] {
		if k.space == space {
			return k.prefix, k.ok
		}
	}
	p, ok := prefixes[space]
	if b.nk < maxKnown {
		b.known[b.nk] = spacePrefix{space, p, ok}
		b.nk++
	}
	return p, ok
}

// frame is an open element.
type frame struct {
	n      *node
	text   textAcc
	mark   int           // len(sibs) when the element started
	counts map[qName]int // children per name, once there are many
}

// qName is an element's name, translated.
type qName struct{ space, local string }

// maxScanSiblings is how many earlier siblings position searches. Beyond,
// the parent counts its children by name in a map, so that a hostile
// record with thousands of distinct children costs linear time.
const maxScanSiblings = 32

// elementBound is at least the number of elements in doc: one per '<'
// that opens no end tag.
func elementBound(doc string) int { return strings.Count(doc, "<") - strings.Count(doc, "</") }

// newTreeBuilder sizes the first chunks for doc: elementBound nodes and
// one attribute per '=', up to what a large record has (comments, say,
// could make the bound far too high; later chunks double).
func newTreeBuilder(doc string) treeBuilder {
	n := min(elementBound(doc), maxFirstChunk)
	return treeBuilder{
		open:  make([]frame, 0, 8),
		sibs:  make([]*node, 0, n),
		nodes: make([]node, 0, n),
		attrs: make([]xml.Attr, 0, min(strings.Count(doc, "="), maxFirstChunk)),
		kids:  make([]*node, 0, n),
	}
}

const maxFirstChunk = 512

// start adds the element the scanner just opened.
func (b *treeBuilder) start(s *scanner) {
	n := b.newNode()
	n.space, n.local = s.space, s.local
	p, ok := b.prefix(s.space)
	n.qkey = elementKey(s.space, s.local, s.qname, p, ok)
	n.attrs = b.keepAttrs(s.attrs)
	if len(b.open) == 0 {
		b.root = n
	} else {
		n.n = b.position(&b.open[len(b.open)-1], n)
		b.sibs = append(b.sibs, n)
	}
	b.open = append(b.open, frame{n: n, mark: len(b.sibs)})
}

// end closes the innermost element: its text and children are complete.
func (b *treeBuilder) end() {
	f := &b.open[len(b.open)-1]
	f.n.text = f.text.value()
	f.n.kids = b.keepKids(b.sibs[f.mark:])
	b.sibs = b.sibs[:f.mark]
	b.open = b.open[:len(b.open)-1]
}

// position is n's 1-based position among the earlier children of f of
// the same name: one more than the nearest one's (same-name siblings are
// usually adjacent, so the search is short).
func (b *treeBuilder) position(f *frame, n *node) int {
	siblings := b.sibs[f.mark:]
	if f.counts == nil && len(siblings) < maxScanSiblings {
		for i := len(siblings) - 1; i >= 0; i-- {
			if k := siblings[i]; k.local == n.local && k.space == n.space {
				return k.n + 1
			}
		}
		return 1
	}
	if f.counts == nil {
		f.counts = make(map[qName]int, 2*len(siblings))
		for _, k := range siblings {
			f.counts[qName{k.space, k.local}] = k.n
		}
	}
	key := qName{n.space, n.local}
	c := f.counts[key] + 1
	f.counts[key] = c
	return c
}

func (b *treeBuilder) newNode() *node {
	if len(b.nodes) == cap(b.nodes) {
		b.nodes = make([]node, 0, max(16, 2*cap(b.nodes)))
	}
	b.nodes = b.nodes[:len(b.nodes)+1]
	return &b.nodes[len(b.nodes)-1]
}

// keepAttrs copies the scanner's attributes (which the next start tag
// overwrites) into the attribute chunk.
func (b *treeBuilder) keepAttrs(attrs []xml.Attr) []xml.Attr {
	if len(attrs) == 0 {
		return nil
	}
	if cap(b.attrs)-len(b.attrs) < len(attrs) {
		b.attrs = make([]xml.Attr, 0, max(32, len(attrs), 2*cap(b.attrs)))
	}
	from := len(b.attrs)
	b.attrs = append(b.attrs, attrs...)
	return b.attrs[from:len(b.attrs):len(b.attrs)]
}

// keepKids copies a child list into the child-list chunk.
func (b *treeBuilder) keepKids(kids []*node) []*node {
	if len(kids) == 0 {
		return nil
	}
	if cap(b.kids)-len(b.kids) < len(kids) {
		b.kids = make([]*node, 0, max(32, len(kids), 2*cap(b.kids)))
	}
	from := len(b.kids)
	b.kids = append(b.kids, kids...)
	return b.kids[from:len(b.kids):len(b.kids)]
}
