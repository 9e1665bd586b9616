package oaipmh

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// itemDecoder reads the bytes of one list item (a record or a header) after
// repair. env is the envelope's element stack, for namespaces. rec and hdr are
// both nil when the item is an element of another namespace; clean reports
// that the item ended exactly with the end tag of its element. The decoder
// uses itemReader; the tests plug in the encoding/xml implementation it
// replaced, to compare the two.
type itemDecoder interface {
	read(st *itemState, env []frame, maxRecord, maxID int) (rec *Record, hdr *Header, clean bool, err error)
}

// itemReader is the decoder's part that reads an item: header fields,
// namespace scopes and the standalone metadata, over xmlTok. It keeps its own
// element stack, as the decoder does for the envelope, and follows the same
// steps, token for token, as the encoding/xml reader before it (whose
// behaviour, including how far a header was read before an error, is the
// contract: FuzzRecordTokenizer). Its buffers are reused from item to item.
type itemReader struct {
	z         xmlTok
	maxRecord int
	maxID     int

	frames []itemFrame
	decls  []rawDecl
	env    []byte // names and declarations of the envelope's frames, copied
	buf    []byte // the text of the element text() reads
	inh    []rawDecl

	// Strings that recur from record to record are made once per page.
	lastNS   string
	lastDS   string
	lastDSAt time.Time
	lastDSOK bool
	setSpecs map[string]string
	checkAll bool // check every character as well (tests: the input is repaired)
}

// itemFrame is an open element: its raw name and its namespace declarations,
// decls[d0:d1].
type itemFrame struct {
	name   []byte
	d0, d1 int
}

type rawDecl struct{ prefix, uri []byte }

// maxInterned caps the setSpecs remembered per page.
const maxInterned = 1024

const xmlNamespace = "http://www.w3.org/XML/1998/namespace"

func (r *itemReader) read(st *itemState, env []frame, maxRecord, maxID int) (*Record, *Header, bool, error) {
	r.maxRecord, r.maxID = maxRecord, maxID
	r.z.reset(st.fixed, r.checkAll)
	r.frames, r.decls, r.env = r.frames[:0], r.decls[:0], r.env[:0]
	// The envelope's frames, copied: their names for messages and their
	// declarations for namespaces. Sub-slices of r.env stay valid when it
	// grows: the old array is not written again.
	for _, f := range env {
		from := len(r.env)
		if f.name.Space != "" {
			r.env = append(r.env, f.name.Space...)
			r.env = append(r.env, ':')
		}
		r.env = append(r.env, f.name.Local...)
		fr := itemFrame{name: r.env[from:len(r.env):len(r.env)], d0: len(r.decls)}
		for _, d := range f.decls {
			p := len(r.env)
			r.env = append(r.env, d.prefix...)
			u := len(r.env)
			r.env = append(r.env, d.uri...)
			r.decls = append(r.decls, rawDecl{prefix: r.env[p:u:u], uri: r.env[u:len(r.env):len(r.env)]})
		}
		fr.d1 = len(r.decls)
		r.frames = append(r.frames, fr)
	}
	rec, hdr, err := r.readItem(st)
	clean := err == nil && r.z.pos == len(st.fixed)
	r.z.reset(nil, false)
	// Buffers a large item grew are not kept for the next one.
	const keep = 1 << 20
	if cap(r.z.scratch) > keep || cap(r.z.arena) > keep || cap(r.buf) > keep {
		r.z.scratch, r.z.arena, r.buf = nil, nil, nil
	}
	return rec, hdr, clean, err
}

// next reads the next token, checks that end tags match, and keeps the
// element stack. off is where the token starts in the item.
func (r *itemReader) next() (tokKind, int, error) {
	off := r.z.pos
	k, err := r.z.next()
	if err == io.EOF && len(r.frames) > 0 {
		return tkNone, off, &tokError{Msg: fmt.Sprintf("<%s> is not closed", r.frames[len(r.frames)-1].name)}
	}
	if err != nil {
		return tkNone, off, err
	}
	switch k {
	case tkStart:
		f := itemFrame{name: r.z.name, d0: len(r.decls)}
		for _, a := range r.z.attrs {
			if p, ok := declPrefix(a.name); ok {
				r.decls = append(r.decls, rawDecl{prefix: p, uri: r.z.value(a)})
			}
		}
		f.d1 = len(r.decls)
		r.frames = append(r.frames, f)
	case tkEnd:
		if len(r.frames) == 0 {
			return tkNone, off, &tokError{Msg: "unexpected end element </" + string(r.z.name) + ">"}
		}
		top := r.frames[len(r.frames)-1]
		if !bytes.Equal(top.name, r.z.name) {
			return tkNone, off, &tokError{Msg: fmt.Sprintf("element <%s> closed by </%s>", top.name, r.z.name)}
		}
		r.frames = r.frames[:len(r.frames)-1]
		r.decls = r.decls[:top.d0]
	}
	return k, off, nil
}

