package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads the config file at path, parses it and validates it. Every
// line of the error message starts with path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c, err := Parse(bytes.NewReader(data))
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		return nil, prefixErrors(path, err)
	}
	return c, nil
}

func prefixErrors(prefix string, err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	errs := joined.Unwrap()
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("%s: %w", prefix, e)
	}
	return errors.Join(out...)
}

// Parse decodes one YAML document strictly: unknown keys, duplicate keys,
// values of the wrong type and bare numbers for durations are errors, all
// reported at once with their line numbers. Absent keys get their built-in
// defaults, except the Harvest pointers, which stay nil (see
// Config.Resolved). Parse does not call Validate.
func Parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	root, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	ch := checker{seen: map[aliasVisit]bool{}}
	ch.mapping(root, reflect.TypeFor[Config]())
	if len(ch.errs) > 0 {
		return nil, errors.Join(ch.errs...)
	}
	c := newDefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, decodeError(err)
	}
	c.applyDefaults()
	return &c, nil
}

func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("config is empty")
		}
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(err)
	default:
		return nil, fmt.Errorf("line %d: multiple YAML documents are not supported (remove the \"---\" separator)", extra.Line)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, errors.New("config is empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: config must be a mapping of keys to values, got %s", root.Line, describe(root))
	}
	return root, nil
}

func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, problem := 0, msg
	if where, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(where, "line ") {
		if n, err := strconv.Atoi(strings.TrimPrefix(where, "line ")); err == nil {
			line, problem = n, rest
		}
	}
	if isParserProblem(problem) {
		line++
	}
	if line == 0 {
		return fmt.Errorf("YAML syntax error: %s", problem)
	}
	return fmt.Errorf("line %d: YAML syntax error: %s", line, problem)
}

// isParserProblem reports whether problem comes from the yaml.v3 parser
// rather than its scanner. yaml.v3 reports the line of parser errors
// 0-based (and omits it on the first line), scanner errors 1-based.
func isParserProblem(problem string) bool {
	switch problem {
	case "did not find expected <stream-start>",
		"did not find expected <document start>",
		"did not find expected node content",
		"did not find expected '-' indicator",
		"did not find expected key",
		"did not find expected ',' or ']'",
		"did not find expected ',' or '}'",
		"found undefined tag handle",
		"found duplicate %YAML directive",
		"found duplicate %TAG directive",
		"found incompatible YAML document":
		return true
	}
	return false
}

// decodeError rewrites errors from the final yaml.v3 decode. The checker
// normally reports every problem first; this is the fallback for anything
// it lets through, so that no Go type names reach the user.
func decodeError(err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	errs := make([]error, len(te.Errors))
	for i, msg := range te.Errors {
		errs[i] = errors.New(rewriteTypeError(msg))
	}
	return errors.Join(errs...)
}

func rewriteTypeError(msg string) string {
	if m := regexp.MustCompile(`^(line \d+): field (.*) not found in type \S+$`).FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: unknown key %q", m[1], m[2])
	}
	if m := regexp.MustCompile(`^(line \d+): field (.*) already set in type \S+$`).FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s: duplicate key %q", m[1], m[2])
	}
	if m := regexp.MustCompile("^(line \\d+): cannot unmarshal \\S+ (?:(`.*`) )?into (\\S+)$").FindStringSubmatch(msg); m != nil {
		value := "value"
		if m[2] != "" {
			value = "value " + m[2]
		}
		return fmt.Sprintf("%s: invalid %s (expected %s)", m[1], value, typeWord(m[3]))
	}
	return msg
}

func typeWord(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case goType == "time.Duration":
		return "a duration such as 30s, 5m or 1h"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	default:
		return "a mapping"
	}
}

type aliasVisit struct {
	node *yaml.Node
	typ  reflect.Type
}

