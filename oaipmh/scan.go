package oaipmh

import (
	"bytes"
	"fmt"
	"io"
)

// Recovery design: record boundaries are found by a byte-level scanner, and each
// record is tokenised on its own, so a problem inside a record is record-local by
// construction.
//
// The scanner reads the body once. Outside list items it passes the bytes on to
// the envelope decoder (encoding/xml over the scanner's ReadByte), removing C0
// control characters as it goes. When it meets the start tag of an item (a
// <record> or <header> directly inside <ListRecords>, <GetRecord> or
// <ListIdentifiers>), it copies the item's bytes into a buffer instead, up to and
// including the item's end tag, and gives the envelope decoder a processing
// instruction <?rsbridge-item?> in its place (carrying the item's newlines, so
// line numbers in envelope errors stay right). The decoder then tokenises the
// buffered item with a tokenizer of its own, built for items in memory
// (decodeItem, item.go, xmltok.go); whatever goes wrong in there — bad bytes,
// mismatched tags, undefined entities, a record that is too large — ends in
// that item, and the envelope carries on after it.
//
// Why this and not resynchronising encoding/xml after an error: encoding/xml keeps
// its error sticky and may have read ahead, so recovering would mean finding the
// record's end with a byte scanner anyway, then restarting the decoder mid-stream
// with the element stack, namespace scopes, offsets and capture buffer restored.
// Cutting items out first needs the same scanner but no restart, and the envelope
// decoder never sees record bytes at all.
//
// The scanner knows just enough XML to find boundaries: tags with quoted attribute
// values, comments, CDATA sections, processing instructions and declarations. An
// item ends at the end tag that balances its start tag, counting only elements of
// the item's own name (a nested MARC <record> counts; mismatched or unclosed
// elements of other names do not, so they cannot make the scanner lose the
// item's end). A '<' inside a tag or attribute value is not XML; the scanner takes
// it as the start of the next construct, so an unescaped '<' or a stray quote in a
// record cannot swallow the rest of the page. As a safety net, an item also ends
// at the end tag of the list or of the root, and at a <resumptionToken> start tag
// (with the item's prefix): the item is then reported as not closed and the
// envelope continues with that tag. Conversely, a stray </record> inside a record
// (or a "</record>" in an attribute value) ends the record early; what follows it
// up to the record's real end tag lands directly inside the list: text, which the
// envelope decoder ignores (with a warning) as it always did, and end tags, which
// would fail the page. So an end tag directly inside the list, right after an
// item, starts a junk item that runs up to and including the next end tag of the
// item's name: the decoder skips it with a page warning (the record it belongs to
// is already quarantined). Junk that does not end that way (it runs into a new
// item, the resumption token or the end of the list) is broken markup outside the
// records, and the page fails, as it did before.
//
// Memory: an item is buffered up to MaxRecordBytes; beyond that the scanner counts
// its bytes without keeping them and the item is quarantined. Outside items, one
// token (a text run, a tag, a comment) may not exceed MaxRecordBytes either: the
// page fails. What a decoder builds from a token can be larger than the token:
// each open element costs a stack frame, each attribute a few strings. So the
// scanner also counts nesting depth and attributes per element, and an item with
// more than maxDepth open elements or maxAttrs attributes on one element is
// quarantined without being tokenised (outside items, the page fails).

// markerTarget is the target of the processing instruction put in place of an item.
const markerTarget = "rsbridge-item"

type scanState uint8

const (
	sText        scanState = iota
	sLt                    // after '<'
	sBang                  // after "<!": "--" or "[CDATA[" or a declaration
	sComment               // in <!-- -->
	sCDATA                 // in <![CDATA[ ]]>
	sPI                    // in <? ?>
	sDecl                  // in <!DOCTYPE ...> and the like
	sDeclLt                // '<' inside a declaration: maybe "<!--"
	sDeclComment           // comment inside a declaration
	sStartName             // start tag name
	sAttrs                 // start tag after the name
	sQuote                 // quoted attribute value
	sEndName               // end tag name
	sEndRest               // end tag after the name
)

// maxNameKeep is how much of a tag name the scanner keeps for comparisons.
const maxNameKeep = 256

// Limits on what one element costs the decoders: real metadata nests a few dozen
// levels deep and carries a few attributes per element.
const (
	maxDepth = 1000
	maxAttrs = 1000
)

