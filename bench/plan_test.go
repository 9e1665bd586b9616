package main

import (
	"strings"
	"testing"
)

// TestPlan: the repositories the benchmark draws have the sizes, sets and
// hosts the issue asks for, and the same seed draws the same plan.
func TestPlan(t *testing.T) {
	draw := func() *bench {
		b := &bench{o: options{repos: 700, records: 3000000, bigRecords: 50000, setRepos: 3, seed: 1}}
		b.plan()
		return b
	}
	b := draw()
	if len(b.repos) != 700 {
		t.Fatalf("%d repositories", len(b.repos))
	}
	total, manySets, shared := 0, 0, 0
	names := map[string]bool{}
	for _, r := range b.repos {
		names[r.name] = true
		if r.name != "big" && !r.dead && (r.records < 100 || r.records > 20000) {
			t.Errorf("%s: %d records, want 100..20,000", r.name, r.records)
		}
		if !r.dead {
			total += r.records
		}
		if r.sets == 2000 {
			manySets++
		}
		if r.host == "127.0.0.2" {
			shared++
		}
		if !strings.HasPrefix(r.host, "127.") {
			t.Errorf("%s on %s: not loopback", r.name, r.host)
		}
	}
	if len(names) != 700 || !names["slow"] || !names["dead"] || !names["big"] {
		t.Errorf("names: %d distinct, slow/dead/big %v %v %v", len(names), names["slow"], names["dead"], names["big"])
	}
	if total < 2950000 || total > 3050000 {
		t.Errorf("%d records in all, want about 3,000,000", total)
	}
	if manySets != 3 || shared < 90 || shared > 110 {
		t.Errorf("%d repositories with 2,000 sets (want 3), %d behind one host (want about 100)", manySets, shared)
	}
	if again := draw(); again.repos[10] != b.repos[10] || again.total() != b.total() {
		t.Error("the same seed drew another plan")
	}
}
