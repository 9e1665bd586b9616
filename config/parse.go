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

// Load reads the config file at path and runs ParseAndValidate on it. The
// Problems it returns have File set, so every line of the message starts
// with path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c, err := ParseAndValidate(bytes.NewReader(data))
	if ps, ok := errors.AsType[Problems](err); ok {
		for i := range ps {
			ps[i].File = path
		}
		return nil, ps
	}
	return c, err
}

// Parse decodes one YAML document strictly: unknown keys, duplicate keys,
// values of the wrong type (yaml.v3 alone would truncate 1.5 to 1 for an
// integer and accept 1e9) and bare numbers for durations are errors, all
// reported at once as Problems with their line numbers and key names. Absent
// keys get their built-in defaults, except the Harvest pointers, which stay
// nil (see Config.Resolved). Parse does not call Validate.
func Parse(r io.Reader) (*Config, error) {
	c, _, ps, err := read(r)
	if err == nil {
		err = toError(ps)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ParseAndValidate is Parse and Validate in one pass: when Parse finds
// problems, what it can still decode (the defaults where the problems are)
// is validated too. It reports Parse's problems and Validate's together
// (leaving out those about values Parse already reported), in line order:
// a Validate problem gets the line of its key, or of its list element when
// the key is absent, and none when the file does not mention it.
func ParseAndValidate(r io.Reader) (*Config, error) {
	c, root, ps, err := read(r)
	if err != nil {
		return nil, err
	}
	if c != nil {
		ps = locate(root, ps, c.validate())
	}
	if len(ps) > 0 {
		return nil, toError(ps)
	}
	return c, nil
}

// read parses one document. It returns the checker's problems and a Config
// decoded despite them (nil when it cannot be): strictly when there are
// none, else leniently from the tree the checker pruned.
func read(r io.Reader) (*Config, *yaml.Node, []problem, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading config: %w", err)
	}
	root, p := parseDocument(data)
	if p != nil {
		return nil, nil, []problem{{Problem: *p}}, nil
	}
	ps := check(root)
	c := Default()
	if len(ps) == 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		err = dec.Decode(c)
	} else {
		err = root.Decode(c)
	}
	dps, fatal := decodeProblems(err)
	if ps = append(ps, dps...); fatal {
		return nil, nil, ps, nil
	}
	c.SetDefaults()
	return c, root, ps, nil
}

// parseDocument reads the single YAML document into a node tree and checks
// its shape: present, alone, a mapping.
func parseDocument(data []byte) (*yaml.Node, *Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Problem{Message: "config is empty"}
		}
		return nil, syntaxError(err, data)
	}
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(err, data)
	default:
		return nil, &Problem{Line: extra.Line, Message: `multiple YAML documents are not supported (remove the "---" separator)`}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, &Problem{Message: "config is empty"}
	}
	if root := doc.Content[0]; root.Kind != yaml.MappingNode {
		return nil, &Problem{Line: root.Line, Message: "config must be a mapping of keys to values, got " + describe(root)}
	}
	return doc.Content[0], nil
}

// syntaxError words a yaml.v3 syntax error as "line N: YAML syntax error: …".
// yaml.v3 has no structured syntax error, so the line is read from its
// message, and yaml.v3 counts lines from 0 for its parser's problems (not its
// scanner's): those are the fixed messages listed here (parserc.go), and
// TestBadConfigs pins the common ones.
func syntaxError(err error, data []byte) *Problem {
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
	line = min(line, lastLine(data)) // the end of a file without a final newline
	return &Problem{Line: line, Message: "YAML syntax error: " + problem}
}
