package oaipmh

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The record tokenizer. Each list item the scanner cut out is tokenised here,
// over its bytes in memory, instead of with encoding/xml: encoding/xml reads
// byte by byte through an interface, copies every name and text into a buffer,
// allocates for every token and checks every character against the Char
// production, which made it half of a harvest's CPU time.
//
// xmlTok is a pull tokenizer with encoding/xml's RawToken granularity (start
// tag with attributes, end tag, character data, CDATA section, comment, PI; a
// self-closing tag is a start and an end) and encoding/xml's well-formedness
// checks with Strict set, error for error and with the same messages, so that
// a record is quarantined for the same reason as before:
//
//   - names: encoding/xml's readName (ASCII name bytes, and every byte >= 0x80)
//     followed by its isName (ASCII here; other names are given to encoding/xml);
//     a name with more than one colon is an error;
//   - attributes: name, optional white space, '=', white space, a quoted value;
//     '<' in a value is an error; duplicate attributes are accepted, as
//     encoding/xml (and so the decoder before) accepts them;
//   - character data and attribute values: only the five predefined entities and
//     decimal or hexadecimal (lower-case x) character references; a reference
//     decodes as string(rune(n)) does (a surrogate becomes U+FFFD); "]]>" outside
//     a CDATA section is an error; CR and CR LF become LF; then every character
//     of the decoded text must be valid UTF-8 and in the Char production — that
//     error comes at the end of the token, as in encoding/xml, so an entity error
//     further on wins;
//   - comments end at the first "--", which must be followed by '>'; CDATA
//     sections at "]]>"; PIs at "?>" after a name (target "xml" is checked for
//     version 1.0 and a UTF-8 encoding, as encoding/xml without a CharsetReader
//     does);
//   - the one difference: a declaration (<!DOCTYPE ...>, <!ENTITY ...>, any "<!"
//     that is not a comment or CDATA section) is an error. encoding/xml returns
//     it as a Directive token, which the decoder ignored, so it ended up in the
//     stored metadata, where XML allows no DOCTYPE (only the prolog may have one)
//     and strict parsers reject the document. Its extent is read as encoding/xml
//     reads it, so a declaration cut off by the end of the item is still
//     "unexpected EOF".
//
// What it does not do is what the decoder does on top of RawToken (matching end
// tags, namespaces: item.go).
//
// Cost: the tokenizer walks the bytes once: character data eight bytes at a
// time while none of them can need attention, names and attribute values with
// a table lookup per byte. Names, attribute values and text are sub-slices of
// the input; only text with a reference or a CR is decoded, into a buffer that
// is reused for every token, and an attribute value with one is decoded only
// when it is asked for (namespace declarations, the header's status), into an
// arena reused for every item. A token allocates nothing.
//
// Characters: with check false the tokenizer relies on its input having been
// through repairItem, whose output is valid UTF-8 with no character outside the
// Char production (control characters removed, U+FFFE and U+FFFF replaced), and
// skips decoding every non-ASCII character; references, whose characters repair
// leaves alone when legal, are checked either way. FuzzRecordTokenizer checks
// that both modes agree on repaired bytes and that check mode agrees with
// encoding/xml on any bytes.

type tokKind uint8

const (
	tkNone  tokKind = iota
	tkStart         // start tag: name, attrs
	tkEnd           // end tag: name
	tkText          // character data or a CDATA section: text
	tkOther         // comment or processing instruction
)

// rawAttr is one attribute: its name, and its value as it is between the
// quotes (at raw in the input); plain when that is its value, without
// references or CRs to decode (xmlTok.value decodes the others).
type rawAttr struct {
	name  []byte
	raw   int // index of the value in the input
	val   []byte
	quote byte
	plain bool
}

// tokError is a well-formedness error in a record; Msg is worded as
// encoding/xml words the same error.
type tokError struct{ Msg string }

func (e *tokError) Error() string { return "xml: " + e.Msg }

// Messages of the tokenizer and the item reader.
const (
	msgEOF         = "unexpected EOF"
	msgDeclaration = "a declaration (<!DOCTYPE ...>, <!ENTITY ...>) inside a record"
)

