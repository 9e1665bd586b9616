package oaipmh

import (
	"bytes"
	"fmt"
	"strings"
)

var (
	seqCDATAEnd  = [...]byte{']', ']', '>'}
	seqDashDash  = [...]byte{'-', '-'}
	seqPIEnd     = [...]byte{'?', '>'}
	seqCDATAOpen = "CDATA["
)

// bang reads what follows "<!" (b[i] is the byte after it). A comment ends at
// the first "--", which must be followed by '>'.
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

// procInst reads a processing instruction whose target starts at b[i]. For
// target xml it checks version 1.0 and a UTF-8 encoding, as encoding/xml
// without a CharsetReader does.
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
// nested angle brackets, comments — and rejects it once it is complete, so one
// cut off by the end of the item is still "unexpected EOF". encoding/xml
// returns it as a Directive, which the decoder once ignored, so it ended up in
// stored metadata, where XML allows no DOCTYPE and strict parsers reject it.
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
