package oaipmh

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

// itemState is what is learnt while one item is read.
type itemState struct {
	it        scanItem
	fixed     []byte // the item's bytes after repair
	edits     []edit
	reason    string // why the item is quarantined; "" if it is not
	rawID     string // the identifier as read, when it is unusable
	longID    bool   // rawID was refused for its length only
	hasHeader bool
	dsOK      bool
	hdrCtrl   int // control characters removed from header fields
	mFrom     int // range of the metadata element in fixed
	mTo       int
}

// errQuarantine stops reading an item whose problem is already known.
var errQuarantine = errors.New("quarantined")

func (st *itemState) stop(reason string) error {
	if st.reason == "" {
		st.reason = reason
	}
	return errQuarantine
}

func xmlReason(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return "malformed XML: " + se.Msg
	}
	var tl *tokenTooLargeError
	if errors.As(err, &tl) {
		return fmt.Sprintf("a text longer than max_record_bytes (%s)", fmtSize(int64(tl.max)))
	}
	return "malformed XML: " + strings.TrimPrefix(err.Error(), "xml: ")
}

// decodeItem reads the list item the scanner just cut out and hands it to the
// handler, quarantined if anything in it is wrong. It returns handler errors, and
// a FormatError for junk that is not the rest of a broken record.
func (p *decoder) decodeItem(resp *response, h handlers) error {
	st := &p.st
	*st = itemState{it: p.sc.take()}
	if st.it.junk {
		return p.junk(resp, st.it)
	}
	raw := st.it.raw
	if st.it.limit != "" {
		// What a decoder would build from the rest is not bounded by its
		// size: read only the part before, for the header.
		raw = raw[:st.it.limitAt]
	}
	fixed, edits, truncated := repairItem(raw, p.maxRecord)
	st.fixed, st.edits = fixed, edits
	for _, e := range edits {
		if e.kind == editCtrl {
			resp.stripped++
		}
	}

	rec, hdr, clean, err := p.items.read(st, p.stack, p.maxRecord, p.maxID)
	if rec == nil && hdr == nil {
		return nil // not an OAI-PMH record or header
	}

	switch {
	case err == nil && !clean:
		st.stop(fmt.Sprintf("malformed XML: content after </%s>", st.it.name))
	case err != nil && err != errQuarantine:
		st.stop(xmlReason(err))
	}
	switch {
	case st.it.over:
		st.reason = fmt.Sprintf("record of %s exceeds max_record_bytes (%s)", fmtSize(st.it.total), fmtSize(int64(p.maxRecord)))
	case st.it.limit != "":
		st.reason = st.it.limit
	case truncated:
		st.reason = fmt.Sprintf("record exceeds max_record_bytes (%s) once its invalid bytes are replaced", fmtSize(int64(p.maxRecord)))
	case st.it.open != "":
		st.reason = fmt.Sprintf("malformed XML: <%s> is not closed before %s", st.it.name, st.it.open)
	}
	quarantine := func(id string) *RecordError {
		if st.rawID != "" {
			id = st.rawID
		}
		resp.quarantined++
		return &RecordError{Identifier: readableID(id), Offset: st.it.off, Reason: st.reason}
	}
	resp.count++
	if rec != nil {
		if st.reason != "" {
			rec.Err = quarantine(rec.Header.Identifier)
			if st.longID {
				rec.LongIdentifier = st.rawID
			}
			rec.Metadata, rec.MetadataNamespace = nil, ""
		} else {
			if rec.Header.Deleted {
				rec.Metadata, rec.MetadataNamespace = nil, ""
			}
			if rec.Metadata != nil {
				rec.Repairs = repairNotes(editsIn(edits, st.mFrom, st.mTo), "")
			}
			if st.hdrCtrl > 0 {
				rec.Repairs = append(rec.Repairs, fmt.Sprintf("%s removed from the header", plural(st.hdrCtrl, "C0 control character")))
			}
			if len(rec.Repairs) > 0 {
				resp.repaired++
			}
			if st.hasHeader && !st.dsOK {
				resp.badDatestamps++
			}
		}
		if h.record != nil {
			if err := h.record(rec); err != nil {
				return handlerError{err}
			}
		}
		return nil
	}
	if st.reason != "" {
		hdr.Err = quarantine(hdr.Identifier)
	} else if !st.dsOK {
		resp.badDatestamps++
	}
	if h.header != nil {
		if err := h.header(hdr); err != nil {
			return handlerError{err}
		}
	}
	return nil
}

// junk handles end tags the scanner found between items: the rest of a record
// that a stray end tag ended early is skipped with a warning; anything else is
// broken markup outside the records and fails the page.
func (p *decoder) junk(resp *response, it scanItem) error {
	if it.open != "" {
		return &FormatError{Reason: fmt.Sprintf("stray markup between the records at byte %d (%q…), up to %s", it.off, snippet(it.raw[:min(len(it.raw), 40)]), it.open), Snippet: p.sc.rr.snippet()}
	}
	resp.warn(fmt.Sprintf("skipped %s of stray text and end tags at byte %d, up to </%s>: the rest of a record that a stray </%s> ended early", fmtSize(it.total), it.off, it.name, it.name))
	return nil
}
