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

// shared is the one package every other may import: XML character rules.
const shared = "rsync/xmltext"

// bridgeRules lists, for each package below bridge, the internal packages
// it may import directly (shared aside). The HTTP face, bridge itself, may
// import them all; nothing but cmd imports bridge.
var bridgeRules = map[string][]string{
	"bridge/source":  {"bridge/ore", "config", "store", "rsync"},
	"bridge/harvest": {"bridge/source", "bridge/ore", "bridge/crosswalk", "config", "store", "rsync", "oaipmh"},
	"bridge/dumps":   {"bridge/source", "config", "store", "rsync"},
	"bridge/notify":  {"bridge/source", "bridge/websub", "config", "store"},
	"bridge/mirror":  {"store", "rsync"},
	"bridge/export":  {"bridge/source", "bridge/export/objstore", "bridge/ore", "config", "store", "rsync"},
	"bridge/ore":     {},
	// The junii2 → JPCOAR 2.0 crosswalk: bytes in, bytes out.
	"bridge/crosswalk": {},
	"bridge/websub":    {"store"},
}

// noHTTP are the packages that model or produce without serving: they
// must not import net/http.
var noHTTP = []string{"bridge/source", "bridge/harvest", "bridge/dumps", "bridge/export", "rsync", "store", "config"}

// importViolations checks the house rules of architecture.md against a
// package graph: imports (direct) and deps (transitive) by import path,
// relative to the module ("bridge", "store", …).
func importViolations(imports, deps map[string][]string) []string {
	var out []string
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		out = append(out, leafViolations(pkg, deps[pkg])...)
		out = append(out, bridgeViolations(pkg, imports[pkg])...)
		for _, imp := range imports[pkg] {
			switch {
			case strings.HasPrefix(imp, "github.com/dgraph-io/badger") && pkg != "store":
				out = append(out, fmt.Sprintf("%s imports %s: only store uses Badger", pkg, imp))
			case imp == "github.com/gorilla/mux" && pkg != "bridge":
				out = append(out, fmt.Sprintf("%s imports %s: only bridge routes HTTP with mux", pkg, imp))
			case imp == "os/signal" && pkg != "cmd/rsbridge" && pkg != "bench": // the commands
				out = append(out, fmt.Sprintf("%s imports %s: only cmd handles signals", pkg, imp))
			case imp == module+"/cmd/rsbridge":
				out = append(out, fmt.Sprintf("%s imports the command", pkg))
			case imp == module+"/bridge" && pkg != "cmd/rsbridge":
				out = append(out, fmt.Sprintf("%s imports bridge: only cmd wires the HTTP face", pkg))
			case imp == "net/http" && slices.Contains(noHTTP, pkg):
				out = append(out, fmt.Sprintf("%s imports net/http: it models or produces and leaves serving to bridge", pkg))
			}
		}
	}
	return out
}

func within(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

func internal(dep string) (string, bool) {
	rel, ok := strings.CutPrefix(dep, module+"/")
	return rel, ok
}

// leafViolations: the packages below bridge (oaipmh, rsync, store, config)
// may use their own subpackages, shared, the standard library and
// third-party code, never another leaf or bridge.
func leafViolations(pkg string, deps []string) []string {
	var out []string
	for _, leaf := range []string{"oaipmh", "rsync", "store", "config"} {
		if !within(pkg, leaf) {
			continue
		}
		for _, d := range deps {
			if rel, ok := internal(d); ok && !within(rel, leaf) && rel != shared {
				out = append(out, fmt.Sprintf("%s depends on %s: leaves never import another leaf or bridge", pkg, rel))
			}
		}
	}
	return out
}

// bridgeViolations checks a package below bridge against bridgeRules; a
// new package there must be given its rule.
func bridgeViolations(pkg string, imports []string) []string {
	if !strings.HasPrefix(pkg, "bridge/") {
		return nil
	}
	top := strings.Join(strings.SplitN(pkg, "/", 3)[:2], "/")
	allowed, ok := bridgeRules[top]
	if !ok {
		return []string{fmt.Sprintf("%s has no import rule: add it to bridgeRules", pkg)}
	}
	var out []string
	for _, imp := range imports {
		rel, ok := internal(imp)
		if !ok || rel == shared || within(rel, top) {
			continue
		}
		if !slices.ContainsFunc(allowed, func(a string) bool { return within(rel, a) }) {
			out = append(out, fmt.Sprintf("%s imports %s: %s may import only %v", pkg, rel, top, allowed))
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
	for _, want := range []string{"bridge", "bridge/source", "bridge/harvest", "bridge/dumps", "bridge/notify", "store", "oaipmh", "rsync", "config", "cmd/rsbridge"} {
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
		{"the source model imports the harvest", map[string][]string{"bridge/source": {m("bridge/harvest")}}, nil,
			"bridge/source imports bridge/harvest: bridge/source may import only [bridge/ore config store rsync]"},
		{"dumps reach into notification", map[string][]string{"bridge/dumps/zip": {m("bridge/notify")}}, nil,
			"bridge/dumps/zip imports bridge/notify: bridge/dumps may import only [bridge/source config store rsync]"},
		{"a package below bridge imports the HTTP face", map[string][]string{"bridge/notify": {m("bridge")}}, nil,
			"bridge/notify imports bridge: bridge/notify may import only [bridge/source bridge/websub config store]"},
		{"a new package below bridge without a rule", map[string][]string{"bridge/quality": {m("store")}}, nil,
			"bridge/quality has no import rule: add it to bridgeRules"},
		{"the source model serves HTTP", map[string][]string{"bridge/source": {"net/http"}}, nil,
			"bridge/source imports net/http: it models or produces and leaves serving to bridge"},
		{"a leaf imports the shared package's sibling", map[string][]string{"oaipmh": {m("rsync")}}, map[string][]string{"oaipmh": {m("rsync/xmltext"), m("rsync")}},
			"oaipmh depends on rsync: leaves never import another leaf or bridge"},
	}
	for _, c := range cases {
		got := importViolations(c.imports, c.deps)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	ok := map[string][]string{"store": {"github.com/dgraph-io/badger/v4", m("store/sub")}, "bridge": {"github.com/gorilla/mux", m("store")},
		"oaipmh": {m("rsync/xmltext")}, "bridge/harvest": {m("bridge/source"), m("oaipmh"), m("rsync/xmltext")}, "cmd/rsbridge": {m("bridge")}}
	if got := importViolations(ok, ok); len(got) != 0 {
		t.Errorf("a conforming graph: %q", got)
	}
}
