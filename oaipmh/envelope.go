package oaipmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rsbridge/rsbridge/rsync/xmltext"
)

// handlers receive list items as they are decoded.
type handlers struct {
	record func(*Record) error
	header func(*Header) error
}

// decode reads one whole response. Problems in the envelope are returned as
// *FormatError with the first bytes of the body; problems inside one record only
// quarantine that record. Errors returned by handlers come back as handlerError;
// anything else is a transport error from the body.
func (p *decoder) decode(h handlers) (*response, error) {
	resp := &response{}
	err := p.decodeEnvelope(resp, h)
	resp.stripped += p.sc.stripped
	if resp.moreWarnings > 0 {
		resp.warnings = append(resp.warnings, fmt.Sprintf("and %d more warnings", resp.moreWarnings))
	}
	if err == nil {
		return resp, nil
	}
	var he handlerError
	if errors.As(err, &he) {
		return resp, he
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return resp, err
	}
	var tl *tokenTooLargeError
	if errors.As(err, &tl) {
		return resp, &FormatError{Reason: "a token is too large", Snippet: p.sc.rr.snippet(), Err: err}
	}
	var le *limitError
	if errors.As(err, &le) {
		return resp, &FormatError{Reason: "too complex", Snippet: p.sc.rr.snippet(), Err: err}
	}
	var se *xml.SyntaxError
	var sce *scanError
	if errors.As(err, &se) || errors.As(err, &sce) || strings.HasPrefix(err.Error(), "xml:") {
		return resp, &FormatError{Reason: "malformed XML", Snippet: p.sc.rr.snippet(), Err: err}
	}
	return resp, err // transport error while reading the body
}

type handlerError struct{ err error }

func (e handlerError) Error() string { return e.err.Error() }

func (p *decoder) decodeEnvelope(resp *response, h handlers) error {
	// Find the root element.
	var root xml.StartElement
	for {
		tok, _, err := p.next()
		if err == io.EOF {
			return &FormatError{Reason: "empty body", Snippet: p.sc.rr.snippet()}
		}
		if err != nil {
			return err
		}
		if t, ok := tok.(xml.StartElement); ok {
			root = t
			break
		}
		if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(cd)) > 0 {
			return &FormatError{Reason: "text before the root element", Snippet: p.sc.rr.snippet()}
		}
	}
	if root.Name.Local != "OAI-PMH" {
		return &FormatError{Reason: fmt.Sprintf("root element is <%s>, not <OAI-PMH>", xmltext.QName(root.Name.Space, root.Name.Local)), Snippet: p.sc.rr.snippet()}
	}
	if ns := p.resolve(root.Name); ns != Namespace {
		if ns != "" {
			return &FormatError{Reason: fmt.Sprintf("root element is in namespace %q, not %q", ns, Namespace), Snippet: p.sc.rr.snippet()}
		}
		resp.warnings = append(resp.warnings, "root element <OAI-PMH> has no namespace")
	}
	for {
		tok, _, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) == 0 { // root closed
			break
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case p.isOAI(t, "responseDate"):
			s, err := p.text()
			if err != nil {
				return err
			}
			resp.responseDateRaw = strings.TrimSpace(s)
			if d, err := ParseDatestamp(s); err == nil {
				resp.responseDate = d
			} else {
				resp.warnings = append(resp.warnings, fmt.Sprintf("unparsable responseDate %q", s))
			}
		case p.isOAI(t, "error"):
			code, _ := attr(t, "code")
			msg, err := p.text()
			if err != nil {
				return err
			}
			if len(resp.errs) < maxErrors {
				resp.errs = append(resp.errs, &Error{Code: code, Message: strings.Join(strings.Fields(msg), " ")})
			}
		case p.isOAI(t, "ListRecords"), p.isOAI(t, "GetRecord"), p.isOAI(t, "ListIdentifiers"):
			resp.verb = t.Name.Local
			if err := p.decodeList(resp, h); err != nil {
				return err
			}
		default:
			if err := p.skip(); err != nil {
				return err
			}
		}
	}
	// Nothing but comments, PIs and white space may follow the root.
	for {
		tok, err := p.env.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement, xml.EndElement:
			return &xml.SyntaxError{Msg: "content after the root element", Line: p.line()}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return &xml.SyntaxError{Msg: "text after the root element", Line: p.line()}
			}
		}
	}
}

func (p *decoder) decodeList(resp *response, h handlers) error {
	depth := len(p.stack)
	textWarned := false
	for {
		tok, _, err := p.next()
		if err != nil {
			return err
		}
		if len(p.stack) < depth {
			return nil
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(p.stack) == depth && !textWarned {
				if s := bytes.TrimSpace(t); len(s) > 0 {
					textWarned = true
					resp.warn(fmt.Sprintf("ignored text between the records: %q", snippet(s[:min(len(s), 60)])))
				}
			}
		case xml.ProcInst:
			if t.Target == markerTarget && p.sc.ready && len(p.stack) == depth {
				if err := p.decodeItem(resp, h); err != nil {
					return err
				}
			}
		case xml.StartElement:
			if len(p.stack) != depth+1 {
				continue
			}
			switch {
			case p.isOAI(t, "resumptionToken"):
				rt, err := p.decodeToken(t)
				if err != nil {
					return err
				}
				resp.token = rt
			case p.isOAI(t, "record"), p.isOAI(t, "header"):
				// The scanner cuts every item out; one that reaches the envelope
				// means the two disagree about this (odd) markup.
				resp.warn(fmt.Sprintf("skipped a <%s> the decoder could not separate", xmltext.QName(t.Name.Space, t.Name.Local)))
				if err := p.skip(); err != nil {
					return err
				}
			default:
				if err := p.skip(); err != nil {
					return err
				}
			}
		}
	}
}

func (p *decoder) decodeToken(t xml.StartElement) (*ResumptionToken, error) {
	rt := &ResumptionToken{Cursor: -1, CompleteListSize: -1}
	if v, ok := attr(t, "cursor"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			rt.Cursor = n
		}
	}
	if v, ok := attr(t, "completeListSize"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			rt.CompleteListSize = n
		}
	}
	if v, ok := attr(t, "expirationDate"); ok {
		if d, err := ParseDatestamp(v); err == nil {
			rt.ExpirationDate = d
		}
	}
	s, err := p.text()
	if err != nil {
		return nil, err
	}
	rt.Value = strings.TrimSpace(s)
	return rt, nil
}
