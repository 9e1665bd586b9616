// Package oaipmh is an OAI-PMH 2.0 harvesting client: requests with retries,
// backoff and Retry-After, a streaming record decoder that never holds a page in
// memory, typed protocol errors, and resumption-token guards. It knows nothing of
// storage.
//
// # One bad record costs one record
//
// A problem confined to one record (one header in ListIdentifiers) does not fail
// the page: the record reaches the handler with Record.Err (Header.Err) set — it
// is quarantined — and the page goes on with the next record, the resumption
// token and the rest of the list. Page.Quarantined counts them. A quarantined
// record has no Metadata; its Header holds what was read before the problem, and
// an empty Identifier when the identifier itself is the problem. The
// RecordError names the identifier (shortened for messages), the record's byte
// offset in the decompressed body and the reason. GetRecord of a quarantined
// record is an error that wraps the RecordError.
//
// Records are quarantined for: malformed XML anywhere in the record (mismatched
// or unclosed tags, an undefined entity such as &nbsp;, an unescaped '<' or '&',
// a stray </record>, a <!DOCTYPE> or other declaration, which XML allows only
// before the root element); a record larger than MaxRecordBytes (16 MiB by
// default); more than 1,000 nested elements, more than 1,000 attributes on one
// element or more than 1,000 setSpecs (what a decoder builds from those is not
// bounded by their size); an identifier or setSpec longer than
// MaxIdentifierBytes (8,192 bytes by default: Badger keys are limited to 65,000
// bytes and rsbridge's keys hold repository, prefix, setSpec and identifier);
// and any byte problem in the header, below.
//
// Problems outside the records — a broken envelope, a truncated body, HTML
// instead of XML, a bad resumptionToken element, stray end tags between records,
// a token (text, tag, comment) outside the records larger than MaxRecordBytes —
// still fail the whole page with a FormatError that shows the first bytes of the
// body: such a page cannot be trusted. Text between records is ignored, as
// before, now with a page warning. The one exception is what a stray </record>
// inside a record leaves behind (text and end tags up to the record's real end
// tag): it is skipped with a page warning, and the record is quarantined.
//
// # Repairs
//
// Some byte problems have a repair that keeps the text readable and the XML
// well-formed. They are made in the metadata only, and never silently: every
// repaired record carries Record.Repairs ("3 invalid UTF-8 sequences replaced by
// U+FFFD", one line per kind with its count) and Page.Repaired counts them,
// because the stored bytes, and the hashes published for them, then differ from
// what the repository sent.
//
//   - Invalid UTF-8 (stray bytes such as FF FE, overlong forms such as C0 80,
//     UTF-8-encoded surrogates such as ED A0 80): each invalid sequence (in the
//     sense of utf8.DecodeRune) becomes U+FFFD.
//   - The non-characters U+FFFE and U+FFFF, which XML forbids: U+FFFD.
//   - Numeric character references to characters XML forbids (&#1;, &#xFFFE;,
//     &#xD800;, &#x110000;): &#xFFFD;. They are replaced rather than quarantined
//     because they are the escaped form of the control characters below (a
//     serialiser escaped a vertical tab it should have dropped): quarantining
//     would lose a whole record over one invisible character, and the
//     replacement is as visible and as safe as the one for invalid UTF-8.
//     References inside comments, CDATA sections and processing instructions
//     are text, not references, and are left alone.
//   - C0 control characters other than tab, LF and CR are removed, as before
//     (Page.Stripped counts them in the whole body); in a record they are now
//     also reported in Repairs.
//
// In the header the same problems are not repaired: an identifier, datestamp or
// setSpec with invalid UTF-8, a non-character or such a reference quarantines the
// record, since a repaired identifier would be a different identifier. Removed
// control characters are the exception kept from before: they are reported in
// Repairs as "removed from the header" (ListIdentifiers headers have no Repairs;
// Page.Stripped still counts them). Bytes outside the header and the metadata
// (in <about>) are not stored and not reported.
//
// # Datestamps
//
// A usable record or header whose datestamp is missing or does not parse has a
// zero Datestamp, keeps the text in DatestampRaw, and is counted in
// Page.BadDatestamps. ParseDatestamp reads both OAI granularities for every year
// 0001-9999 (and RFC 3339 with fractions or offsets, and a zone-less form); note
// that 0001-01-01T00:00:00Z parses to the zero time.Time.
//
// # Memory
//
// The decoder keeps one record at a time: its bytes (at most MaxRecordBytes), a
// repaired copy when it needs repair, the tokenizer's buffers for decoded text
// and attribute values (together at most about the record's size) and the
// standalone metadata, so about 4 × MaxRecordBytes at worst, whatever the
// repository sends; a larger record is counted, not kept, and quarantined.
// MaxBodyBytes caps the decompressed body, so a gzip bomb stops while streaming.
// How the decoder finds record boundaries is explained in scan.go.
package oaipmh