// declPrefix reports whether an attribute declares a namespace, and the prefix
// it binds ("" for the default namespace).
func declPrefix(name []byte) ([]byte, bool) {
	switch {
	case string(name) == "xmlns":
		return nil, true
	case len(name) > len("xmlns:") && string(name[:len("xmlns:")]) == "xmlns:" && bytes.IndexByte(name[len("xmlns:"):], ':') < 0:
		return name[len("xmlns:"):], true
	}
	return nil, false
}

// resolve returns the namespace bound to prefix in the current scope; isXML
// for the prefix xml.
func (r *itemReader) resolve(prefix []byte) (uri []byte, isXML bool) {
	if string(prefix) == "xml" {
		return nil, true
	}
	for i := len(r.frames) - 1; i >= 0; i-- {
		f := r.frames[i]
		for _, d := range r.decls[f.d0:f.d1] {
			if bytes.Equal(d.prefix, prefix) {
				return d.uri, false
			}
		}
	}
	return nil, false
}

// isOAI reports whether the start tag just read is the named element of the
// OAI namespace, or of no namespace at all.
func (r *itemReader) isOAI(local string) bool {
	p, l, _ := splitName(r.z.name)
	if string(l) != local {
		return false
	}
	uri, isXML := r.resolve(p)
	return !isXML && (len(uri) == 0 || string(uri) == Namespace)
}

// attr returns the value of the unprefixed attribute of the start tag just read.
func (r *itemReader) attr(name string) ([]byte, bool) {
	for _, a := range r.z.attrs {
		if string(a.name) == name {
			return r.z.value(a), true
		}
	}
	return nil, false
}

// skip consumes the rest of the element whose start was just read.
func (r *itemReader) skip() error {
	depth := len(r.frames)
	for len(r.frames) >= depth {
		if _, _, err := r.next(); err != nil {
			return err
		}
	}
	return nil
}

// text reads the character data of the element just started, skipping
// children. The result is valid until the next call.
func (r *itemReader) text() ([]byte, error) {
	depth := len(r.frames)
	r.buf = r.buf[:0]
	for {
		k, off, err := r.next()
		if err != nil {
			return nil, err
		}
		if len(r.frames) < depth {
			return r.buf, nil
		}
		if k == tkText && len(r.frames) == depth {
			if len(r.buf)+len(r.z.text) > r.maxRecord {
				return nil, &tokenTooLargeError{off: int64(off), max: r.maxRecord}
			}
			r.buf = append(r.buf, r.z.text...)
		}
	}
}

// readItem tokenises one item: a record or a header. Both are nil when the item
// turned out to be an element of another namespace.
func (r *itemReader) readItem(st *itemState) (*Record, *Header, error) {
	k, _, err := r.next()
	if err != nil || k != tkStart {
		if err == nil {
			err = &tokError{Msg: fmt.Sprintf("<%s> does not start with a tag", st.it.name)}
		}
		if st.it.local == "header" {
			return nil, &Header{}, err
		}
		return &Record{}, nil, err
	}
	switch {
	case r.isOAI("record"):
		rec := &Record{}
		return rec, nil, r.readRecord(rec, st)
	case r.isOAI("header"):
		hdr := &Header{}
		if err := r.readHeader(hdr, 0, st); err != nil {
			return nil, hdr, err
		}
		return nil, hdr, nil
	}
	return nil, nil, nil
}

func (r *itemReader) readRecord(rec *Record, st *itemState) error {
	return r.eachChild(func(off int) error {
		switch {
		case r.isOAI("header"):
			if err := r.readHeader(&rec.Header, off, st); err != nil {
				return err
			}
		case r.isOAI("metadata"):
			if err := r.readMetadata(rec, st); err != nil {
				return err
			}
		default: // about, and anything unexpected
			return r.skip()
		}
		return nil
	})
}

