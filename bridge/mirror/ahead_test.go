package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMirrorMendsFilesAheadOfState: a process dies between renaming files
// into place (or removing them) and committing the batch that records
// them. The next run mends what redoing the batch cannot: the file of a
// record added, then deleted, which the state never knew; and the file of a
// record removed for its deletion, then restored with the same bytes, which
// the state still says the copy holds.
func TestMirrorMendsFilesAheadOfState(t *testing.T) {
	s := newRsbridge(t, 40)
	dir, state := t.TempDir(), t.TempDir()
	logPath := filepath.Join(t.TempDir(), "changes.jsonl")
	ctx := context.Background()
	open := func() *Mirror {
		m, err := New(state, Options{Dir: dir, Log: logPath, Delete: true, Now: s.clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	mustRun(t, m, s)
	m.Close()

	// At the source: x is added; y is deleted.
	at := s.clk.Add(time.Minute)
	x := s.up.Add(at)
	const y = 3
	s.up.Delete(y, at)
	s.clk.Add(time.Minute)
	s.harvest()
	xURI, yURI := s.resourceURL(s.up.Identifier(x)), s.resourceURL(s.up.Identifier(y))
	xRel, _ := Path(xURI)
	yRel, _ := Path(yURI)

	// A run applies those changes as far as the disk, and dies: x's file in
	// place, y's removed, neither batch committed.
	m = open()
	resp, err := http.Get(xURI)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	f, err := m.sink.create(xURI, xRel, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(body)
	if err := f.commit(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := m.sink.removeFor(yURI, yRel); err != nil {
		t.Fatal(err)
	}
	m.sink.close() // the state is left as it was: nothing committed
	m.state.Close()

	// Meanwhile x is deleted, and y comes back as it was.
	at = s.clk.Add(time.Minute)
	s.up.Delete(x, at)
	s.up.Restore(y, at)
	s.clk.Add(time.Minute)
	s.harvest()

	m = open()
	t.Cleanup(func() { m.Close() }) // the m of the test's end
	if left := m.sink.ahead.left(); len(left) != 2 {
		t.Fatalf("the journal names %v; want x's and y's paths", left)
	}
	if err := m.Run(ctx, s.srv.URL); err != nil {
		t.Fatal(err)
	}
	s.checkCopy(dir)
	if _, err := os.Stat(filepath.Join(dir, xRel)); err == nil {
		t.Errorf("x's file, which no state held, is still there")
	}
	if _, err := os.Stat(filepath.Join(dir, yRel)); err != nil {
		t.Errorf("y's file is not back: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(state, aheadName)); err != nil || fi.Size() != 0 {
		t.Errorf("after a whole run the journal is %v (%v); want it empty", fi, err)
	}
	// The change log says y went (mended) and came back, and nothing of x,
	// which the copy never committed; the lines survive another opening.
	m.Close()
	m = open()
	logged, _ := os.ReadFile(logPath)
	var ys []string
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("change log line %q: %v", line, err)
		}
		switch l.URI {
		case xURI:
			t.Errorf("the change log names x, which the copy never committed: %s", line)
		case yURI:
			ys = append(ys, l.Change+" "+l.From)
		}
	}
	if !slices.Equal(ys, []string{"created list", "deleted mended", "created change"}) {
		t.Errorf("the change log's lines of y: %q; want its baseline, the mended deletion, its return", ys)
	}
}

// TestAheadJournal: the journal keeps what no committed batch recorded,
// across a rewrite and a reopening.
func TestAheadJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), aheadName)
	a, err := openAhead(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"h/a", "h/b", "h/c"} {
		if err := a.touch("http://"+p, p); err != nil {
			t.Fatal(err)
		}
	}
	a.inBatch("h/a")
	a.inBatch("h/b")
	a.inBatch("h/zz") // not touched: no effect
	if err := a.committed(); err != nil {
		t.Fatal(err)
	}
	if err := a.touch("http://h/d", "h/d"); err != nil {
		t.Fatal(err)
	}
	a.close() // dies here

	b, err := openAhead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	got := map[string]string{}
	for _, e := range b.left() {
		got[e.Path] = e.URI
	}
	if len(got) != 2 || got["h/c"] != "http://h/c" || got["h/d"] != "http://h/d" {
		t.Errorf("after reopening the journal names %v; want h/c and h/d", got)
	}
	// A batch that commits before recovery keeps them.
	if err := b.committed(); err != nil {
		t.Fatal(err)
	}
	if err := b.recovered(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("recovered: journal %v (%v), want empty", fi, err)
	}
	// A torn last line (the kill came mid-write, before its rename) is
	// ignored.
	os.WriteFile(path, []byte(`{"uri":"http://h/e","path":"h/e"}`+"\n"+`{"uri":"http://h/f","pa`), 0o644)
	c, err := openAhead(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if left := c.left(); len(left) != 1 || left[0].Path != "h/e" {
		t.Errorf("with a torn line: %v, want h/e alone", left)
	}
}

// TestMirrorMendsAcrossSetsLeftOut: a path the journal names that a set
// left out of the run (-sets) holds is that set's file, and stays.
func TestMirrorMendsAcrossSetsLeftOut(t *testing.T) {
	s := newRsbridgeSets(t, 30, 3)
	dir, state := t.TempDir(), t.TempDir()
	ctx := context.Background()
	m, err := New(state, Options{Dir: dir, Delete: true, Now: s.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, m, s)
	uri := s.resourceURL(s.up.Identifier(0))
	rel, _ := Path(uri)
	// The sets that do not hold it; the run below takes one of them alone.
	sets, err := m.state.Sets(ctx)
	if err != nil || len(sets) < 3 {
		t.Fatalf("the state knows sets %v (%v); want the all-records set and the OAI sets", sets, err)
	}
	other := ""
	for _, set := range sets {
		if cur, _ := m.state.Resource(set, uri); cur == nil {
			other = set
		}
	}
	if other == "" {
		t.Fatalf("every set holds %s", uri)
	}
	// A run died after noting the path (say, about to rewrite it).
	if err := m.sink.ahead.touch(uri, rel); err != nil {
		t.Fatal(err)
	}
	m.sink.close()
	m.state.Close()

	u, _ := neturl.Parse(other)
	m, err = New(state, Options{Dir: dir, Delete: true, Now: s.clk.Now, Sets: []string{u.Path}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mustRun(t, m, s)
	if c := m.Counts(); c.Sets != 1 {
		t.Fatalf("the run took %d sets, want the one -sets names", c.Sets)
	}
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Errorf("the file of %s, which sets left out of the run hold, went: %v", uri, err)
	}
	s.checkCopy(dir)
}

// TestMirrorSetsFilterKeepsSharedFiles: a run that -sets limits to one
// OAI set applies a deletion to that set, but the file stays while the
// all-records set, left out, still holds it; a run over every set then
// removes it.
func TestMirrorSetsFilterKeepsSharedFiles(t *testing.T) {
	s := newRsbridgeSets(t, 30, 3)
	dir, state := t.TempDir(), t.TempDir()
	ctx := context.Background()
	open := func(sets ...string) *Mirror {
		m, err := New(state, Options{Dir: dir, Delete: true, Now: s.clk.Now, Sets: sets})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	mustRun(t, m, s)
	const x = 0
	uri := s.resourceURL(s.up.Identifier(x))
	rel, _ := Path(uri)
	all := s.src.All(s.cfg.Repositories[0], "oai_dc").CapabilityList()
	oaiSet := ""
	sets, err := m.state.Sets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		if cur, _ := m.state.Resource(set, uri); set != all && cur != nil {
			oaiSet = set
		}
	}
	m.Close()
	if oaiSet == "" {
		t.Fatalf("no OAI set holds %s", uri)
	}
	at := s.clk.Add(time.Minute)
	s.up.Delete(x, at)
	s.clk.Add(time.Minute)
	s.harvest()

	u, _ := neturl.Parse(oaiSet)
	m = open(u.Path)
	mustRun(t, m, s)
	if c := m.Counts(); c.Sets != 1 || c.Deleted != 1 {
		t.Errorf("the run over %s: %+v; want one set, one deletion", u.Path, c)
	}
	m.Close()
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Errorf("the file the all-records set still holds went with the OAI set's deletion: %v", err)
	}
	m = open()
	defer m.Close()
	mustRun(t, m, s)
	s.checkCopy(dir)
}

// TestAuditFindsStrayFiles: files in the copy that no set's state holds
// (what a power loss can leave that the journal cannot mend) are reported
// by an audit, and go with -repair and -delete; names starting with "."
// and a state directory and change log kept inside the copy are not
// touched. With pages of 3, the walk's checks and the removals span
// several pages.
func TestAuditFindsStrayFiles(t *testing.T) {
	for _, page := range []int{defaultAuditPage, 3} {
		t.Run(fmt.Sprintf("page=%d", page), func(t *testing.T) {
			s := newRsbridge(t, 20)
			dir := t.TempDir()
			state := filepath.Join(dir, "state") // inside the copy, to be left alone
			logPath := filepath.Join(dir, "changes.jsonl")
			m, err := New(state, Options{Dir: dir, Log: logPath, Delete: true, Now: s.clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.auditPage = page
			mustRun(t, m, s)
			ctx := context.Background()
			var strays, rels []string
			for i := range 5 {
				rel, _ := Path(s.resourceURL(fmt.Sprintf("oai:demo.rsbridge.example:never-listed-%d", i)))
				rels = append(rels, rel)
			}
			rels = append(rels, filepath.Join("by-hand", "a.xml"), filepath.Join("by-hand", "deeper", "b.xml"))
			for _, rel := range rels {
				strays = append(strays, filepath.Join(dir, rel))
			}
			dot := filepath.Join(dir, ".keep", "notes.txt")
			for _, p := range append([]string{dot}, strays...) {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("<x/>"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := m.Audit(ctx, s.srv.URL, false)
			if err != nil || rep.Stray != 7 || rep.Good != 20 || rep.Extra != 0 || !slices.Contains(rep.Examples, "stray "+rels[6]) {
				t.Fatalf("audit: %+v %v; want the 7 stray files reported, the rest good", rep, err)
			}
			rep, err = m.Audit(ctx, s.srv.URL, true)
			if err != nil || rep.Repaired != 7 {
				t.Fatalf("repair: %+v %v; want the 7 stray files removed", rep, err)
			}
			for _, p := range strays {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the stray file %s is still there: %v", p, err)
				}
			}
			for _, p := range []string{dot, logPath, filepath.Join(state, aheadName)} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: %v; the audit must leave it", p, err)
				}
			}
			if rep, err := m.Audit(ctx, s.srv.URL, false); err != nil || rep.Stray != 0 || rep.Good != 20 {
				t.Errorf("audit after the repair: %+v %v", rep, err)
			}
		})
	}
}