// scanItem is one list item cut out of the envelope.
type scanItem struct {
	raw     []byte // the item's bytes, from '<' of its start tag through its end tag; valid until the scanner continues
	total   int64  // bytes the item had, also when it was too large to keep
	off     int64  // body offset of the item's start tag
	local   string // "record" or "header"
	name    string // qualified name of the item element
	over    bool   // more than max bytes: raw is the first max bytes only
	open    string // non-empty: the item was not closed; the tag that ended it
	junk    bool   // not an item: text or markup between items
	limit   string // non-empty: the item exceeds a structural limit
	limitAt int    // where in raw the tag that exceeded it starts
}

// limitError is the envelope exceeding a structural limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// tokenTooLargeError is a token outside the records larger than MaxRecordBytes.
type tokenTooLargeError struct {
	off int64
	max int
}

func (e *tokenTooLargeError) Error() string {
	return fmt.Sprintf("a single token (text, tag or comment) at byte %d outside the records is larger than max_record_bytes (%s)", e.off, fmtSize(int64(e.max)))
}

// scanError is a body that ends inside an item.
type scanError struct{ msg string }

func (e *scanError) Error() string { return e.msg }

type scanner struct {
	rr  *rawReader
	max int

	// Output for the envelope decoder: out[rpos:avail] can be read. While a start
	// tag that may begin an item is read, its bytes (from hold on) are held back.
	out   []byte
	rpos  int
	avail int
	hold  int // -1: nothing held

	st       scanState
	depth    int  // envelope element depth
	listItem bool // the open depth-1 element is a list whose items are cut out
	rootQ    string
	listQ    string
	itemQ    string // qualified name of the list's items (the last one seen)
	tokStart int64  // body offset where the current envelope token began

	tagStart  int64  // body offset of the current construct's '<'
	name      []byte // the current tag name (first maxNameKeep bytes)
	nameLen   int
	prev      byte // previous byte in a start tag, to see "/>"
	afterEq   bool // a quote now opens an attribute value
	quote     byte
	t1, t2    byte // last two bytes, for "-->", "]]>", "?>"
	bang      int
	bangKind  byte
	declDepth int
	declQuote byte
	attrs     int // attributes of the current start tag

	// the item being read
	inRec    bool
	recQ     string // qualified name of the item element
	tokenQ   string // qualified name of resumptionToken with the item's prefix
	recLocal string
	recFirst bool // the item's own start tag is not finished yet
	recDepth int  // open elements named recQ, including the item itself
	recBuf   []byte
	recTotal int64
	recOff   int64
	recOver  bool
	recNL    int
	recTagAt int // position in recBuf of the current construct's '<'
	junk     bool
	recNest  int    // open elements in the item
	recLimit string // the first structural limit the item exceeded
	limitAt  int

	afterItem bool // no element started directly inside the list since the last item

	ready bool // item holds a finished item the decoder has not taken
	item  scanItem

	span     int   // start of the bytes of the current chunk not yet flushed
	base     int64 // body offset of the current chunk
	stripped int   // control characters removed from the envelope
	err      error
}

func newScanner(rr *rawReader, max int) *scanner {
	return &scanner{rr: rr, max: max, hold: -1}
}

// ReadByte implements io.ByteReader for the envelope decoder.
func (s *scanner) ReadByte() (byte, error) {
	if s.rpos >= s.avail {
		if err := s.advance(); err != nil {
			return 0, err
		}
	}
	c := s.out[s.rpos]
	s.rpos++
	return c, nil
}

// Read implements io.Reader (encoding/xml asks for one for CharsetReader).
func (s *scanner) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.rpos >= s.avail {
		if err := s.advance(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.out[s.rpos:s.avail])
	s.rpos += n
	return n, nil
}

// take returns the finished item.
func (s *scanner) take() scanItem {
	s.ready = false
	return s.item
}

