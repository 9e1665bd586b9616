package crosswalk

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// BenchmarkJunii2ToJPCOAR2 reports the conversion cost per record, averaged
// over all fixture records (one op = one record).
func BenchmarkJunii2ToJPCOAR2(b *testing.B) {
	fx := loadFixtures(b)
	size := 0
	for _, f := range fx {
		size += len(f.data)
	}
	b.SetBytes(int64(size / len(fx)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Junii2ToJPCOAR2(fx[i%len(fx)].data); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCheckJunii2 reports the junii2 check cost per record, averaged
// over all fixture records (one op = one record).
func BenchmarkCheckJunii2(b *testing.B) {
	fx := loadFixtures(b)
	docs := make([][]byte, len(fx))
	for i, f := range fx {
		docs[i] = f.data
	}
	benchRecords(b, docs, CheckJunii2)
}

// BenchmarkCheckJPCOAR reports the JPCOAR check cost per record, averaged
// over the JPCOAR samples and the derived golden records, which stand for
// the jpcoar_2.0 records a harvest checks (one op = one record).
func BenchmarkCheckJPCOAR(b *testing.B) {
	benchRecords(b, jpcoarRecords(b), CheckJPCOAR)
}

// BenchmarkParseTree isolates the parser under CheckJPCOAR.
func BenchmarkParseTree(b *testing.B) {
	benchRecords(b, jpcoarRecords(b), func(doc []byte) []Issue {
		if _, err := parseTree(doc); err != nil {
			b.Fatal(err)
		}
		return nil
	})
}

func benchRecords(b *testing.B, docs [][]byte, f func([]byte) []Issue) {
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.SetBytes(int64(size / len(docs)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f(docs[i%len(docs)])
		i++
	}
}

// jpcoarRecords reads testdata/jpcoar and testdata/golden's records.
func jpcoarRecords(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, pattern := range []string{"testdata/jpcoar/*.xml", "testdata/golden/*.xml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no JPCOAR records in testdata")
	}
	out := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}
