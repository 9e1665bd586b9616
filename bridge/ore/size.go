package ore

import (
	"math"
	"strconv"
	"strings"
)

// parseSize reads a file size written as a number and a unit ("3MB", "1.2 MB",
// "345 KB", "18432 B", "1,024 bytes", "852.95 KB") and returns it in bytes,
// rounded. Multiples are binary (1 KB = 1024 B), as WEKO writes them: its
// samples give "18 KB" beside "18432 B" and "19 MB" beside "19456 KB". It returns
// false for anything else: a bare number, "24 pages", a negative or absurd value.
func parseSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == ',') {
		i++
	}
	num := strings.ReplaceAll(s[:i], ",", "")
	if num == "" || num[0] == '.' {
		return 0, false
	}
	var mult float64
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "b", "byte", "bytes", "octets":
		mult = 1
	case "k", "kb", "kib", "kbyte", "kbytes":
		mult = 1 << 10
	case "m", "mb", "mib", "mbyte", "mbytes":
		mult = 1 << 20
	case "g", "gb", "gib", "gbyte", "gbytes":
		mult = 1 << 30
	case "t", "tb", "tib", "tbyte", "tbytes":
		mult = 1 << 40
	default:
		return 0, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	n := math.Round(v * mult)
	if math.IsNaN(n) || n < 0 || n > 1<<62 {
		return 0, false
	}
	return int64(n), true
}
