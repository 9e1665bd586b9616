package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// check walks the document along the Go types it decodes into and reports,
// in the user's words (line, key, what was expected), every unknown or
// duplicate key and every value that does not fit. One walk finds them all;
// yaml.v3's own errors name Go types, stop at the first duplicate and let 1.5
// or 1e9 through as integers.
func check(root *yaml.Node) []error {
	c := &checker{seen: map[visit]bool{}}
	c.mapping(root, reflect.TypeFor[Config]())
	return c.errs
}

type checker struct {
	errs []error
	seen map[visit]bool // anchored nodes already checked as a type (alias bombs stay linear)
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

func (c *checker) addf(n *yaml.Node, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...)))
}

// follow resolves aliases; it reports false for an anchored node already
// checked as type t.
func (c *checker) follow(n *yaml.Node, t reflect.Type) (*yaml.Node, bool) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Anchor != "" && t != nil {
		if c.seen[visit{n, t}] {
			return n, false
		}
		c.seen[visit{n, t}] = true
	}
	return n, true
}

func (c *checker) value(n *yaml.Node, t reflect.Type, label string) {
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
			c.addf(n, "%s: bare number %s is ambiguous; add a unit (e.g. 30s, 5m, 1h)", label, n.Value)
		case !scalar || n.Decode(&d) != nil:
			c.addf(n, "%s: cannot parse %s as a duration (use e.g. 30s, 5m, 1h)", label, describe(n))
		}
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.addf(n, "%s: expected a mapping, got %s", label, describe(n))
			return
		}
		c.mapping(n, t)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.addf(n, "%s: expected a list, got %s", label, describe(n))
			return
		}
		for i, e := range n.Content {
			c.value(e, t.Elem(), fmt.Sprintf("%s[%d]", label, i))
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		if !scalar || n.ShortTag() != "!!int" || n.Decode(reflect.New(t).Interface()) != nil {
			c.addf(n, "%s: expected an integer, got %s", label, describe(n))
		}
	case t.Kind() == reflect.Bool:
		if !scalar || n.Decode(new(bool)) != nil {
			c.addf(n, "%s: expected true or false, got %s", label, describe(n))
		}
	default:
		if !scalar {
			c.addf(n, "%s: expected a string, got %s", label, describe(n))
		}
	}
}

// mapping checks a mapping that decodes into struct or map type t, following
// "<<" merge keys.
func (c *checker) mapping(n *yaml.Node, t reflect.Type) {
	fields := yamlFields(t)
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		k, _ = c.follow(k, nil)
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
					c.addf(src, "\"<<\" merge needs a mapping or a list of mappings, got %s", describe(src))
				} else {
					c.mapping(src, t)
				}
			}
		case k.Kind != yaml.ScalarNode:
			c.addf(k, "keys must be plain strings, got %s", describe(k))
		case first[k.Value] != 0:
			c.addf(k, "duplicate key %q (first defined at line %d)", k.Value, first[k.Value])
		case t.Kind() == reflect.Map:
			first[k.Value] = k.Line
			c.value(v, t.Elem(), k.Value)
		case fields[k.Value] == nil:
			first[k.Value] = k.Line
			c.addf(k, "unknown key %q", k.Value)
		default:
			first[k.Value] = k.Line
			c.value(v, fields[k.Value], k.Value)
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
