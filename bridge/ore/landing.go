package ore

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// Landing returns Extract(metadata, repoHost).Landing, the landing page the
// record names, without tokenising the whole record: the harvest's classify
// step (bridge/harvest) asks it of every new or changed record, so a byte
// scanner reads only the root's start tag, the start tags of the root's
// children and the text of the candidate elements, and skips everything else
// by counting tags. Anything it does not expect (a DOCTYPE, a broken tag)
// hands the record to Extract, whose answer it then is; on a well-formed
// record the two agree (FuzzLanding).
func Landing(metadata []byte, repoHost string) string {
	if u, ok := fastLanding(metadata, repoHost); ok {
		return u
	}
	f, _ := Extract(metadata, repoHost)
	return f.Landing
}

// tag is a start tag as the scanner reads it.
type tag struct {
	prefix, local string
	attrs         []rawAttr
	empty         bool // <x/>
}

type rawAttr struct{ prefix, local, value string }

// scanner walks a record's bytes.
type scanner struct {
	b []byte
	i int
}

// fastLanding is Landing's byte scanner; ok is false when it meets something
// it leaves to Extract. It applies Extract's landing rules to the root's
// children and stops at the first candidate nothing later can beat.
func fastLanding(b []byte, host string) (string, bool) {
	s := &scanner{b: b}
	if !s.prolog() {
		return "", false
	}
	root, ok := s.startTag()
	if !ok {
		return "", false
	}
	scope := root.declarations()
	format := formatOf(scope[root.prefix])
	if root.empty {
		return "", true
	}
	var first string
	for {
		t, end, ok := s.nextChild()
		switch {
		case !ok:
			return "", false
		case end:
			return first, true // the root ends: JPCOAR found no candidate on the repository's host
		case !isLandingCandidate(format, t.ns(scope), &t):
			if !t.empty && !s.skipElement() {
				return "", false
			}
			continue
		}
		text := ""
		if !t.empty {
			if text, ok = s.elementText(); !ok {
				return "", false
			}
		}
		u := strings.TrimSpace(text)
		if !isHTTP(u) {
			continue
		}
		if format != FormatJPCOAR || onHost(u, host) {
			return u, true // nothing can do better
		}
		if first == "" {
			first = u
		}
	}
}

// declarations are the namespaces the start tag t declares, by prefix ("" for
// the default namespace).
func (t *tag) declarations() map[string]string {
	scope := map[string]string{}
	for _, a := range t.attrs {
		switch {
		case a.prefix == "xmlns":
			scope[a.local] = a.value
		case a.prefix == "" && a.local == "xmlns":
			scope[""] = a.value
		}
	}
	return scope
}

// ns is the namespace of a child of the root: its own declaration of its
// prefix, else the root's scope.
func (t *tag) ns(scope map[string]string) string {
	ns := scope[t.prefix]
	for _, a := range t.attrs {
		if a.prefix == "xmlns" && a.local == t.prefix || a.prefix == "" && a.local == "xmlns" && t.prefix == "" {
			ns = a.value
		}
	}
	return ns
}

// isLandingCandidate reports whether a child of the root in namespace ns can
// name the landing page in format.
func isLandingCandidate(format, ns string, t *tag) bool {
	switch format {
	case FormatJPCOAR:
		return isJPCOAR(ns) && t.local == "identifier" && t.attr("identifierType") == "URI"
	case FormatJunii2:
		return ns == nsJunii2 && t.local == "URI"
	}
	return ns == nsDC && t.local == "identifier"
}

// nextChild moves past comments, CDATA sections and processing instructions
// to the next child start tag, which it reads, or to the end tag of the
// element being read (end true, not read). ok is false at the end of input
// and at anything left to Extract (a declaration, a broken tag).
func (s *scanner) nextChild() (t tag, end, ok bool) {
	for {
		if !s.to('<') {
			return t, false, false
		}
		if s.has("</") {
			return t, true, true
		}
		if skipped, closed := s.skipMisc(); skipped {
			if !closed {
				return t, false, false
			}
			continue
		}
		if s.has("<!") {
			return t, false, false
		}
		t, ok = s.startTag()
		return t, false, ok
	}
}

// skipMisc moves past the comment, CDATA section or processing instruction
// at s.i, if there is one (skipped); closed is false when it does not end.
func (s *scanner) skipMisc() (skipped, closed bool) {
	switch {
	case s.has("<!--"):
		return true, s.past("-->")
	case s.has("<![CDATA["):
		return true, s.past("]]>")
	case s.has("<?"):
		return true, s.past("?>")
	}
	return false, true
}

func (t *tag) attr(local string) string {
	for _, a := range t.attrs {
		if a.prefix == "" && a.local == local {
			return a.value
		}
	}
	return ""
}

func (s *scanner) has(p string) bool { return bytes.HasPrefix(s.b[s.i:], []byte(p)) }

// to moves to the next '<'.
func (s *scanner) to(c byte) bool {
	j := bytes.IndexByte(s.b[s.i:], c)
	if j < 0 {
		return false
	}
	s.i += j
	return true
}

// past moves past the next occurrence of end.
func (s *scanner) past(end string) bool {
	j := bytes.Index(s.b[s.i:], []byte(end))
	if j < 0 {
		return false
	}
	s.i += j + len(end)
	return true
}