// Byte classes.
const (
	bcName      = 1 << iota // continues a name: encoding/xml's isNameByte, and every byte >= 0x80
	bcNameStart             // starts an ASCII name: letters, '_' and ':'
	bcSpace                 // white space: space, tab, CR, LF
	bcText                  // interrupts character data: < & > CR and control characters
	bcAttr                  // interrupts an attribute value: < & " ' CR and control characters
	bcHigh                  // >= 0x80: a character to decode when characters are checked
)

// byteClass is a constant table of the classes above.
var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', b == '_', b == ':':
			t[c] |= bcName | bcNameStart
		case '0' <= b && b <= '9', b == '.', b == '-':
			t[c] |= bcName
		case b >= 0x80:
			t[c] |= bcName | bcHigh
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			t[c] |= bcSpace
		}
		if b < 0x20 && b != '\t' && b != '\n' {
			t[c] |= bcText | bcAttr // CR, and control characters
		}
		switch b {
		case '<', '&':
			t[c] |= bcText | bcAttr
		case '>':
			t[c] |= bcText
		case '"', '\'':
			t[c] |= bcAttr
		}
	}
	return t
}()

// xmlTok tokenises one item's bytes. Sub-slices it returns are valid until
// reset; text is valid until the next token.
type xmlTok struct {
	b     []byte
	pos   int
	check bool // decode and check non-ASCII characters (the input may be unrepaired)

	// the current token
	name      []byte
	attrs     []rawAttr
	text      []byte
	selfClose bool // the start tag just returned was <name/>: an end follows
	err       error

	scratch []byte // decoded character data of the current token
	arena   []byte // decoded attribute values of the item
}

func (z *xmlTok) reset(b []byte, check bool) {
	z.b, z.pos, z.check = b, 0, check
	z.name, z.text = nil, nil
	z.attrs = z.attrs[:0]
	z.selfClose, z.err = false, nil
	z.arena = z.arena[:0]
}

func (z *xmlTok) fail(msg string) (tokKind, error) {
	z.err = &tokError{Msg: msg}
	return tkNone, z.err
}

// next reads the next token; io.EOF at the end of the input. Errors are sticky.
func (z *xmlTok) next() (tokKind, error) {
	if z.err != nil {
		return tkNone, z.err
	}
	if z.selfClose {
		z.selfClose = false
		z.attrs = z.attrs[:0]
		return tkEnd, nil
	}
	b := z.b
	if z.pos >= len(b) {
		return tkNone, io.EOF
	}
	if b[z.pos] != '<' {
		return z.charData()
	}
	i := z.pos + 1
	if i >= len(b) {
		return z.fail(msgEOF)
	}
	switch b[i] {
	case '/':
		return z.endTag(i + 1)
	case '?':
		return z.procInst(i + 1)
	case '!':
		return z.bang(i + 1)
	}
	return z.startTag(i)
}

// scanName reads a name at b[i:] as encoding/xml's readName does: it ends
// before the first ASCII byte that cannot be in a name (every byte >= 0x80 is
// taken; isXMLName checks them). end == i when no name starts at i; eof when
// the input ends before the name does.
func (z *xmlTok) scanName(i int) (end int, eof bool) {
	b := z.b
	if i >= len(b) {
		return i, true
	}
	if byteClass[b[i]]&bcName == 0 {
		return i, false
	}
	j := i + 1
	for j < len(b) && byteClass[b[j]]&bcName != 0 {
		j++
	}
	return j, j >= len(b)
}

func (z *xmlTok) skipSpace(i int) int {
	for i < len(z.b) && byteClass[z.b[i]]&bcSpace != 0 {
		i++
	}
	return i
}

// isXMLName is encoding/xml's isName. ASCII names are checked here; a name
// with other characters is rare in metadata and is given to encoding/xml
// itself, so the two agree on the XML 1.0 name tables by construction.
func isXMLName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return xmlAcceptsName(s)
		}
		if byteClass[c]&bcName == 0 {
			return false
		}
	}
	return byteClass[s[0]]&bcNameStart != 0
}

// xmlAcceptsName asks encoding/xml whether s is a name: as an element name,
// it is checked by the same isName the tokenizer must agree with.
func xmlAcceptsName(s []byte) bool {
	doc := make([]byte, 0, len(s)+3)
	doc = append(append(append(doc, '<'), s...), '/', '>')
	_, err := xml.NewDecoder(bytes.NewReader(doc)).RawToken()
	return err == nil
}