// readHeader reads a header whose start tag (beginning at tagFrom) was just
// read; see decodeitem.go for what the repair pass's changes to it mean.
func (r *itemReader) readHeader(h *Header, tagFrom int, st *itemState) error {
	st.hasHeader = true
	if v, ok := r.attr("status"); ok && string(bytes.TrimSpace(v)) == "deleted" {
		h.Deleted = true
	}
	n := editsIn(st.edits, tagFrom, r.z.pos)
	if why := unusable(n, "the header's attributes"); why != "" {
		return st.stop(why)
	}
	st.hdrCtrl += n[editCtrl]
	return r.eachChild(func(off int) error {
		_, local, _ := splitName(r.z.name)
		field := headerField(local)
		s, err := r.text()
		if err != nil {
			return err
		}
		n := editsIn(st.edits, off, r.z.pos)
		switch field {
		case fieldIdentifier:
			id := bytes.TrimSpace(s)
			if why := unusable(n, "the identifier"); why != "" {
				st.rawID = string(id)
				return st.stop(why)
			}
			if len(id) > r.maxID {
				st.rawID, st.longID = string(id), true
				return st.stop(fmt.Sprintf("identifier of %d bytes exceeds the %d-byte limit (max_identifier_bytes)", len(id), r.maxID))
			}
			h.Identifier = string(id)
		case fieldDatestamp:
			if why := unusable(n, "the datestamp"); why != "" {
				return st.stop(why)
			}
			r.datestamp(h, st, bytes.TrimSpace(s))
		case fieldSetSpec:
			if why := unusable(n, "a setSpec"); why != "" {
				return st.stop(why)
			}
			spec := bytes.TrimSpace(s)
			if len(spec) > r.maxID {
				return st.stop(fmt.Sprintf("setSpec of %d bytes exceeds the %d-byte limit (max_identifier_bytes)", len(spec), r.maxID))
			}
			if len(spec) > 0 && !containsBytes(h.SetSpecs, spec) {
				if len(h.SetSpecs) == maxSetSpecs {
					return st.stop(fmt.Sprintf("more than %d setSpecs", maxSetSpecs))
				}
				h.SetSpecs = append(h.SetSpecs, r.setSpec(spec))
			}
		default:
			return nil
		}
		st.hdrCtrl += n[editCtrl]
		return nil
	})
}

type headerFieldKind uint8

const (
	fieldOther headerFieldKind = iota
	fieldIdentifier
	fieldDatestamp
	fieldSetSpec
)

// headerField names a header child by its local name, in any namespace, as the
// decoder always has.
func headerField(local []byte) headerFieldKind {
	switch string(local) {
	case "identifier":
		return fieldIdentifier
	case "datestamp":
		return fieldDatestamp
	case "setSpec":
		return fieldSetSpec
	}
	return fieldOther
}

// datestamp sets the header's datestamp from its trimmed text; a page's records
// often share one, which is then parsed once.
func (r *itemReader) datestamp(h *Header, st *itemState, s []byte) {
	if r.lastDS == "" || string(s) != r.lastDS {
		ds := string(s)
		d, err := ParseDatestamp(ds)
		r.lastDS, r.lastDSAt, r.lastDSOK = ds, d, err == nil
	}
	h.DatestampRaw, h.Datestamp, st.dsOK = r.lastDS, r.lastDSAt, r.lastDSOK
}

// setSpec returns spec as a string, made once per page.
func (r *itemReader) setSpec(spec []byte) string {
	if s, ok := r.setSpecs[string(spec)]; ok {
		return s
	}
	s := string(spec)
	if r.setSpecs == nil || len(r.setSpecs) >= maxInterned {
		r.setSpecs = make(map[string]string)
	}
	r.setSpecs[s] = s
	return s
}

func containsBytes(list []string, b []byte) bool {
	for _, v := range list {
		if v == string(b) {
			return true
		}
	}
	return false
}