// checker walks the YAML node tree along the Go types it will be decoded
// into and reports problems in user terms: line numbers and key names.
type checker struct {
	errs []error
	// seen makes each anchored node be checked once per target type,
	// which keeps alias-heavy documents linear.
	seen map[aliasVisit]bool
}

func (ch *checker) addf(n *yaml.Node, format string, args ...any) {
	ch.errs = append(ch.errs, fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...)))
}

// follow resolves an alias; ok is false when the anchored target was
// already checked as type t.
func (ch *checker) follow(n *yaml.Node, t reflect.Type) (target *yaml.Node, ok bool) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Anchor != "" {
		v := aliasVisit{n, t}
		if ch.seen[v] {
			return n, false
		}
		ch.seen[v] = true
	}
	return n, true
}

func (ch *checker) value(n *yaml.Node, t reflect.Type, label string) {
	n, ok := ch.follow(n, t)
	if !ok || isNull(n) {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		ch.duration(n, label)
	case t.Kind() == reflect.Struct, t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			ch.addf(n, "%s: expected a mapping, got %s", label, describe(n))
			return
		}
		ch.mapping(n, t)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			ch.addf(n, "%s: expected a list, got %s", label, describe(n))
			return
		}
		for i, e := range n.Content {
			ch.value(e, t.Elem(), fmt.Sprintf("%s[%d]", label, i))
		}
	default:
		ch.scalar(n, t, label)
	}
}

func (ch *checker) duration(n *yaml.Node, label string) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int", "!!float":
			ch.addf(n, "%s: bare number %s is ambiguous; add a unit (e.g. 30s, 5m, 1h)", label, n.Value)
			return
		}
		var d time.Duration
		if n.Decode(&d) == nil {
			return
		}
	}
	ch.addf(n, "%s: cannot parse %s as a duration (use e.g. 30s, 5m, 1h)", label, describe(n))
}

func (ch *checker) scalar(n *yaml.Node, t reflect.Type, label string) {
	var want string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want = "an integer"
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int" {
			ch.addf(n, "%s: expected %s, got %s", label, want, describe(n))
			return
		}
	case reflect.Bool:
		want = "true or false"
	default:
		want = "a string"
	}
	if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
		ch.addf(n, "%s: expected %s, got %s", label, want, describe(n))
	}
}

// mapping checks a mapping node that decodes into struct or map type t.
func (ch *checker) mapping(n *yaml.Node, t reflect.Type) {
	var fields map[string]reflect.Type
	if t.Kind() == reflect.Struct {
		fields = yamlFields(t)
	}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if isMerge(k) {
			ch.merge(v, t)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			ch.addf(k, "keys must be plain strings, got %s", describe(k))
			continue
		}
		name := k.Value
		if line, dup := first[name]; dup {
			ch.addf(k, "duplicate key %q (first defined at line %d)", name, line)
			continue
		}
		first[name] = k.Line
		if fields == nil {
			ch.value(v, t.Elem(), name)
			continue
		}
		ft, ok := fields[name]
		if !ok {
			ch.addf(k, "unknown key %q", name)
			continue
		}
		ch.value(v, ft, name)
	}
}

// merge checks the value of a "<<" merge key, which yaml.v3 accepts as a
// mapping, or a list of mappings, or aliases to them.
func (ch *checker) merge(n *yaml.Node, t reflect.Type) {
	sources := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		sources = n.Content
	}
	for _, src := range sources {
		src, ok := ch.follow(src, t)
		if !ok {
			continue
		}
		if src.Kind != yaml.MappingNode {
			ch.addf(src, "\"<<\" merge needs a mapping or a list of mappings, got %s", describe(src))
			continue
		}
		ch.mapping(src, t)
	}
}

func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && n.ShortTag() == "!!merge"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	v := []rune(n.Value)
	if len(v) > 40 {
		return fmt.Sprintf("%q...", string(v[:40]))
	}
	return fmt.Sprintf("%q", n.Value)
}

// yamlFields maps the YAML keys of struct type t, including inlined
// structs, to their Go types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-":
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
