package oaipmh

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// OAI-PMH error codes (OAI-PMH 2.0 §3.6).
const (
	BadArgument             = "badArgument"
	BadResumptionToken      = "badResumptionToken"
	BadVerb                 = "badVerb"
	CannotDisseminateFormat = "cannotDisseminateFormat"
	IDDoesNotExist          = "idDoesNotExist"
	NoRecordsMatch          = "noRecordsMatch"
	NoMetadataFormats       = "noMetadataFormats"
	NoSetHierarchy          = "noSetHierarchy"
)

// Error is one OAI-PMH protocol error reported inside a response document.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "OAI-PMH error " + e.Code
	}
	return fmt.Sprintf("OAI-PMH error %s: %s", e.Code, e.Message)
}

// Errors is every error element of one response (a response may carry several).
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Has reports whether any of the errors has the code.
func (es Errors) Has(code string) bool {
	for _, e := range es {
		if e.Code == code {
			return true
		}
	}
	return false
}

// IsCode reports whether err carries the OAI-PMH error code anywhere in its chain.
func IsCode(err error, code string) bool {
	var es Errors
	if errors.As(err, &es) {
		return es.Has(code)
	}
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// RequestError is a failed request: it names the repository and the URL, and wraps
// the cause (an *HTTPError, a *FormatError, Errors, or a network error).
type RequestError struct {
	Repository string
	URL        string
	Err        error
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("repository %s: GET %s: %v", e.Repository, e.URL, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// HTTPError is a non-success HTTP status whose body was not an OAI-PMH document.
type HTTPError struct {
	Status     int
	StatusText string
	RetryAfter time.Duration // from a Retry-After header, 0 if none
	Snippet    string        // the first bytes of the body
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Status, e.StatusText)
	if e.Snippet != "" {
		s += fmt.Sprintf("; body starts %q", e.Snippet)
	}
	return s
}

// FormatError is a body that is not a well-formed OAI-PMH response: HTML, plain
// text, broken XML, illegal characters, a wrong root element or namespace.
type FormatError struct {
	Reason  string
	Snippet string // the first bytes of the body
	Err     error
}

func (e *FormatError) Error() string {
	s := "not a valid OAI-PMH response: " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Snippet != "" {
		s += fmt.Sprintf("; body starts %q", e.Snippet)
	}
	return s + " (check base_url points at the OAI-PMH endpoint, or report the broken page to the repository)"
}

func (e *FormatError) Unwrap() error { return e.Err }

// GuardError reports a resumption-token sequence that cannot make progress.
type GuardError struct{ Reason string }

func (e *GuardError) Error() string { return "resumption token sequence aborted: " + e.Reason }

func snippet(b []byte) string {
	const max = 160
	if len(b) > max {
		b = b[:max]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
