package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

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
	if err == nil {
		return c, nil
	}
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	for i, e := range errs {
		errs[i] = fmt.Errorf("%s: %w", path, e)
	}
	return nil, errors.Join(errs...)
}

// Parse decodes one YAML document strictly: unknown keys, duplicate keys,
// values of the wrong type (yaml.v3 alone would truncate 1.5 to 1 for an
// integer and accept 1e9) and bare numbers for durations are errors, all
// reported at once with their line numbers and key names. Absent keys get
// their built-in defaults, except the Harvest pointers, which stay nil (see
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
	if errs := check(root); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		// check reports everything yaml.v3 refuses; this is a safety net that
		// must never show Go type names.
		if te, ok := errors.AsType[*yaml.TypeError](err); ok {
			errs := make([]error, len(te.Errors))
			for i, e := range te.Errors {
				where, _, _ := strings.Cut(e, ":")
				errs[i] = fmt.Errorf("%s: invalid value", where)
			}
			return nil, errors.Join(errs...)
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c.SetDefaults()
	return c, nil
}

// parseDocument reads the single YAML document into a node tree and checks
// its shape: present, alone, a mapping.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("config is empty")
		}
		return nil, syntaxError(err)
	}
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
	if root := doc.Content[0]; root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: config must be a mapping of keys to values, got %s", root.Line, describe(root))
	}
	return doc.Content[0], nil
}

// syntaxError words a yaml.v3 syntax error as "line N: YAML syntax error: …".
// yaml.v3 has no structured syntax error, so the line is read from its
// message, and yaml.v3 counts lines from 0 for its parser's problems (not its
// scanner's): those are the fixed messages listed here (parserc.go), and
// TestBadConfigs pins the common ones.
func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, problem := 0, msg
	if where, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(where, "line ") {
		if n, err := strconv.Atoi(strings.TrimPrefix(where, "line ")); err == nil {
			line, problem = n, rest
		}
	}
	switch problem {
	case "did not find expected <stream-start>", "did not find expected <document start>",
		"did not find expected node content", "did not find expected '-' indicator", "did not find expected key",
		"did not find expected ',' or ']'", "did not find expected ',' or '}'", "found undefined tag handle",
		"found duplicate %YAML directive", "found duplicate %TAG directive", "found incompatible YAML document":
		line++
	}
	if line == 0 {
		return fmt.Errorf("YAML syntax error: %s", problem)
	}
	return fmt.Errorf("line %d: YAML syntax error: %s", line, problem)
}