// prolog skips white space, the XML declaration, comments and processing
// instructions before the root; a DOCTYPE is left to Extract.
func (s *scanner) prolog() bool {
	for {
		for s.i < len(s.b) && xmltext.IsSpace(s.b[s.i]) {
			s.i++
		}
		switch {
		case s.i >= len(s.b):
			return false
		case s.has("<?"):
			if !s.past("?>") {
				return false
			}
		case s.has("<!--"):
			if !s.past("-->") {
				return false
			}
		case s.has("<!"):
			return false
		case s.b[s.i] == '<':
			return true
		default:
			return false
		}
	}
}

// name reads an XML name as prefix and local part.
func (s *scanner) name() (prefix, local string, ok bool) {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if xmltext.IsSpace(c) || c == '=' || c == '>' || c == '/' || c == '"' || c == '\'' || c == '<' {
			break
		}
		s.i++
	}
	n := string(s.b[start:s.i])
	if n == "" || !utf8.ValidString(n) {
		return "", "", false
	}
	if p, l, found := strings.Cut(n, ":"); found {
		return p, l, p != "" && l != "" && !strings.Contains(l, ":")
	}
	return "", n, true
}

// startTag reads the start tag at s.i ('<').
func (s *scanner) startTag() (tag, bool) {
	var t tag
	s.i++ // '<'
	var ok bool
	if t.prefix, t.local, ok = s.name(); !ok {
		return t, false
	}
	for {
		for s.i < len(s.b) && xmltext.IsSpace(s.b[s.i]) {
			s.i++
		}
		switch {
		case s.i >= len(s.b):
			return t, false
		case s.b[s.i] == '>':
			s.i++
			return t, true
		case s.has("/>"):
			s.i += 2
			t.empty = true
			return t, true
		}
		var a rawAttr
		if a.prefix, a.local, ok = s.name(); !ok {
			return t, false
		}
		for s.i < len(s.b) && xmltext.IsSpace(s.b[s.i]) {
			s.i++
		}
		if s.i >= len(s.b) || s.b[s.i] != '=' {
			return t, false
		}
		s.i++
		for s.i < len(s.b) && xmltext.IsSpace(s.b[s.i]) {
			s.i++
		}
		if s.i >= len(s.b) || s.b[s.i] != '"' && s.b[s.i] != '\'' {
			return t, false
		}
		q := s.b[s.i]
		s.i++
		j := bytes.IndexByte(s.b[s.i:], q)
		if j < 0 {
			return t, false
		}
		v, ok := unescape(s.b[s.i : s.i+j])
		if !ok {
			return t, false
		}
		a.value = v
		s.i += j + 1
		t.attrs = append(t.attrs, a)
	}
}

// skipElement moves past the end tag of the element whose start tag was just
// read.
func (s *scanner) skipElement() bool {
	for depth := 1; depth > 0; {
		if !s.to('<') {
			return false
		}
		if skipped, closed := s.skipMisc(); skipped {
			if !closed {
				return false
			}
			continue
		}
		switch {
		case s.has("</"):
			if !s.past(">") {
				return false
			}
			depth--
		default:
			t, ok := s.startTag()
			if !ok {
				return false
			}
			if !t.empty {
				depth++
			}
		}
	}
	return true
}

// elementText reads the text directly inside the element whose start tag was
// just read (CDATA included, entities decoded, child elements skipped) and
// moves past its end tag.
func (s *scanner) elementText() (string, bool) {
	var b strings.Builder
	for {
		j := bytes.IndexByte(s.b[s.i:], '<')
		if j < 0 {
			return "", false
		}
		text, ok := unescape(s.b[s.i : s.i+j])
		if !ok {
			return "", false
		}
		b.WriteString(text)
		s.i += j
		if s.has("<![CDATA[") {
			s.i += len("<![CDATA[")
			k := bytes.Index(s.b[s.i:], []byte("]]>"))
			if k < 0 {
				return "", false
			}
			b.Write(s.b[s.i : s.i+k])
			s.i += k + 3
			continue
		}
		if skipped, closed := s.skipMisc(); skipped {
			if !closed {
				return "", false
			}
			continue
		}
		switch {
		case s.has("</"):
			if !s.past(">") {
				return "", false
			}
			return b.String(), true
		default:
			t, ok := s.startTag()
			if !ok || !t.empty && !s.skipElement() {
				return "", false
			}
		}
	}
}

// unescape decodes the predefined entities and character references of text
// or an attribute value, and normalises line ends as encoding/xml does; ok is
// false for anything else (left to Extract).
func unescape(b []byte) (string, bool) {
	if bytes.IndexByte(b, '&') < 0 && bytes.IndexByte(b, '\r') < 0 {
		return string(b), true
	}
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r':
			out.WriteByte('\n')
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		case c == '&':
			j := bytes.IndexByte(b[i:], ';')
			if j < 0 {
				return "", false
			}
			ref := string(b[i+1 : i+j])
			switch ref {
			case "lt":
				out.WriteByte('<')
			case "gt":
				out.WriteByte('>')
			case "amp":
				out.WriteByte('&')
			case "apos":
				out.WriteByte('\'')
			case "quot":
				out.WriteByte('"')
			default:
				var n uint64
				var err error
				switch {
				case strings.HasPrefix(ref, "#x"):
					n, err = strconv.ParseUint(ref[2:], 16, 32)
				case strings.HasPrefix(ref, "#"):
					n, err = strconv.ParseUint(ref[1:], 10, 32)
				default:
					return "", false
				}
				if err != nil || !xmltext.IsChar(rune(n)) {
					return "", false
				}
				out.WriteRune(rune(n))
			}
			i += j
		default:
			out.WriteByte(c)
		}
	}
	return out.String(), true
}
