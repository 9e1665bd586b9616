package xmltext

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		in         string
		text, attr string
	}{
		{"plain", "plain", "plain"},
		{`a&b<c>d'e"f`, `a&amp;b&lt;c&gt;d&apos;e"f`, `a&amp;b&lt;c&gt;d&apos;e&quot;f`},
		{"t\tn\nr\r", "t\tn\nr&#xD;", "t&#x9;n&#xA;r&#xD;"},
		{"nul\x00bell\x07", "nul\uFFFDbell\uFFFD", "nul\uFFFDbell\uFFFD"},
		{"bad\xffutf8\xc3", "bad\uFFFDutf8\uFFFD", "bad\uFFFDutf8\uFFFD"},
		{"non\uFFFEchar\uFFFF", "non\uFFFDchar\uFFFD", "non\uFFFDchar\uFFFD"},
		{"日本語 ✓ 𝄞", "日本語 ✓ 𝄞", "日本語 ✓ 𝄞"},
	} {
		for _, attr := range []bool{false, true} {
			want := tc.text
			if attr {
				want = tc.attr
			}
			var b strings.Builder
			if err := Escape(&b, tc.in, attr); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Errorf("Escape(%q, attr=%v) = %q, want %q", tc.in, attr, b.String(), want)
			}
			if got := string(Append([]byte("x"), tc.in, attr)); got != "x"+want {
				t.Errorf("Append(%q, attr=%v) = %q, want %q", tc.in, attr, got, "x"+want)
			}
			if got := EscapedLen(tc.in, attr); got != len(want) {
				t.Errorf("EscapedLen(%q, attr=%v) = %d, want %d", tc.in, attr, got, len(want))
			}
		}
	}
}

func TestClasses(t *testing.T) {
	for _, tc := range []struct {
		r                  rune
		char, start, named bool
	}{
		{'a', true, true, true}, {':', true, true, true}, {'_', true, true, true},
		{'1', true, false, true}, {'-', true, false, true}, {'.', true, false, true},
		{0xB7, true, false, true}, {0xD7, true, false, false}, {0xC0, true, true, true},
		{'\t', true, false, false}, {0x01, false, false, false}, {0xFFFE, false, false, false},
		{0x3042, true, true, true}, {0x10000, true, true, true}, {0xF0000, true, false, false},
	} {
		if IsChar(tc.r) != tc.char || IsNameStart(tc.r) != tc.start || IsNameChar(tc.r) != tc.named {
			t.Errorf("%U: IsChar %v IsNameStart %v IsNameChar %v, want %v %v %v", tc.r,
				IsChar(tc.r), IsNameStart(tc.r), IsNameChar(tc.r), tc.char, tc.start, tc.named)
		}
	}
	if !AllSpace([]byte(" \t\r\n")) || AllSpace([]byte(" x ")) || !AllSpace(nil) {
		t.Error("AllSpace")
	}
	if QName("", "a") != "a" || QName("p", "a") != "p:a" {
		t.Error("QName")
	}
}

// FuzzEscape checks that whatever the input, the escaped text and attribute
// parse back (with encoding/xml) to the input with its unrepresentable
// characters replaced.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a&b", "\r\n\t\"'<>", "\x00\xff", "\uFFFE𝄞"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !IsChar(r) {
				r = utf8.RuneError // each bad byte on its own
			}
			want.WriteRune(r)
			i += n
		}
		doc := `<a v="` + string(Append(nil, s, true)) + `">` + string(Append(nil, s, false)) + `</a>`
		var v struct {
			V    string `xml:"v,attr"`
			Text string `xml:",chardata"`
		}
		if err := xml.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if v.V != want.String() || v.Text != want.String() {
			t.Fatalf("%q: attr %q text %q, want %q", s, v.V, v.Text, want.String())
		}
	})
}

func TestReferences(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    rune
		ok   bool
	}{{"lt", '<', true}, {"gt", '>', true}, {"amp", '&', true}, {"apos", '\'', true}, {"quot", '"', true}, {"nbsp", 0, false}, {"", 0, false}, {"LT", 0, false}} {
		if r, ok := Entity(tc.name); r != tc.r || ok != tc.ok {
			t.Errorf("Entity(%q) = %q, %v", tc.name, r, ok)
		}
		if r, ok := Entity([]byte(tc.name)); r != tc.r || ok != tc.ok {
			t.Errorf("Entity([]byte %q) = %q, %v", tc.name, r, ok)
		}
	}
	for _, tc := range []struct {
		s        string
		hex      bool
		end      int
		v        int64
		wantRune rune
	}{
		{"65;", false, 2, 65, 'A'},
		{"3042;", false, 4, 3042, rune(3042)},
		{"3042;", true, 4, 0x3042, 'あ'},
		{"fF;", true, 2, 255, 'ÿ'},
		{"fF;", false, 0, 0, 0},
		{"D800;", true, 4, 0xD800, utf8.RuneError},
		{"99999999999999999999;", false, 20, utf8.MaxRune + 1, -1},
		{"110000", true, 6, utf8.MaxRune + 1, -1},
		{"", false, 0, 0, 0},
	} {
		end, v := CharRefDigits(tc.s, 0, tc.hex)
		if end != tc.end || v != tc.v {
			t.Errorf("CharRefDigits(%q, hex %v) = %d, %d; want %d, %d", tc.s, tc.hex, end, v, tc.end, tc.v)
		}
		if e2, v2 := CharRefDigits([]byte(tc.s), 0, tc.hex); e2 != end || v2 != v {
			t.Errorf("CharRefDigits([]byte %q) differs", tc.s)
		}
		if tc.wantRune >= 0 && v <= utf8.MaxRune && CharRefRune(v) != tc.wantRune {
			t.Errorf("CharRefRune(%d) = %q, want %q", v, CharRefRune(v), tc.wantRune)
		}
	}
}

// TestClass: the byte classes agree with the predicates and the escaping
// rules above them.
func TestClass(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		cl := Class(b)
		name := b >= utf8.RuneSelf || b == '.' || b == '-' || '0' <= b && b <= '9' || IsNameStart(rune(b))
		if got := cl&ClassName != 0; got != name {
			t.Errorf("%#x: name %v", b, got)
		}
		if got, want := cl&ClassNameStart != 0, b < utf8.RuneSelf && IsNameStart(rune(b)); got != want {
			t.Errorf("%#x: name start %v", b, got)
		}
		if got := cl&ClassSpace != 0; got != IsSpace(b) {
			t.Errorf("%#x: space %v", b, got)
		}
		if got := cl&ClassHigh != 0; got != (b >= utf8.RuneSelf) {
			t.Errorf("%#x: high %v", b, got)
		}
		special := b < 0x20 && b != '\t' && b != '\n' || b == '<' || b == '&'
		if got := cl&ClassText != 0; got != (special || b == '>') {
			t.Errorf("%#x: text %v", b, got)
		}
		if got := cl&ClassAttr != 0; got != (special || b == '"' || b == '\'') {
			t.Errorf("%#x: attr %v", b, got)
		}
	}
}