// advance scans more input until there is something for the envelope decoder.
func (s *scanner) advance() error {
	s.ready = false // an item the decoder did not ask for is dropped
	for {
		if s.err != nil {
			return s.err
		}
		if s.rpos < s.avail {
			return nil
		}
		if s.hold >= 0 {
			n := copy(s.out, s.out[s.rpos:])
			s.out = s.out[:n]
			s.hold -= s.rpos
			s.rpos, s.avail = 0, 0
		} else {
			s.out = s.out[:0]
			s.rpos, s.avail = 0, 0
		}
		chunk, err := s.rr.peek()
		if len(chunk) == 0 {
			switch {
			case err != io.EOF:
				s.err = err
			case s.inRec:
				s.err = &scanError{fmt.Sprintf("unexpected EOF inside <%s> that starts at byte %d (truncated body?)", s.recQ, s.recOff)}
			default:
				s.hold = -1
				s.avail = len(s.out)
				if s.rpos < s.avail {
					return nil
				}
				return io.EOF
			}
			continue
		}
		s.base = s.rr.off
		n := s.scan(chunk)
		s.rr.consume(n)
		if s.hold >= 0 {
			s.avail = s.hold
		} else {
			s.avail = len(s.out)
		}
		if s.ready {
			return nil
		}
	}
}

func isCtrl(c byte) bool { return c < 0x20 && c != '\t' && c != '\n' && c != '\r' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// scan consumes bytes of b (at body offset s.base) and returns how many it used;
// it stops right after an item is finished.
func (s *scanner) scan(b []byte) int {
	s.span = 0
	i := 0
	for i < len(b) {
		c := b[i]
		switch s.st {
		case sText:
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				i = len(b)
				continue
			}
			i += j
			s.openTag(b, i)
			i++
		case sLt:
			switch {
			case isCtrl(c):
				i++
			case c == '/':
				s.resetName()
				s.st = sEndName
				i++
			case c == '!':
				s.hold = -1
				s.bang = 0
				s.st = sBang
				i++
			case c == '?':
				s.hold = -1
				s.t1, s.t2 = 0, 0
				s.st = sPI
				i++
			case c == '<':
				s.hold = -1
				s.openTag(b, i)
				i++
			case isSpace(c) || c == '>' || c == '=' || c == '"' || c == '\'':
				// Not markup (encoding/xml rejects it); go on as text.
				s.hold = -1
				s.st = sText
			default:
				s.resetName()
				s.addName(c)
				s.attrs = 0
				s.st = sStartName
				i++
			}
		case sStartName:
			switch {
			case isCtrl(c):
				i++
			case isSpace(c) || c == '/' || c == '>' || c == '=' || c == '"' || c == '\'' || c == '<':
				s.st = sAttrs
				s.prev, s.afterEq = 0, false
				if s.startNamed(b, i) {
					return i
				}
			default:
				s.addName(c)
				i++
			}
		case sAttrs:
			switch {
			case c == '>':
				i++
				s.st = sText
				if s.startEnded(b, i, s.prev == '/') {
					return i
				}
			case c == '<':
				s.abortTag(b, i)
				i++
			case isCtrl(c):
				i++
			case (c == '"' || c == '\'') && s.afterEq:
				s.quote = c
				s.st = sQuote
				s.afterEq = false
				i++
			case isSpace(c):
				s.prev = c
				i++
			case c == '=':
				if !s.afterEq {
					if s.attrs++; s.attrs == maxAttrs+1 {
						s.tooMany(fmt.Sprintf("an element with more than %d attributes", maxAttrs))
					}
				}
				s.afterEq = true
				s.prev = c
				i++
			default:
				s.afterEq = false
				s.prev = c
				i++
			}
		case sQuote:
			j := i
			for j < len(b) && b[j] != s.quote && b[j] != '<' {
				j++
			}
			if j == len(b) {
				i = j
				continue
			}
			i = j
			if b[i] == '<' {
				s.abortTag(b, i)
			} else {
				s.st = sAttrs
				s.prev = s.quote
			}
			i++
		case sEndName:
			switch {
			case isCtrl(c):
				i++
			case isSpace(c) || c == '>':
				s.st = sEndRest
				if s.endNamed(b, i) {
					return i
				}
			case c == '<':
				s.abortTag(b, i)
				i++
			default:
				s.addName(c)
				i++
			}
		case sEndRest:
			switch c {
			case '>':
				i++
				s.st = sText
				if s.endEnded(b, i) {
					return i
				}
			case '<':
				s.abortTag(b, i)
				i++
			default:
				i++
			}
		case sBang:
			if isCtrl(c) {
				i++
				continue
			}
			switch {
			case s.bang == 0 && (c == '-' || c == '['):
				s.bangKind = c
				s.bang = 1
				i++
			case s.bang > 0 && s.bangKind == '-' && c == '-':
				s.t1, s.t2 = 0, 0
				s.st = sComment
				i++
			case s.bang > 0 && s.bangKind == '[' && c == "CDATA["[s.bang-1]:
				s.bang++
				i++
				if s.bang == 7 {
					s.t1, s.t2 = 0, 0
					s.st = sCDATA
				}
			default:
				// A declaration, or something encoding/xml will reject.
				s.declDepth, s.declQuote = 0, 0
				s.st = sDecl
			}
		case sComment, sCDATA, sPI, sDeclComment:
			for ; i < len(b); i++ {
				c := b[i]
				if isCtrl(c) {
					continue
				}
				if c == '>' && ((s.st == sPI && s.t2 == '?') ||
					((s.st == sComment || s.st == sDeclComment) && s.t1 == '-' && s.t2 == '-') ||
					(s.st == sCDATA && s.t1 == ']' && s.t2 == ']')) {
					i++
					if s.st == sDeclComment {
						s.st = sDecl
					} else {
						s.endConstruct(i)
					}
					break
				}
				s.t1, s.t2 = s.t2, c
			}
		case sDecl:
			// As encoding/xml reads a directive: quotes, nested <...>, comments.
			i++
			switch {
			case isCtrl(c):
			case s.declQuote == 0 && c == '>' && s.declDepth == 0:
				s.endConstruct(i)
			case s.declQuote != 0:
				if c == s.declQuote {
					s.declQuote = 0
				}
			case c == '\'' || c == '"':
				s.declQuote = c
			case c == '>':
				s.declDepth--
			case c == '<':
				s.bang = 0
				s.st = sDeclLt
			}
		case sDeclLt:
			if isCtrl(c) {
				i++
				continue
			}
			if c == "!--"[s.bang] {
				s.bang++
				i++
				if s.bang == 3 {
					s.t1, s.t2 = 0, 0
					s.st = sDeclComment
				}
				continue
			}
			s.declDepth++
			s.st = sDecl // c is read again in sDecl
		}
	}
	s.flush(b, len(b))
	if !s.inRec && s.base+int64(len(b))-s.tokStart > int64(s.max) && s.err == nil {
		s.err = &tokenTooLargeError{off: s.tokStart, max: s.max}
	}
	return len(b)
}