// readMetadata slices the first child element of <metadata> out of the item and
// makes it standalone.
func (r *itemReader) readMetadata(rec *Record, st *itemState) error {
	return r.eachChild(func(off int) error {
		if rec.Metadata != nil { // a second root: not allowed, keep the first
			return r.skip()
		}
		prefix, _, _ := splitName(r.z.name)
		uri, isXML := r.resolve(prefix)
		inherited := r.inherited()
		if err := r.skip(); err != nil {
			return err
		}
		end := r.z.pos
		switch {
		case isXML:
			rec.MetadataNamespace = xmlNamespace
		case string(uri) != r.lastNS:
			r.lastNS = string(uri)
			fallthrough
		default:
			rec.MetadataNamespace = r.lastNS
		}
		rec.Metadata = injectDecls(st.fixed[off:end], inherited)
		st.mFrom, st.mTo = off, end
		return nil
	})
}

// eachChild calls fn for every child element of the element just started,
// with the offset of the child's start tag; fn may read the child or leave it
// to be passed over. It returns when the element ends.
func (r *itemReader) eachChild(fn func(off int) error) error {
	depth := len(r.frames)
	for {
		k, off, err := r.next()
		if err != nil {
			return err
		}
		if len(r.frames) < depth {
			return nil
		}
		if k != tkStart || len(r.frames) != depth+1 {
			continue
		}
		if err := fn(off); err != nil {
			return err
		}
	}
}

// inherited lists the namespace bindings in scope at the element on top of the
// stack that it does not declare itself: outermost ancestors first, each
// element's declarations in document order; a prefix redeclared further in
// keeps its first position and takes the innermost value; an empty default
// namespace is left out. The result is valid until the next call.
func (r *itemReader) inherited() []rawDecl {
	top := r.frames[len(r.frames)-1]
	own := r.decls[top.d0:top.d1]
	out := r.inh[:0]
	for _, d := range r.decls[:top.d0] {
		if hasPrefix(own, d.prefix) {
			continue
		}
		if j := prefixIndex(out, d.prefix); j >= 0 {
			out[j].uri = d.uri
			continue
		}
		out = append(out, d)
	}
	r.inh = out
	kept := out[:0]
	for _, d := range out {
		if len(d.prefix) == 0 && len(d.uri) == 0 {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

func hasPrefix(decls []rawDecl, prefix []byte) bool { return prefixIndex(decls, prefix) >= 0 }

func prefixIndex(decls []rawDecl, prefix []byte) int {
	for i, d := range decls {
		if bytes.Equal(d.prefix, prefix) {
			return i
		}
	}
	return -1
}

// injectDecls returns a new slice: raw, the element's bytes, with decls
// declared right after the name of its start tag.
func injectDecls(raw []byte, decls []rawDecl) []byte {
	if len(decls) == 0 {
		return bytes.Clone(raw)
	}
	end := 1
	for end < len(raw) {
		c := raw[end]
		if xmltext.IsSpace(c) || c == '/' || c == '>' {
			break
		}
		end++
	}
	size := len(raw)
	for _, d := range decls {
		size += len(` xmlns=""`) + escapedAttrLen(d.uri)
		if len(d.prefix) > 0 {
			size += 1 + len(d.prefix)
		}
	}
	out := make([]byte, 0, size)
	out = append(out, raw[:end]...)
	for _, d := range decls {
		if len(d.prefix) == 0 {
			out = append(out, ` xmlns="`...)
		} else {
			out = append(out, ` xmlns:`...)
			out = append(out, d.prefix...)
			out = append(out, `="`...)
		}
		out = appendEscapedAttr(out, d.uri)
		out = append(out, '"')
	}
	return append(out, raw[end:]...)
}

// attrEscape is how appendEscapedAttr writes a byte ("" when as it is).
func attrEscape(c byte) string {
	switch c {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '"':
		return "&quot;"
	case '\t':
		return "&#x9;"
	case '\n':
		return "&#xA;"
	case '\r':
		return "&#xD;"
	}
	return ""
}

func escapedAttrLen(s []byte) int {
	n := len(s)
	for _, c := range s {
		if e := attrEscape(c); e != "" {
			n += len(e) - 1
		}
	}
	return n
}

// appendEscapedAttr appends s escaped for a double-quoted attribute value. s is
// valid UTF-8 (the tokenizer checked or repair made it so), so bytes are
// copied as they are.
func appendEscapedAttr(out, s []byte) []byte {
	for len(s) > 0 {
		i := 0
		for i < len(s) && attrEscape(s[i]) == "" {
			i++
		}
		out = append(out, s[:i]...)
		if i == len(s) {
			break
		}
		out = append(out, attrEscape(s[i])...)
		s = s[i+1:]
	}
	return out
}
