package config

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(minimal))
	f.Add([]byte("defaults: &d {delay: 0s}\nrepositories:\n  - {<<: *d, name: a, base_url: \"http://a/\", schedule: \"TZ=x\"}\n"))
	f.Add([]byte("listen: [a]\nfoo: 1\nrepositories:\n  - ~\n  - name: B\n    sets: [a, [b], ~]\n  - <<: 3\n    max_retries: 1e9\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		parsed := problemsOf(t, data, err)
		all, allErr := ParseAndValidate(bytes.NewReader(data))
		got := problemsOf(t, data, allErr)
		if (all == nil) == (allErr == nil) {
			t.Fatalf("ParseAndValidate returned config %v and error %v", all != nil, allErr)
		}
		// One pass: everything Parse reports, ParseAndValidate reports too.
		for _, p := range parsed {
			if !slices.Contains(got, p) {
				t.Errorf("ParseAndValidate lost %q; it reported:\n%v", p.Error(), allErr)
			}
		}
		if err != nil {
			return
		}
		// A document Parse accepts: ParseAndValidate reports just what
		// Validate does, with lines.
		validated := problemsOf(t, data, c.Validate())
		unlocated := make([]Problem, len(got))
		for i, p := range got {
			unlocated[i] = Problem{Path: p.Path, Message: p.Message}
		}
		byText := func(a, b Problem) int { return strings.Compare(a.Error(), b.Error()) }
		slices.SortFunc(validated, byText)
		slices.SortFunc(unlocated, byText)
		if !slices.Equal(validated, unlocated) {
			t.Errorf("Validate:\n%v\nParseAndValidate:\n%v", c.Validate(), allErr)
		}
		for _, r := range c.Repositories {
			_ = c.Resolved(r)
			_ = c.HasReconcile(r)
		}
	})
}

// problemsOf checks the invariants of an error from Parse, ParseAndValidate
// or Validate and returns its problems.
func problemsOf(t *testing.T, data []byte, err error) Problems {
	t.Helper()
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "not found in type") || strings.Contains(msg, "cannot unmarshal") {
		t.Errorf("yaml.v3 message leaked: %s", msg)
	}
	ps, ok := errors.AsType[Problems](err)
	if !ok || len(ps) == 0 {
		t.Fatalf("error is not Problems: %#v", err)
	}
	// yaml.v3 breaks lines at \n, \r, \r\n, NEL, LS and PS.
	last := 1 + bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) +
		strings.Count(string(data), "\u0085") + strings.Count(string(data), "\u2028") + strings.Count(string(data), "\u2029")
	for i, p := range ps {
		if p.Line < 0 || p.Line > last {
			t.Errorf("line %d outside the document (%d lines): %s", p.Line, last, p.Error())
		}
		if i > 0 && ps[i-1].Line == 0 && p.Line > 0 || i > 0 && p.Line > 0 && p.Line < ps[i-1].Line {
			t.Errorf("problems not in line order:\n%v", err)
		}
		if p.File != "" || p.Message == "" {
			t.Errorf("bad problem %#v", p)
		}
	}
	return ps
}
