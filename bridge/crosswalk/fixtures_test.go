package crosswalk

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Test map (T-J2J items of shared/spec/junii2-jpcoar.md §I):
//
//	T-J2J-01..04  TestTJ2J01..TestTJ2J04           (tj2j_test.go)
//	T-J2J-05      TestTJ2J05AllHokudaiDerive        (tj2j_test.go)
//	T-J2J-06..08  TestTJ2J06..TestTJ2J08            (tj2j_test.go)
//	T-J2J-09, 10  TestTJ2J09Thesis, TestTJ2J10Bulletin (tj2j_test.go, against the JPCOAR samples)
//	T-J2J-11      TestTJ2J11Negative                (tj2j_test.go)
//	T-J2J-12      TestNorm* and TestTJ2J12*         (normalise_test.go)
//	T-J2J-13      TestGolden (determinism + golden bytes) and TestXSD (xmllint) (this file)
//
// Also: TestCheck* (check_test.go) for J2V-04..18, FuzzJunii2 (fuzz_test.go),
// the parser's differential tests against encoding/xml and FuzzParseTree
// (xmlscan_test.go), and the benchmarks (bench_test.go).
//
// For the wiring, not this package: GW-J2J-20's rs:ln profile link and
// PMH-040 provenance (altered, metadataNamespace — this package only returns
// Result.Provenance), GW-J2J-21's re-derivation on a Version/Fingerprint
// change and the deleted event when a derived record becomes quarantined,
// storing warnings and quarantine reasons per record for the operator API,
// and serving the harvested junii2 record alongside (IR-006).

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// fixture is one junii2 record: a ListRecords record selected by OAI
// identifier, or a whole handmade file.
type fixture struct {
	name string // golden file stem
	id   string // OAI identifier, or the file name for handmade files
	data []byte // the standalone junii2 metadata element
}

// loadFixtures reads every testdata/junii2 file, in a fixed order.
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/junii2/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	sort.Strings(files)
	var out []fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".xml")
		if strings.HasPrefix(base, "handmade__") {
			out = append(out, fixture{name: base, id: base, data: b})
			continue
		}
		recs, err := splitListRecords(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		source, _, _ := strings.Cut(base, "__")
		for _, r := range recs {
			_, local, _ := strings.Cut(strings.TrimPrefix(r.id, "oai:"), ":")
			r.name = source + "__" + strings.NewReplacer("/", "-", ":", "-").Replace(local)
			out = append(out, r)
		}
	}
	return out
}

// splitListRecords cuts the metadata child of each record out of an
// OAI-PMH ListRecords response, byte for byte. The fixtures declare their
// namespaces on that element, so the slice is a standalone document.
func splitListRecords(b []byte) ([]fixture, error) {
	const oai = "http://www.openarchives.org/OAI/2.0/"
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []fixture
	var id string
	inID, inMeta := false, false
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case inMeta:
				if err := d.Skip(); err != nil {
					return nil, err
				}
				out = append(out, fixture{id: id, data: bytes.Clone(b[off:d.InputOffset()])})
			case t.Name.Space == oai && t.Name.Local == "identifier":
				inID = true
			case t.Name.Space == oai && t.Name.Local == "metadata":
				inMeta = true
			}
		case xml.EndElement:
			inID = false
			if t.Name.Space == oai && t.Name.Local == "metadata" {
				inMeta = false
			}
		case xml.CharData:
			if inID {
				id = strings.TrimSpace(string(t))
			}
		}
	}
}

// fixtureByID returns the fixture with the given OAI identifier (or handmade name).
func fixtureByID(t testing.TB, id string) fixture {
	t.Helper()
	for _, f := range loadFixtures(t) {
		if f.id == id || f.id == "oai:irdb.nii.ac.jp:"+id || f.id == "oai:ir.u-gakugei.ac.jp:"+id {
			return f
		}
	}
	t.Fatalf("no fixture %s", id)
	return fixture{}
}

// warningsText renders issues one per line for the golden files.
func warningsText(is []Issue) string {
	var b strings.Builder
	for _, i := range is {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", i.Level, i.Reason(), i.Path)
	}
	return b.String()
}

// TestGolden pins the derived bytes and warnings of every fixture
// (T-J2J-13 determinism: two conversions give identical bytes).
func TestGolden(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			r1, err := Junii2ToJPCOAR2(f.data)
			if err != nil {
				t.Fatal(err)
			}
			r2, _ := Junii2ToJPCOAR2(f.data)
			if !bytes.Equal(r1.Record, r2.Record) || warningsText(r1.Warnings) != warningsText(r2.Warnings) {
				t.Fatal("two conversions of the same input differ (GW-J2J-20)")
			}
			if r1.Record == nil {
				t.Fatalf("quarantined: %v", r1.Quarantine)
			}
			golden(t, f.name+".xml", r1.Record)
			golden(t, f.name+".warnings.txt", []byte(warningsText(r1.Warnings)))
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// missingDep skips a check that cannot run for want of a tool or file, but
// fails it when CI=true, so CI cannot pass without the check.
func missingDep(t *testing.T, msg string) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s; CI=true, so this is a failure, not a skip", msg)
	}
	t.Skip(msg)
}

// xsdEntry locates jpcoar_scm.xsd: $JPCOAR2_XSD_DIR, or the shared
// directory next to the checkout.
func xsdEntry(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JPCOAR2_XSD_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus", "xsd", "jpcoar-schema-2.0")
	}
	p, err := filepath.Abs(filepath.Join(dir, "jpcoar_scm.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		missingDep(t, fmt.Sprintf("JPCOAR 2.0 XSD missing (%v): check out shared/ next to this checkout or set JPCOAR2_XSD_DIR", err))
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		missingDep(t, "xmllint is not on PATH: install it (apt-get install libxml2-utils) to validate against the XSD")
	}
	return p
}

// xmllintValidate validates docs against the JPCOAR 2.0 XSD offline: the
// catalog maps the remote xml.xsd imports to testdata/xsd/xml.xsd.
func xmllintValidate(t *testing.T, docs map[string][]byte) {
	t.Helper()
	xsd := xsdEntry(t)
	catalog, err := filepath.Abs(filepath.Join("testdata", "xsd", "catalog.xml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{"--nonet", "--noout", "--schema", xsd}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, docs[n], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.Command("xmllint", args...)
	cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+catalog)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("XSD validation failed: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " validates"); n != len(docs) {
		t.Fatalf("xmllint validated %d of %d documents:\n%s", n, len(docs), out)
	}
}

// TestXSD validates every derived fixture against jpcoar_scm.xsd (T-J2J-13),
// in the default configuration and with every option switched on.
func TestXSD(t *testing.T) {
	docs := map[string][]byte{}
	all := Options{StrictXLSXTitles: true, DescriptionAsAbstract: true, DeriveOpenAccess: true, NoLatinGuess: true}
	for _, f := range loadFixtures(t) {
		for i, o := range []Options{{}, all} {
			r, err := o.Junii2ToJPCOAR2(f.data)
			if err != nil || r.Record == nil {
				t.Fatalf("%s: %v %v", f.name, err, r.Quarantine)
			}
			docs[fmt.Sprintf("%s.%d.xml", f.name, i)] = r.Record
		}
	}
	for name, data := range synthetic() {
		r, err := Junii2ToJPCOAR2(data)
		if err != nil || r.Record == nil {
			t.Fatalf("%s: %v %v", name, err, r.Quarantine)
		}
		docs["synthetic-"+name+".xml"] = r.Record
	}
	xmllintValidate(t, docs)
}