func (s *scanner) resetName() { s.name, s.nameLen = s.name[:0], 0 }

func (s *scanner) addName(c byte) {
	if s.nameLen < maxNameKeep {
		s.name = append(s.name, c)
	}
	s.nameLen++
}

// tooMany notes a structural limit: the item is quarantined, or the page fails.
func (s *scanner) tooMany(what string) {
	if s.inRec {
		if s.recLimit == "" {
			s.recLimit, s.limitAt = what, s.recTagAt
		}
	} else if s.err == nil {
		s.err = &limitError{fmt.Sprintf("%s at byte %d outside the records", what, s.tagStart)}
	}
}

func (s *scanner) nameIs(q string) bool {
	return q != "" && s.nameLen == len(q) && string(s.name) == q
}

// openTag starts a construct at b[i] == '<'.
func (s *scanner) openTag(b []byte, i int) {
	s.st = sLt
	s.tagStart = s.base + int64(i)
	if s.inRec {
		s.recTagAt = len(s.recBuf) + i - s.span
		return
	}
	s.tokenEnds(s.tagStart)
	if s.depth == 2 && s.listItem {
		// This may be an item: hold its bytes back until its name is known.
		s.flush(b, i)
		s.hold = len(s.out)
	}
}

// endConstruct ends a comment, CDATA section, PI or declaration before b[i].
func (s *scanner) endConstruct(i int) {
	s.st = sText
	if !s.inRec {
		s.tokenEnds(s.base + int64(i))
	}
}

// tokenEnds checks the envelope token that ends at body offset end and starts
// the next one there.
func (s *scanner) tokenEnds(end int64) {
	if end-s.tokStart > int64(s.max) && s.err == nil {
		s.err = &tokenTooLargeError{off: s.tokStart, max: s.max}
	}
	s.tokStart = end
}

