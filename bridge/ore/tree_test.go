package ore

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// node is a parsed element, for checking output structure in tests.
type node struct {
	name     xml.Name // resolved namespace
	attrs    []xml.Attr
	children []*node
	text     string
}

// parseTree parses doc with encoding/xml (namespace-aware, strict), failing the
// test when it is not well-formed.
func parseTree(t testing.TB, doc []byte) *node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("output is not well-formed: %v\n%s", err, doc)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &node{name: tk.Name, attrs: tk.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if root == nil {
		t.Fatalf("no root element:\n%s", doc)
	}
	return root
}

func (n *node) all(space, local string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.name.Space == space && c.name.Local == local {
			out = append(out, c)
		}
	}
	return out
}

func (n *node) attr(space, local string) string {
	for _, a := range n.attrs {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// links returns the atom:link children with rel.
func (n *node) links(rel string) []*node {
	var out []*node
	for _, l := range n.all(nsAtom, "link") {
		if l.attr("", "rel") == rel {
			out = append(out, l)
		}
	}
	return out
}

// xmllint runs xmllint --noout on doc when xmllint is on PATH. Under CI=true a
// missing xmllint fails the test: CI installs libxml2-utils (.ci/run).
func xmllint(t *testing.T, name string, doc []byte) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("xmllint is not on PATH but CI=true: install libxml2-utils (.ci/run does) so %s is checked", name)
		}
		t.Logf("xmllint not on PATH: %s checked with encoding/xml only (apt-get install libxml2-utils)", name)
		return
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--nonet", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("xmllint --noout %s: %v\n%s", name, err, strings.TrimSpace(string(out)))
	}
}