// checkName is isXMLName for a name scanName read, with the number of colons
// in it, in one pass over an ASCII name.
func checkName(s []byte) (ok bool, colons int) {
	if len(s) == 0 || byteClass[s[0]]&bcNameStart == 0 && s[0] < utf8.RuneSelf {
		return false, 0
	}
	for _, c := range s {
		switch {
		case c == ':':
			colons++
		case c >= utf8.RuneSelf:
			return isXMLName(s), bytes.Count(s, []byte{':'})
		case byteClass[c]&bcName == 0:
			return false, 0
		}
	}
	return true, colons
}

// splitName splits a name as encoding/xml's nsname does: ok is false with more
// than one colon; a colon at either end is part of the local name.
func splitName(n []byte) (prefix, local []byte, ok bool) {
	c := bytes.IndexByte(n, ':')
	if c < 0 {
		return nil, n, true
	}
	if bytes.IndexByte(n[c+1:], ':') >= 0 {
		return nil, nil, false
	}
	if c == 0 || c == len(n)-1 {
		return nil, n, true
	}
	return n[:c], n[c+1:], true
}

// readName reads the name starting at b[i] and returns its end and the
// name; a missing name, or one with more than one colon, fails with missing
// (encoding/xml's wording for where it stands).
func (z *xmlTok) readName(i int, missing string) (int, []byte, error) {
	j, eof := z.scanName(i)
	switch {
	case eof:
		_, err := z.fail(msgEOF)
		return 0, nil, err
	case j == i:
		_, err := z.fail(missing)
		return 0, nil, err
	}
	name := z.b[i:j]
	ok, colons := checkName(name)
	switch {
	case !ok:
		_, err := z.fail("invalid XML name: " + string(name))
		return 0, nil, err
	case colons > 1:
		_, err := z.fail(missing)
		return 0, nil, err
	}
	return j, name, nil
}

func (z *xmlTok) startTag(i int) (tokKind, error) {
	b := z.b
	j, name, err := z.readName(i, "expected element name after <")
	if err != nil {
		return tkNone, err
	}
	z.attrs = z.attrs[:0]
	for {
		j = z.skipSpace(j)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		switch b[j] {
		case '/':
			if j+1 >= len(b) {
				return z.fail(msgEOF)
			}
			if b[j+1] != '>' {
				return z.fail("expected /> in element")
			}
			z.selfClose = true
			z.pos = j + 2
			z.name = name
			return tkStart, nil
		case '>':
			z.pos = j + 1
			z.name = name
			return tkStart, nil
		}
		k, an, err := z.readName(j, "expected attribute name in element")
		if err != nil {
			return tkNone, err
		}
		j = z.skipSpace(k)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		if b[j] != '=' {
			return z.fail("attribute name without = in element")
		}
		j = z.skipSpace(j + 1)
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		q := b[j]
		if q != '"' && q != '\'' {
			return z.fail("unquoted or missing attribute value in element")
		}
		end, plain, err := z.attrValue(j+1, q, false)
		if err != nil {
			return tkNone, err
		}
		z.attrs = append(z.attrs, rawAttr{name: an, raw: j + 1, val: b[j+1 : end-1], quote: q, plain: plain})
		j = end
	}
}