// abortTag gives up a tag that met a '<' (not XML; the envelope or item decoder
// will say so) and starts a new construct there.
func (s *scanner) abortTag(b []byte, i int) {
	s.hold = -1
	if s.inRec {
		s.recFirst = false
	}
	s.openTag(b, i)
}

// startNamed is called when a start tag's name is complete, before b[i]. It
// reports whether an item was finished.
func (s *scanner) startNamed(b []byte, i int) bool {
	if s.inRec {
		switch {
		case s.nameIs(s.tokenQ):
			s.cut(b, i, "<"+s.tokenQ+">")
			return true
		case s.junk && s.nameIs(s.recQ):
			s.cut(b, i, "<"+s.recQ+">") // a new item: the junk was not a record's rest
			return true
		}
		return false
	}
	switch s.depth {
	case 0:
		s.rootQ = string(s.name)
	case 1:
		s.listQ = string(s.name)
		s.listItem = false
		item := "record"
		switch localName(s.listQ) {
		case "ListIdentifiers":
			item = "header"
			fallthrough
		case "ListRecords", "GetRecord":
			s.listItem = s.nameLen <= maxNameKeep
		}
		s.itemQ = item
		if p := prefixOf(s.listQ); p != "" {
			s.itemQ = p + ":" + item
		}
		s.setTokenQ()
	case 2:
		if s.hold < 0 {
			break
		}
		q := s.itemQ
		if !s.nameIs(q) {
			q = string(s.name)
		}
		l := localName(q)
		switch {
		case s.nameLen <= maxNameKeep && (l == "record" || l == "header"):
			s.flush(b, i)
			s.startItem(q, l, s.out[s.hold:])
		default:
			// Another element inside the list: the envelope decoder skips it.
			if l == "resumptionToken" {
				s.afterItem = false
			}
			s.hold = -1
			return false
		}
		s.out = s.out[:s.hold]
		s.hold = -1
	}
	return false
}

// beginRec starts the item buffer with the bytes read so far.
func (s *scanner) beginRec(held []byte) {
	s.recBuf = s.recBuf[:0]
	s.recTotal, s.recOver, s.recNL = 0, false, 0
	s.recNest, s.recLimit = 0, ""
	s.inRec = true
	s.keep(held)
	s.recOff = s.tagStart
	s.recTagAt = 0
}

// startItem starts an item whose start tag's name (q) was just read; held is
// the tag so far.
func (s *scanner) startItem(q, local string, held []byte) {
	s.beginRec(held)
	s.recQ = q
	if s.itemQ != q {
		s.itemQ = q
		s.setTokenQ()
	}
	s.recLocal = local
	s.recFirst, s.recDepth = true, 1
	s.junk = false
}

// startJunk starts a junk item (text or markup between items) at s.tagStart.
func (s *scanner) startJunk(held []byte) {
	s.beginRec(held)
	s.recQ = s.itemQ
	s.recLocal = localName(s.itemQ)
	s.recFirst, s.recDepth = false, 1
	s.junk = true
}

// setTokenQ sets the name of the resumption token with the items' prefix.
func (s *scanner) setTokenQ() {
	s.tokenQ = "resumptionToken"
	if p := prefixOf(s.itemQ); p != "" {
		s.tokenQ = p + ":resumptionToken"
	}
}

// startEnded is called after the '>' of a start tag, before b[i].
func (s *scanner) startEnded(b []byte, i int, selfClosing bool) bool {
	if !s.inRec {
		if !selfClosing {
			if s.depth++; s.depth == maxDepth+1 {
				s.tooMany(fmt.Sprintf("elements nested more than %d deep", maxDepth))
			}
		}
		s.tokenEnds(s.base + int64(i))
		return false
	}
	if !selfClosing {
		if s.recNest++; s.recNest == maxDepth+1 {
			s.tooMany(fmt.Sprintf("elements nested more than %d deep", maxDepth))
		}
	}
	if s.recFirst {
		s.recFirst = false
		if selfClosing {
			s.recDepth = 0
		}
	} else if !selfClosing && s.nameIs(s.recQ) && !s.junk {
		s.recDepth++
	}
	if s.recDepth == 0 {
		return s.endItem(b, i)
	}
	return false
}

// endItem ends the item after its closing tag, before b[i].
func (s *scanner) endItem(b []byte, i int) bool {
	s.flush(b, i)
	s.finish("")
	s.tokStart = s.base + int64(i)
	return true
}

