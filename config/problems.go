package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// File is the config file, set by Load; "" otherwise.
	File string
	// Line is the line in the document of the key (or list element) the
	// problem is about; 0 when it has none: the key is absent and its
	// default is wrong, or the Config was built in code.
	Line int
	// Path names the field as the message does: Validate gives the full
	// path ("repositories[1].name"), problems found while reading the file
	// give the key as written in its mapping ("timeout" under defaults,
	// "sets[1]"), and "" when the problem is not about one value (unknown
	// or duplicate key, syntax error).
	Path string
	// Message says what is wrong, e.g. `must match [a-z0-9-]+ (got "X")`.
	Message string
}

// Error formats p as "FILE: line N: PATH: MESSAGE", leaving out what is
// empty.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File + ": ")
	}
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is the error Load, Parse, ParseAndValidate and Validate return
// for a configuration that is wrong: every problem found, in line order
// (those without a line last). Its message has one problem per line, like
// errors.Join. Use errors.As (or errors.AsType[Problems]) to word them
// differently.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns every problem as an error.
func (ps Problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errs
}

// problem is a Problem with what ParseAndValidate needs to place it.
type problem struct {
	Problem
	// fields are the document fields (full paths) a Validate problem is
	// about; the first one the document writes gives its line. nil: Path.
	fields []string
	// covers is the field (full path) a checker problem makes unusable:
	// Validate problems about it or below it only follow from this one.
	// "" covers nothing.
	covers string
	// merge limits covers to the fields the document does not write itself
	// (they were to come from the broken "<<" merge).
	merge bool
}

// decodeProblems words what yaml.v3's decode refused. check reports
// everything it refuses; this is a safety net that must never show Go type
// names. fatal means nothing was decoded.
func decodeProblems(err error) (ps []problem, fatal bool) {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		if err != nil {
			return []problem{{Problem: Problem{Message: strings.TrimPrefix(err.Error(), "yaml: ")}}}, true
		}
		return nil, false
	}
	for _, e := range te.Errors {
		where, _, _ := strings.Cut(e, ":")
		p := Problem{Message: where + ": invalid value"}
		if n, err := strconv.Atoi(strings.TrimPrefix(where, "line ")); err == nil {
			p = Problem{Line: n, Message: "invalid value"}
		}
		ps = append(ps, problem{Problem: p})
	}
	return ps, false
}

// toError returns ps, sorted, as Problems, or nil.
func toError(ps []problem) error {
	if len(ps) == 0 {
		return nil
	}
	out := make(Problems, len(ps))
	for i, p := range ps {
		out[i] = p.Problem
	}
	last := func(line int) int { return cmp.Or(line, math.MaxInt) }
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(last(a.Line), last(b.Line)) })
	return out
}

// locate gives every Validate problem the line of its field, and drops
// those about a field a checker problem already covers.
func locate(root *yaml.Node, checked, validated []problem) []problem {
	lines := keyLines(root)
	out := checked
	for _, v := range validated {
		fields := v.fields
		if fields == nil {
			fields = []string{v.Path}
		}
		if !explained(fields, checked, lines) {
			v.Line = lines.find(fields)
			out = append(out, v)
		}
	}
	return out
}

func explained(fields []string, checked []problem, lines lineMap) bool {
	for _, c := range checked {
		for _, f := range fields {
			_, written := lines[f]
			if c.covers != "" && within(f, c.covers) && !(c.merge && written) {
				return true
			}
		}
	}
	return false
}

// within reports whether path is field or a field, element or key below
// it.
func within(path, field string) bool {
	rest, ok := strings.CutPrefix(path, field)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// lineMap maps the field paths a document writes, named as Validate names
// them, to the line of their key or list element.
type lineMap map[string]int

// find returns the line of the first of fields the document writes, else
// that of the list element the first one belongs to (repositories[3] for
// an absent repositories[3].name), else 0.
func (l lineMap) find(fields []string) int {
	for _, f := range fields {
		if n, ok := l[f]; ok {
			return n
		}
	}
	for p := fields[0]; p != ""; {
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		if p = p[:i]; strings.HasSuffix(p, "]") {
			return l[p]
		}
	}
	return 0
}

// maxLineVisits bounds keyLines on documents that alias a lot (yaml.v3
// refuses to decode the worst ones before keyLines runs).
const maxLineVisits = 1 << 20

// keyLines walks the document along the Go types, as the decoder does: a
// key written in a mapping wins over the same key merged in with "<<", and
// earlier merge sources over later ones.
func keyLines(root *yaml.Node) lineMap {
	w := &lineWalker{lines: lineMap{}, budget: maxLineVisits, active: map[*yaml.Node]bool{root: true}}
	w.mapping(root, reflect.TypeFor[Config](), "", map[string]bool{})
	return w.lines
}

type lineWalker struct {
	lines  lineMap
	budget int
	active map[*yaml.Node]bool // the containers being walked (an alias may point to one)
}

func (w *lineWalker) value(n *yaml.Node, t reflect.Type, path string) {
	n = resolve(n)
	if w.active[n] {
		return
	}
	w.active[n] = true
	defer delete(w.active, n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
	case (t.Kind() == reflect.Struct || t.Kind() == reflect.Map) && n.Kind == yaml.MappingNode:
		w.mapping(n, t, path, map[string]bool{})
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		i := 0
		for _, e := range n.Content {
			if w.budget--; w.budget < 0 {
				return
			}
			if decoded(e, t.Elem()) {
				elem := fmt.Sprintf("%s[%d]", path, i)
				w.lines[elem] = e.Line
				w.value(e, t.Elem(), elem)
				i++
			}
		}
	}
}

// mapping records the keys of n not in have (the keys already defined at
// this level), then those of its merge sources.
func (w *lineWalker) mapping(n *yaml.Node, t reflect.Type, path string, have map[string]bool) {
	fields := yamlFields(t)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if w.budget--; w.budget < 0 {
			return
		}
		key, k := n.Content[i], resolve(n.Content[i])
		ft := fields[k.Value]
		if t.Kind() == reflect.Map {
			ft = t.Elem()
		}
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.Value == "<<" && k.ShortTag() == "!!merge":
			merges = append(merges, resolve(n.Content[i+1]))
		case ft != nil && !have[k.Value]:
			have[k.Value] = true
			w.lines[join(path, k.Value)] = key.Line
			w.value(n.Content[i+1], ft, join(path, k.Value))
		}
	}
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			if src = resolve(src); src.Kind == yaml.MappingNode && !w.active[src] {
				w.active[src] = true
				w.mapping(src, t, path, have)
				delete(w.active, src)
			}
		}
	}
}

// lastLine is the number of the last line of data, counted as yaml.v3
// does: a line break is \n, \r, \r\n, NEL, LS or PS.
func lastLine(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, brk := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += strings.Count(s, brk)
	}
	return n
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