// attrValue reads a quoted attribute value starting at b[i] and returns the
// index after the closing quote, and whether the value is plain (nothing to
// decode). With emit, it appends the decoded value to the arena.
func (z *xmlTok) attrValue(i int, quote byte, emit bool) (end int, plain bool, err error) {
	b := z.b
	mask := uint8(bcAttr)
	if z.check {
		mask |= bcHigh
	}
	seg := i
	plain = true
	var bad string
	for i < len(b) {
		c := b[i]
		if byteClass[c]&mask == 0 {
			i++
			continue
		}
		switch {
		case c == quote:
			if bad != "" {
				_, err := z.fail(bad)
				return 0, false, err
			}
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
			}
			return i + 1, plain, nil
		case c == '"' || c == '\'':
			i++
		case c == '<':
			_, err := z.fail("unescaped < inside quoted string")
			return 0, false, err
		case c == '&':
			r, n, msg := z.reference(i)
			if msg != "" {
				_, err := z.fail(msg)
				return 0, false, err
			}
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
				z.arena = utf8.AppendRune(z.arena, r)
			}
			plain = false
			if bad == "" && !isXMLChar(r) {
				bad = illegalChar(r)
			}
			i += n
			seg = i
		case c == '\r':
			if emit {
				z.arena = append(z.arena, b[seg:i]...)
				z.arena = append(z.arena, '\n')
			}
			plain = false
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
			seg = i
		case c < utf8.RuneSelf: // a control character
			if bad == "" {
				bad = illegalChar(rune(c))
			}
			i++
		default:
			i += z.checkRune(i, &bad)
		}
	}
	// The input ends inside the value: encoding/xml checks what it read, then
	// fails to read on.
	if bad == "" {
		bad = msgEOF
	}
	_, err = z.fail(bad)
	return 0, false, err
}

// value returns the decoded value of an attribute of the current start tag,
// valid until the tokenizer is reset.
func (z *xmlTok) value(a rawAttr) []byte {
	if a.plain {
		return a.val
	}
	from := len(z.arena)
	// It cannot fail: startTag read the same bytes without error.
	z.attrValue(a.raw, a.quote, true)
	return z.arena[from:len(z.arena):len(z.arena)]
}

// checkRune decodes the non-ASCII character at b[i], notes the first problem in
// *bad and returns its length.
func (z *xmlTok) checkRune(i int, bad *string) int {
	r, size := utf8.DecodeRune(z.b[i:])
	if *bad == "" {
		if r == utf8.RuneError && size == 1 {
			*bad = "invalid UTF-8"
		} else if !isXMLChar(r) {
			*bad = illegalChar(r)
		}
	}
	return size
}

func illegalChar(r rune) string { return fmt.Sprintf("illegal character code %U", r) }

// reference reads the entity or character reference at b[i] == '&' and returns
// the character, its length in bytes, or encoding/xml's message for it.
func (z *xmlTok) reference(i int) (r rune, n int, msg string) {
	b := z.b
	j := i + 1
	if j >= len(b) {
		return 0, 0, msgEOF
	}
	if b[j] == '#' {
		j++
		if j >= len(b) {
			return 0, 0, msgEOF
		}
		hex := b[j] == 'x'
		if hex {
			j++
			if j >= len(b) {
				return 0, 0, msgEOF
			}
		}
		digits := j
		var v uint64
		for ; j < len(b); j++ {
			c := b[j]
			var d uint64
			switch {
			case '0' <= c && c <= '9':
				d = uint64(c - '0')
			case hex && 'a' <= c && c <= 'f':
				d = uint64(c-'a') + 10
			case hex && 'A' <= c && c <= 'F':
				d = uint64(c-'A') + 10
			default:
				goto end
			}
			if hex {
				v = v*16 + d
			} else {
				v = v*10 + d
			}
			if v > utf8.MaxRune {
				v = utf8.MaxRune + 1 // out of range, and never overflows
			}
		}
	end:
		if j >= len(b) {
			return 0, 0, msgEOF
		}
		if b[j] != ';' {
			return 0, 0, "invalid character entity " + string(b[i:j]) + " (no semicolon)"
		}
		if j == digits || v > utf8.MaxRune {
			return 0, 0, "invalid character entity " + string(b[i:j+1])
		}
		r = rune(v)
		if 0xD800 <= r && r <= 0xDFFF {
			r = utf8.RuneError // what string(rune(n)) makes of a surrogate
		}
		return r, j + 1 - i, ""
	}
	k, eof := z.scanName(j)
	if eof {
		return 0, 0, msgEOF
	}
	if b[k] != ';' {
		return 0, 0, "invalid character entity " + string(b[i:k]) + " (no semicolon)"
	}
	switch string(b[j:k]) {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "apos":
		r = '\''
	case "quot":
		r = '"'
	default:
		return 0, 0, "invalid character entity " + string(b[i:k+1])
	}
	return r, k + 1 - i, ""
}

