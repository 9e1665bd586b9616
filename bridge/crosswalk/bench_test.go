package crosswalk

import "testing"

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
