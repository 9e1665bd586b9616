package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rsbridge/rsbridge"

// importViolations checks the house rules of architecture.md against a
// package graph: imports (direct) and deps (transitive) by import path,
// relative to the module ("bridge", "store", …).
func importViolations(imports, deps map[string][]string) []string {
	// The packages below bridge: each may use its own subpackages, the
	// standard library and third-party code, never another leaf or bridge.
	leaves := []string{"oaipmh", "rsync", "store", "config"}
	var out []string
	within := func(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }
	internal := func(dep string) (string, bool) {
		rel, ok := strings.CutPrefix(dep, module+"/")
		return rel, ok
	}
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		for _, leaf := range leaves {
			if !within(pkg, leaf) {
				continue
			}
			for _, d := range deps[pkg] {
				if rel, ok := internal(d); ok && !within(rel, leaf) {
					out = append(out, fmt.Sprintf("%s depends on %s: leaves never import another leaf or bridge", pkg, rel))
				}
			}
		}
		for _, imp := range imports[pkg] {
			switch {
			case strings.HasPrefix(imp, "github.com/dgraph-io/badger") && pkg != "store":
				out = append(out, fmt.Sprintf("%s imports %s: only store uses Badger", pkg, imp))
			case imp == "github.com/gorilla/mux" && pkg != "bridge":
				out = append(out, fmt.Sprintf("%s imports %s: only bridge routes HTTP with mux", pkg, imp))
			case imp == "os/signal" && pkg != "cmd/rsbridge":
				out = append(out, fmt.Sprintf("%s imports %s: only cmd handles signals", pkg, imp))
			case imp == module+"/cmd/rsbridge":
				out = append(out, fmt.Sprintf("%s imports the command", pkg))
			}
		}
	}
	return out
}

// TestImportRules enforces the package design on the real tree with go list.
func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .Deps \",\"}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports, deps := map[string][]string{}, map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "|")
		if len(parts) != 3 {
			t.Fatalf("go list line %q", sc.Text())
		}
		pkg := strings.TrimPrefix(parts[0], module+"/")
		imports[pkg] = strings.Split(parts[1], ",")
		deps[pkg] = strings.Split(parts[2], ",")
	}
	for _, want := range []string{"bridge", "store", "oaipmh", "rsync", "config", "cmd/rsbridge"} {
		if _, ok := imports[want]; !ok {
			t.Fatalf("go list did not report %s; got %v", want, slices.Sorted(maps.Keys(imports)))
		}
	}
	for _, v := range importViolations(imports, deps) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations shows each rule fails on a graph that breaks it.
func TestImportRulesCatchViolations(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	cases := []struct {
		name          string
		imports, deps map[string][]string
		want          string
	}{
		{"leaf imports leaf", map[string][]string{"rsync": {m("store")}}, map[string][]string{"rsync": {m("store")}},
			"rsync depends on store: leaves never import another leaf or bridge"},
		{"leaf reaches bridge through a subpackage", map[string][]string{"oaipmh/oaiserver": {m("bridge/ore")}},
			map[string][]string{"oaipmh/oaiserver": {m("bridge/ore"), m("bridge")}},
			"oaipmh/oaiserver depends on bridge/ore: leaves never import another leaf or bridge"},
		{"badger outside store", map[string][]string{"bridge": {"github.com/dgraph-io/badger/v4"}}, nil,
			"bridge imports github.com/dgraph-io/badger/v4: only store uses Badger"},
		{"mux outside bridge", map[string][]string{"cmd/rsbridge": {"github.com/gorilla/mux"}}, nil,
			"cmd/rsbridge imports github.com/gorilla/mux: only bridge routes HTTP with mux"},
		{"signals outside cmd", map[string][]string{"bridge": {"os/signal"}}, nil,
			"bridge imports os/signal: only cmd handles signals"},
	}
	for _, c := range cases {
		got := importViolations(c.imports, c.deps)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	ok := map[string][]string{"store": {"github.com/dgraph-io/badger/v4", m("store/sub")}, "bridge": {"github.com/gorilla/mux", m("store")}}
	if got := importViolations(ok, ok); len(got) != 0 {
		t.Errorf("a conforming graph: %q", got)
	}
}