// charData reads character data up to the next '<' or the end of the input.
func (z *xmlTok) charData() (tokKind, error) {
	b := z.b
	mask := uint8(bcText)
	if z.check {
		mask |= bcHigh
	}
	start := z.pos
	i, seg := start, start
	decoded := false
	out := z.scratch[:0]
	var bad string
loop:
	for i < len(b) {
		if i+8 <= len(b) && !textWordSpecial(binary.LittleEndian.Uint64(b[i:]), z.check) {
			i += 8
			continue
		}
		c := b[i]
		if byteClass[c]&mask == 0 {
			i++
			continue
		}
		switch {
		case c == '<':
			break loop
		case c == '>':
			if i-2 >= start && b[i-1] == ']' && b[i-2] == ']' {
				return z.fail("unescaped ]]> not in CDATA section")
			}
			i++
		case c == '&':
			r, n, msg := z.reference(i)
			if msg != "" {
				return z.fail(msg)
			}
			out = append(out, b[seg:i]...)
			out = utf8.AppendRune(out, r)
			decoded = true
			if bad == "" && !isXMLChar(r) {
				bad = illegalChar(r)
			}
			i += n
			seg = i
		case c == '\r':
			out = append(out, b[seg:i]...)
			out = append(out, '\n')
			decoded = true
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
			seg = i
		case c < utf8.RuneSelf: // a control character
			if bad == "" {
				bad = illegalChar(rune(c))
			}
			i++
		default:
			i += z.checkRune(i, &bad)
		}
	}
	if bad != "" {
		return z.fail(bad)
	}
	if decoded {
		out = append(out, b[seg:i]...)
		z.scratch = out
		z.text = out
	} else {
		z.text = b[start:i]
	}
	z.pos = i
	return tkText, nil
}

// textWordSpecial reports whether one of the eight bytes in x may interrupt
// character data: '<', '&', '>', a control character (tab and LF too), or,
// with high, a byte >= 0x80. It errs towards yes only, so the bytes of a word
// it flags are looked at one by one.
func textWordSpecial(x uint64, high bool) bool {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	lt := x ^ ('<' * lsb)
	amp := x ^ ('&' * lsb)
	gt := x ^ ('>' * lsb)
	m := (lt-lsb)&^lt | (amp-lsb)&^amp | (gt-lsb)&^gt | (x-0x20*lsb)&^x
	if high {
		m |= x
	}
	return m&msb != 0
}

var (
	seqCDATAEnd  = [...]byte{']', ']', '>'}
	seqDashDash  = [...]byte{'-', '-'}
	seqPIEnd     = [...]byte{'?', '>'}
	seqCDATAOpen = "CDATA["
)

// bang reads what follows "<!" (b[i] is the byte after it).
func (z *xmlTok) bang(i int) (tokKind, error) {
	b := z.b
	if i >= len(b) {
		return z.fail(msgEOF)
	}
	switch b[i] {
	case '-':
		if i+1 >= len(b) {
			return z.fail(msgEOF)
		}
		if b[i+1] != '-' {
			return z.fail("invalid sequence <!- not part of <!--")
		}
		from := i + 2
		k := bytes.Index(b[from:], seqDashDash[:])
		if k < 0 || from+k+2 >= len(b) {
			return z.fail(msgEOF)
		}
		if b[from+k+2] != '>' {
			return z.fail(`invalid sequence "--" not allowed in comments`)
		}
		z.pos = from + k + 3
		return tkOther, nil
	case '[':
		for t := 0; t < len(seqCDATAOpen); t++ {
			j := i + 1 + t
			if j >= len(b) {
				return z.fail(msgEOF)
			}
			if b[j] != seqCDATAOpen[t] {
				return z.fail("invalid <![ sequence")
			}
		}
		return z.cdata(i + 1 + len(seqCDATAOpen))
	}
	return z.declaration(i)
}