// endNamed is called when an end tag's name is complete, before b[i].
func (s *scanner) endNamed(b []byte, i int) bool {
	if s.inRec && (s.nameIs(s.listQ) || s.nameIs(s.rootQ)) {
		s.cut(b, i, "</"+string(s.name)+">")
		return true
	}
	if s.hold >= 0 { // an end tag directly inside the list
		if !s.nameIs(s.listQ) && s.afterItem {
			s.flush(b, i)
			s.startJunk(s.out[s.hold:])
			s.out = s.out[:s.hold]
		}
		s.hold = -1
	}
	return false
}

// endEnded is called after the '>' of an end tag, before b[i].
func (s *scanner) endEnded(b []byte, i int) bool {
	if !s.inRec {
		if s.depth > 0 {
			s.depth--
		}
		s.tokenEnds(s.base + int64(i))
		return false
	}
	if s.recNest > 0 {
		s.recNest--
	}
	if s.nameIs(s.recQ) {
		s.recDepth--
		if s.recDepth == 0 {
			return s.endItem(b, i)
		}
	}
	return false
}

// cut ends the item before the tag being read (whose name ends before b[i]); the
// tag goes to the envelope.
func (s *scanner) cut(b []byte, i int, closedBy string) {
	s.flush(b, i)
	if s.recTagAt < len(s.recBuf) {
		s.recBuf = s.recBuf[:s.recTagAt]
	}
	s.recTotal -= s.base + int64(i) - s.tagStart
	s.finish(closedBy)
	if s.st == sEndRest {
		s.out = append(s.out, '<', '/')
	} else {
		s.out = append(s.out, '<')
	}
	s.out = append(s.out, s.name...)
	s.tokStart = s.tagStart
}

// finish hands the item to the decoder and puts the marker in its place.
func (s *scanner) finish(open string) {
	s.item = scanItem{raw: s.recBuf, total: s.recTotal, off: s.recOff, local: s.recLocal, name: s.recQ, over: s.recOver, open: open, junk: s.junk, limit: s.recLimit, limitAt: min(s.limitAt, len(s.recBuf))}
	s.ready = true
	s.inRec = false
	s.afterItem = true
	s.out = append(s.out, "<?"+markerTarget...)
	for n := min(s.recNL, 1<<16); n > 0; n-- {
		s.out = append(s.out, '\n')
	}
	s.out = append(s.out, '?', '>')
}

// flush sends b[s.span:i] to the item buffer or to the envelope decoder.
func (s *scanner) flush(b []byte, i int) {
	if i > s.span {
		if s.inRec {
			s.keep(b[s.span:i])
		} else {
			s.emit(b[s.span:i])
		}
	}
	s.span = i
}

// emit appends envelope bytes without C0 control characters.
func (s *scanner) emit(p []byte) {
	for {
		j := 0
		for j < len(p) && !isCtrl(p[j]) {
			j++
		}
		s.out = append(s.out, p[:j]...)
		if j == len(p) {
			return
		}
		s.stripped++
		p = p[j+1:]
	}
}

// keep appends item bytes to the buffer, up to max bytes in all.
func (s *scanner) keep(p []byte) {
	s.recTotal += int64(len(p))
	s.recNL += bytes.Count(p, []byte{'\n'})
	if s.recOver {
		return
	}
	if room := s.max - len(s.recBuf); len(p) > room {
		p = p[:room]
		s.recOver = true
	}
	if need := len(s.recBuf) + len(p); need > cap(s.recBuf) {
		// Grow by doubling, but never past max.
		c := min(max(2*cap(s.recBuf), need, 4096), s.max)
		nb := make([]byte, len(s.recBuf), c)
		copy(nb, s.recBuf)
		s.recBuf = nb
	}
	s.recBuf = append(s.recBuf, p...)
}

func localName(q string) string {
	for i := len(q) - 1; i >= 0; i-- {
		if q[i] == ':' {
			return q[i+1:]
		}
	}
	return q
}

func prefixOf(q string) string {
	for i := 0; i < len(q); i++ {
		if q[i] == ':' {
			return q[:i]
		}
	}
	return ""
}

// fmtSize renders a byte count for messages: "20 MiB", "1.5 KiB", "900 bytes".
func fmtSize(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
