package crosswalk

import (
	"fmt"
	"strings"
)

// bang reads what follows "<!" (src[i] is the byte after it): a comment,
// a CDATA section or a directive.
func (s *scanner) bang(i int) tokenKind {
	if i >= len(s.src) {
		return s.failEOF()
	}
	switch s.src[i] {
	case '-':
		return s.comment(i + 1)
	case '[':
		for t := range len("CDATA[") {
			j := i + 1 + t
			if j >= len(s.src) {
				return s.failEOF()
			}
			if s.src[j] != "CDATA["[t] {
				return s.fail(j+1, "invalid <![ sequence")
			}
		}
		return s.cdata(i + 1 + len("CDATA["))
	}
	return s.directive(i)
}

// comment reads a comment after "<!-" (src[i] should be the second '-'). It
// ends at the first "--", which must be followed by '>'.
func (s *scanner) comment(i int) tokenKind {
	if i >= len(s.src) {
		return s.failEOF()
	}
	if s.src[i] != '-' {
		return s.fail(i+1, "invalid sequence <!- not part of <!--")
	}
	k := strings.Index(s.src[i+1:], "--")
	if k < 0 || i+1+k+2 >= len(s.src) {
		return s.failEOF()
	}
	gt := i + 1 + k + 2
	if s.src[gt] != '>' {
		return s.fail(gt+1, `invalid sequence "--" not allowed in comments`)
	}
	s.pos = gt + 1
	return tokNone
}

// directive skips "<!" followed by anything but a comment or a CDATA
// section (src[i] is the byte after "<!", taken as it is) the way
// encoding/xml reads a directive: up to a '>' outside quotes and outside
// nested angle brackets, with comments inside skipped. encoding/xml returns
// it as a Directive, which this package ignored, so a DOCTYPE is accepted
// and its internal subset has no effect.
func (s *scanner) directive(i int) tokenKind {
	var quote byte
	depth := 0
	j := i + 1
	for {
		if j >= len(s.src) {
			return s.failEOF()
		}
		c := s.src[j]
		j++
		if quote == 0 && c == '>' && depth == 0 {
			s.pos = j
			return tokNone
		}
		var ok bool
		if j, depth, quote, ok = s.directiveByte(c, j, depth, quote); !ok {
			return tokNone
		}
	}
}

// directiveByte handles byte c of a directive, read before src[j]: quotes,
// angle brackets, and "<!--" comments, which are skipped to "-->". After a
// '<' not followed by "!--", the byte that broke the match is handled in
// turn, as encoding/xml does.
func (s *scanner) directiveByte(c byte, j, depth int, quote byte) (int, int, byte, bool) {
	for {
		switch {
		case c == quote:
			return j, depth, 0, true
		case quote != 0:
			return j, depth, quote, true
		case c == '\'' || c == '"':
			return j, depth, c, true
		case c == '>':
			return j, depth - 1, quote, true
		case c != '<':
			return j, depth, quote, true
		}
		matched := 0
		for matched < 3 {
			if j >= len(s.src) {
				s.failEOF()
				return 0, 0, 0, false
			}
			c = s.src[j]
			j++
			if c != "!--"[matched] {
				break
			}
			matched++
		}
		if matched < 3 {
			depth++
			continue // handle c, which broke "<!--"
		}
		k := strings.Index(s.src[j:], "-->")
		if k < 0 {
			s.failEOF()
			return 0, 0, 0, false
		}
		return j + k + 3, depth, quote, true
	}
}

// procInst reads a processing instruction whose target starts at src[i].
// For target xml it refuses what encoding/xml without a CharsetReader
// refuses: a version other than 1.0 and an encoding other than UTF-8.
func (s *scanner) procInst(i int) tokenKind {
	j, eof := s.scanName(i)
	switch {
	case eof:
		return s.failEOF()
	case j == i:
		return s.fail(i, "expected target name after <?")
	}
	target := s.src[i:j]
	if ok, _ := s.checkName(target); !ok {
		return s.fail(j, "invalid XML name: "+target)
	}
	j = s.skipSpace(j)
	k := strings.Index(s.src[j:], "?>")
	if k < 0 {
		return s.failEOF()
	}
	if target == "xml" {
		content := s.src[j : j+k]
		if v := procInstParam("version=", content); v != "" && v != "1.0" {
			s.err = fmt.Errorf("xml: unsupported version %q; only version 1.0 is supported", v)
			return tokNone
		}
		if enc := procInstParam("encoding=", content); enc != "" && !strings.EqualFold(enc, "utf-8") {
			s.err = fmt.Errorf("xml: encoding %q declared but Decoder.CharsetReader is nil", enc)
			return tokNone
		}
	}
	s.pos = j + k + 2
	return tokNone
}

// procInstParam is encoding/xml's procInst: the value of key (with its
// '=') in an XML declaration's content, "" if there is none. Only key
// followed by a quote counts, so `version = "1.1"` (spaces around '=') is
// not seen, as encoding/xml does not see it.
func procInstParam(key, s string) string {
	i := 0
	var quote byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, key)
		if k < 0 || len(key)+k >= len(sub) {
			return ""
		}
		i += len(key) + k + 1
		if c := sub[len(key)+k]; c == '\'' || c == '"' {
			quote = c
			break
		}
	}
	if quote == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], quote)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}
