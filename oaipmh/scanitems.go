package oaipmh

import (
	"bytes"
	"fmt"
)

// Cutting items out. An item ends at the end tag that balances its start tag,
// counting only elements of the item's own name: a nested MARC <record>
// counts; mismatched or unclosed elements of other names do not, so they
// cannot make the scanner lose the item's end. As a safety net an item also
// ends, reported as not closed, at the end tag of the list or the root and at
// a <resumptionToken> start tag with the item's prefix; the envelope goes on
// with that tag (cut). A stray </record> inside a record ends it early; what
// follows is handled as junk (endNamed).

func (s *scanner) resetName() { s.name, s.nameLen = s.name[:0], 0 }

// addName appends name bytes, keeping the first maxNameKeep.
func (s *scanner) addName(p []byte) {
	if keep := maxNameKeep - s.nameLen; keep > 0 {
		s.name = append(s.name, p[:min(keep, len(p))]...)
	}
	s.nameLen += len(p)
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

// endNamed is called when an end tag's name is complete, before b[i]. An end
// tag directly inside the list right after an item is what a stray </record>
// left: it starts a junk item that runs up to and including the next end tag
// of the item's name, which the decoder skips with a page warning. Junk that
// ends otherwise (a new item, the token, the list's end) fails the page.
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

// finish hands the item to the decoder and puts the marker in its place, with
// the item's newlines, so line numbers in envelope errors stay right.
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
