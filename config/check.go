package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// check walks the document along the Go types it decodes into and reports,
// in the user's words (line, key, what was expected), every unknown or
// duplicate key and every value that does not fit. One walk finds them all;
// yaml.v3's own errors name Go types, stop at the first duplicate and let 1.5
// or 1e9 through as integers.
//
// It then prunes what it reported from the tree, so that a lenient decode
// of what is left gives the defaults there: bad values become null (list
// elements their zero value, keeping the others' indices), and duplicate
// keys, non-string keys and broken merges are removed.
func check(root *yaml.Node) []problem {
	c := &checker{seen: map[visit]bool{}}
	c.mapping(root, reflect.TypeFor[Config](), "")
	for _, b := range c.bad {
		b.prune()
	}
	for _, d := range c.drop {
		for i := 0; i+1 < len(d.m.Content); i += 2 {
			if d.m.Content[i] == d.key {
				d.m.Content = slices.Delete(d.m.Content, i, i+2)
				break
			}
		}
	}
	return c.probs
}

type checker struct {
	probs []problem
	seen  map[visit]bool // anchored nodes already checked as a type (alias bombs stay linear)
	bad   []badValue     // values to prune
	drop  []entry        // mapping entries to prune
}

// badValue is a value to prune: to null, or to the zero value of elem for
// a list element (yaml.v3 would skip a null element, renumbering the rest).
type badValue struct {
	n    *yaml.Node
	elem reflect.Type
}

func (b badValue) prune() {
	line, col, anchor := b.n.Line, b.n.Column, b.n.Anchor
	*b.n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	switch {
	case b.elem == nil:
	case b.elem.Kind() == reflect.Struct || b.elem.Kind() == reflect.Map:
		*b.n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	default:
		if err := b.n.Encode(reflect.Zero(b.elem).Interface()); err != nil {
			*b.n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		}
	}
	b.n.Line, b.n.Column, b.n.Anchor = line, col, anchor
}

// entry is the entry of mapping m with key node key.
type entry struct{ m, key *yaml.Node }

type visit struct {
	n *yaml.Node
	t reflect.Type
}

// addf reports a problem at n that is not about one value.
func (c *checker) addf(n *yaml.Node, format string, args ...any) {
	c.probs = append(c.probs, problem{Problem: Problem{Line: n.Line, Message: fmt.Sprintf(format, args...)}})
}

// badf reports value n, written as label at path, and prunes it.
func (c *checker) badf(n *yaml.Node, label, path string, elem reflect.Type, format string, args ...any) {
	c.probs = append(c.probs, problem{Problem: Problem{Line: n.Line, Path: label, Message: fmt.Sprintf(format, args...)}, covers: path})
	c.bad = append(c.bad, badValue{n, elem})
}

// prune removes key (an element of m.Content) and its value from m.
func (c *checker) prune(m, key *yaml.Node) { c.drop = append(c.drop, entry{m, key}) }

// follow resolves aliases; it reports false for an anchored node already
// checked as type t.
func (c *checker) follow(n *yaml.Node, t reflect.Type) (*yaml.Node, bool) {
	n = resolve(n)
	if n.Anchor != "" && t != nil {
		if c.seen[visit{n, t}] {
			return n, false
		}
		c.seen[visit{n, t}] = true
	}
	return n, true
}

// value checks n, the value written as label (the key, or key[i] for a
// list element) at the full field path; elem is t for a list element.
func (c *checker) value(n *yaml.Node, t reflect.Type, label, path string, elem reflect.Type) {
	n, ok := c.follow(n, t)
	if !ok || isNull(n) {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	scalar := n.Kind == yaml.ScalarNode
	switch {
	case t == reflect.TypeFor[time.Duration]():
		var d time.Duration
		switch {
		case scalar && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float"):
			c.badf(n, label, path, elem, "bare number %s is ambiguous; add a unit (e.g. 30s, 5m, 1h)", n.Value)
		case !scalar || n.Decode(&d) != nil:
			c.badf(n, label, path, elem, "cannot parse %s as a duration (use e.g. 30s, 5m, 1h)", describe(n))
		}
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.badf(n, label, path, elem, "expected a mapping, got %s", describe(n))
			return
		}
		c.mapping(n, t, path)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.badf(n, label, path, elem, "expected a list, got %s", describe(n))
			return
		}
		j := 0 // the index yaml.v3 gives it, and so Validate
		for i, e := range n.Content {
			c.value(e, t.Elem(), fmt.Sprintf("%s[%d]", label, i), fmt.Sprintf("%s[%d]", path, j), t.Elem())
			if decoded(e, t.Elem()) {
				j++
			}
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		if !scalar || n.ShortTag() != "!!int" || n.Decode(reflect.New(t).Interface()) != nil {
			c.badf(n, label, path, elem, "expected an integer, got %s", describe(n))
		}
	case t.Kind() == reflect.Bool:
		if !scalar || n.Decode(new(bool)) != nil {
			c.badf(n, label, path, elem, "expected true or false, got %s", describe(n))
		}
	default:
		if !scalar {
			c.badf(n, label, path, elem, "expected a string, got %s", describe(n))
		}
	}
}

// mapping checks a mapping at path that decodes into struct or map type t,
// following "<<" merge keys.
func (c *checker) mapping(n *yaml.Node, t reflect.Type, path string) {
	fields := yamlFields(t)
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i], n.Content[i+1]
		k, _ := c.follow(key, nil)
		switch {
		case k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge":
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, src := range sources {
				if src, ok := c.follow(src, t); !ok {
					continue
				} else if src.Kind != yaml.MappingNode {
					msg := fmt.Sprintf("\"<<\" merge needs a mapping or a list of mappings, got %s", describe(src))
					c.probs = append(c.probs, problem{Problem: Problem{Line: src.Line, Message: msg}, covers: path, merge: true})
					c.prune(n, key)
				} else {
					c.mapping(src, t, path)
				}
			}
		case k.Kind != yaml.ScalarNode:
			c.addf(k, "keys must be plain strings, got %s", describe(k))
			c.prune(n, key)
		case first[k.Value] != 0:
			c.addf(k, "duplicate key %q (first defined at line %d)", k.Value, first[k.Value])
			c.prune(n, key)
		case t.Kind() == reflect.Map:
			first[k.Value] = k.Line
			c.value(v, t.Elem(), k.Value, join(path, k.Value), nil)
		case fields[k.Value] == nil:
			first[k.Value] = k.Line
			c.addf(k, "unknown key %q", k.Value)
		default:
			first[k.Value] = k.Line
			c.value(v, fields[k.Value], k.Value, join(path, k.Value), nil)
		}
	}
}

// yamlFields maps the YAML keys of struct type t, including inlined structs,
// to their Go types (nil for a non-struct).
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	if t.Kind() != reflect.Struct {
		return fields
	}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case strings.Contains(opts, "inline"):
			for k, v := range yamlFields(f.Type) {
				fields[k] = v
			}
		case name == "":
			fields[strings.ToLower(f.Name)] = f.Type
		default:
			fields[name] = f.Type
		}
	}
	return fields
}

// decoded reports whether yaml.v3 keeps list element e of type t: it skips
// a null one that cannot hold nil.
func decoded(e *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return !isNull(resolve(e))
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if v := []rune(n.Value); len(v) > 40 {
		return fmt.Sprintf("%q...", string(v[:40]))
	}
	return fmt.Sprintf("%q", n.Value)
}
