package oaipmh

import (
	"io"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// The record tokenizer. Items the scanner cut out are tokenised here, in
// memory, because encoding/xml (a byte at a time through an interface, an
// allocation per token, every character decoded) took half of a harvest's
// CPU; xmlTok walks the bytes once and returns sub-slices, allocating nothing
// per token. Its contract is encoding/xml's RawToken with Strict, error for
// error and message for message, so a record is quarantined for the same
// reason either way (spec digest PMH-009); the one difference is that a
// declaration inside a record is an error (declaration). Matching end tags and
// namespaces is item.go's job. With check false the input must come from
// repairItem and non-ASCII characters are not decoded; FuzzRecordTokenizer
// holds both modes, and check mode against encoding/xml, to the contract.

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

// The byte classes the tokenizer asks about (xmltext.Class).
const (
	bcName      = xmltext.ClassName
	bcNameStart = xmltext.ClassNameStart
	bcSpace     = xmltext.ClassSpace
	bcText      = xmltext.ClassText
	bcAttr      = xmltext.ClassAttr
	bcHigh      = xmltext.ClassHigh
)

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
	if xmltext.Class(b[i])&bcName == 0 {
		return i, false
	}
	j := i + 1
	for j < len(b) && xmltext.Class(b[j])&bcName != 0 {
		j++
	}
	return j, j >= len(b)
}

func (z *xmlTok) skipSpace(i int) int {
	for i < len(z.b) && xmltext.Class(z.b[i])&bcSpace != 0 {
		i++
	}
	return i
}
