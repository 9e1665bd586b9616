package oaipmh

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Namespace is the OAI-PMH 2.0 namespace.
const Namespace = "http://www.openarchives.org/OAI/2.0/"

// Header is a record header.
type Header struct {
	Identifier   string    // "" when missing, or when unusable (then Err says why)
	Datestamp    time.Time // zero when DatestampRaw is missing or did not parse (and for 0001-01-01T00:00:00Z)
	DatestampRaw string
	SetSpecs     []string
	Deleted      bool
	// Err is set on a ListIdentifiers header that cannot be used (see
	// RecordError); the fields above are then as far as they were read, and
	// Identifier is empty if the identifier itself is the problem. Records of
	// ListRecords and GetRecord report problems in Record.Err instead.
	Err *RecordError
}

// Record is one harvested record. Metadata is the child of <metadata> as a
// standalone XML document: the original bytes, with every namespace declaration in
// scope at <metadata> (from the OAI-PMH root, the list element, record or metadata)
// added to its start tag unless the element declares that prefix itself. It is nil
// for deleted records.
type Record struct {
	Header            Header
	Metadata          []byte
	MetadataNamespace string // namespace URI of the metadata root element
	// Err is non-nil when the record is quarantined: it could not be used (see
	// RecordError). Metadata is then nil and Header is as far as it was read, with
	// an empty Identifier if the identifier itself is the problem.
	Err *RecordError
	// Repairs lists the safe repairs made to the record's bytes, one line per
	// kind with its count, e.g. "3 invalid UTF-8 sequences replaced by U+FFFD".
	// When it is not empty, Metadata differs from what the repository sent.
	Repairs []string
	// LongIdentifier is the whole identifier of a record quarantined for its
	// length alone (max_identifier_bytes): with a higher limit, GetRecord of
	// it can succeed. "" otherwise.
	LongIdentifier string
}

// RecordError describes a record (or a ListIdentifiers header) that was
// quarantined: a problem confined to it — bad bytes in the header, malformed XML,
// an identifier too long to be a key, a record larger than MaxRecordBytes — so the
// rest of the page was still harvested.
type RecordError struct {
	Identifier string // as far as it was read ("" if unknown), shortened for messages
	Offset     int64  // byte offset of the record in the (decompressed) body
	Reason     string // what is wrong, e.g. "invalid UTF-8 in the identifier"
}

// Error names the record, says why it was skipped and what can be done.
func (e *RecordError) Error() string {
	what := "record"
	if e.Identifier != "" {
		what = fmt.Sprintf("record %q", e.Identifier)
	}
	hint := "ask the repository to fix the record"
	switch {
	case strings.Contains(e.Reason, "max_record_bytes"):
		hint = "raise max_record_bytes to harvest it"
	case strings.Contains(e.Reason, "max_identifier_bytes"):
		hint = "ask the repository to shorten it; max_identifier_bytes can be raised up to 30000"
	}
	return fmt.Sprintf("%s at byte %d of the response skipped: %s (%s)", what, e.Offset, e.Reason, hint)
}

// readableID shortens an identifier for messages.
func readableID(s string) string {
	const max = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// ResumptionToken is the flow-control element of a list response.
type ResumptionToken struct {
	Value            string
	Cursor           int64 // -1 when absent
	CompleteListSize int64 // -1 when absent
	ExpirationDate   time.Time
}
