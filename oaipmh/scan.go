package oaipmh

import (
	"fmt"
	"io"
)

// The scanner cuts every list item (a <record>, or a <header> in
// ListIdentifiers) out of the body before any XML parser sees it, so a problem
// inside one record quarantines that record and the page goes on (spec digest
// PMH-009; docs/design.md, "Decoder"). The envelope goes to encoding/xml over
// ReadByte, with <?rsbridge-item?> in place of each item; items go to xmlTok.
// Why not resynchronise one encoding/xml decoder after an error: its errors
// are sticky and it reads ahead, so recovery would need this byte scanner
// anyway, plus a restart mid-stream with element stack, namespace scopes,
// offsets and capture buffer restored. The scanner knows just enough XML to
// find boundaries (scanstates.go); how items end, and what happens to stray
// end tags between them, is in scanitems.go.

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
// levels deep and carries a few attributes per element. Beyond them an item is
// quarantined without being tokenised; outside items the page fails. The same
// holds for size: an item is kept up to MaxRecordBytes (then only counted), and
// one envelope token may not be larger.
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