// cdata reads a CDATA section whose content starts at b[i].
func (z *xmlTok) cdata(i int) (tokKind, error) {
	b := z.b
	k := bytes.Index(b[i:], seqCDATAEnd[:])
	if k < 0 {
		return z.fail("unexpected EOF in CDATA section")
	}
	content := b[i : i+k]
	var bad string
	decoded := false
	out := z.scratch[:0]
	seg := 0
	for j := 0; j < len(content); {
		c := content[j]
		switch {
		case c == '\r':
			out = append(out, content[seg:j]...)
			out = append(out, '\n')
			decoded = true
			j++
			if j < len(content) && content[j] == '\n' {
				j++
			}
			seg = j
		case c < 0x20 && c != '\t' && c != '\n':
			if bad == "" {
				bad = illegalChar(rune(c))
			}
			j++
		case c >= utf8.RuneSelf && z.check:
			j += z.checkRune(i+j, &bad)
		default:
			j++
		}
	}
	if bad != "" {
		return z.fail(bad)
	}
	if decoded {
		out = append(out, content[seg:]...)
		z.scratch = out
		z.text = out
	} else {
		z.text = content
	}
	z.pos = i + k + 3
	return tkText, nil
}

// procInst reads a processing instruction whose target starts at b[i].
func (z *xmlTok) procInst(i int) (tokKind, error) {
	b := z.b
	j, eof := z.scanName(i)
	switch {
	case eof:
		return z.fail(msgEOF)
	case j == i:
		return z.fail("expected target name after <?")
	}
	target := b[i:j]
	if ok, _ := checkName(target); !ok {
		return z.fail("invalid XML name: " + string(target))
	}
	j = z.skipSpace(j)
	k := bytes.Index(b[j:], seqPIEnd[:])
	if k < 0 {
		return z.fail(msgEOF)
	}
	if string(target) == "xml" {
		content := string(b[j : j+k])
		if ver := procInstParam("version", content); ver != "" && ver != "1.0" {
			return z.fail(fmt.Sprintf("unsupported version %q; only version 1.0 is supported", ver))
		}
		if enc := procInstParam("encoding", content); enc != "" && !strings.EqualFold(enc, "utf-8") {
			return z.fail(fmt.Sprintf("encoding %q declared but Decoder.CharsetReader is nil", enc))
		}
	}
	z.pos = j + k + 2
	return tkOther, nil
}

// procInstParam is encoding/xml's procInst: the value of param in the content
// of an XML declaration, "" if there is none.
func procInstParam(param, s string) string {
	param += "="
	lenp := len(param)
	i := 0
	var sep byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, param)
		if k < 0 || lenp+k >= len(sub) {
			return ""
		}
		i += lenp + k + 1
		if c := sub[lenp+k]; c == '\'' || c == '"' {
			sep = c
			break
		}
	}
	if sep == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], sep)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}

// declaration reads "<!" followed by anything but a comment or a CDATA section
// (b[i] is the byte after "<!") as encoding/xml reads a directive — quotes,
// nested angle brackets, comments — and rejects it once it is complete.
func (z *xmlTok) declaration(i int) (tokKind, error) {
	b := z.b
	var inquote byte
	depth := 0
	j := i + 1 // the first byte is taken as it is
	for {
		if j >= len(b) {
			return z.fail(msgEOF)
		}
		c := b[j]
		j++
		if inquote == 0 && c == '>' && depth == 0 {
			return z.fail(msgDeclaration)
		}
	handle:
		switch {
		case c == inquote:
			inquote = 0
		case inquote != 0:
		case c == '\'' || c == '"':
			inquote = c
		case c == '>':
			depth--
		case c == '<':
			for t := 0; t < 3; t++ {
				if j >= len(b) {
					return z.fail(msgEOF)
				}
				c = b[j]
				j++
				if c != "!--"[t] {
					depth++
					goto handle
				}
			}
			var c0, c1 byte
			for {
				if j >= len(b) {
					return z.fail(msgEOF)
				}
				c = b[j]
				j++
				if c0 == '-' && c1 == '-' && c == '>' {
					break
				}
				c0, c1 = c1, c
			}
		}
	}
}

// endTag reads an end tag whose name starts at b[i].
func (z *xmlTok) endTag(i int) (tokKind, error) {
	b := z.b
	j, name, err := z.readName(i, "expected element name after </")
	if err != nil {
		return tkNone, err
	}
	j = z.skipSpace(j)
	if j >= len(b) {
		return z.fail(msgEOF)
	}
	if b[j] != '>' {
		_, local, _ := splitName(name)
		return z.fail("invalid characters between </" + string(local) + " and >")
	}
	z.pos = j + 1
	z.name = name
	z.attrs = z.attrs[:0]
	return tkEnd, nil
}
