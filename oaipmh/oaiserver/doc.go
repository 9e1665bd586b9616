// Package oaiserver is a conformant OAI-PMH 2.0 data provider serving a
// deterministic synthetic repository. It backs the "rsbridge demo-upstream"
// command, crash tests, benchmarks and end-to-end tests that mutate the
// upstream and check that a harvester reproduces it.
//
// # Repository model
//
// Item i (0 <= i < Options.Records) initially has datestamp
// Start + i*Step (truncated to the repository granularity), content version
// 0, and is deleted when Options.DeletedEvery = k > 0 and i%k == k-1. With
// SetCount = n > 0, item i belongs to set "s<i%n>"; items with i%(2n) == 0
// also belong to the child set "s0:sub" and their header carries only the
// minimal setSpec "s0:sub". The sets offered are "s0", "s0:sub", "s1", ...,
// "s<n-1>", plus any set (and its ancestors) assigned with SetSets.
// SetCount 0 means the default (4); a negative SetCount means no sets.
//
// DeletedRecord "transient" behaves like "persistent" (deletions are always
// reported); with "no", deleted items vanish from lists, GetRecord,
// ListMetadataFormats and Item. Mutations on an index outside [0, Len()) are
// ignored; Update, Touch and SetSets leave a deleted item deleted; Restore of
// a live item does nothing.
//
// Metadata content depends only on (i, version): Touch keeps it
// byte-identical, Update bumps the version and changes it. The base items are
// never materialised; mutated and added items live in a small overlay sorted
// by (datestamp, index), so memory is O(page size + mutations) and every page
// costs O(page size + mutations).
//
// Lists are produced in two phases: first the unmutated base items in index
// order (their datestamps increase with the index, so from/until map to an
// index range by arithmetic), then the overlay items in (datestamp, index)
// order. The resumption token is the standard base64 encoding (with padding)
// of a small checksummed record holding the original arguments, the phase and
// the position; it always starts with "+/" and ends with "==", so it must be
// percent-encoded in a URL.
//
// # Namespace layout of responses
//
// The OAI-PMH root element declares, in this order:
//
//	xmlns="http://www.openarchives.org/OAI/2.0/"
//	xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
//	xmlns:dc="http://purl.org/dc/elements/1.1/"
//
// and, for ListRecords and GetRecord responses in the jpcoar_2.0 format,
// additionally
//
//	xmlns:dcterms="http://purl.org/dc/terms/"
//	xmlns:datacite="https://schema.datacite.org/meta/kernel-4/"
//	xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
//
// followed by its xsi:schemaLocation attribute. For jpcoar_2.0 the
// ListRecords / GetRecord element declares
// xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/". The
// record, header and metadata elements declare nothing. The child element of
// <metadata> declares exactly one namespace:
//
//	<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xsi:schemaLocation="...">
//	<jpcoar:jpcoar xmlns:dc="http://purl.org/dc/elements/1.1/" xsi:schemaLocation="...">
//
// (the jpcoar root re-declares dc, which is also declared on the OAI-PMH
// root, and relies on the jpcoar prefix declared on ListRecords/GetRecord).
//
// # Standalone metadata (Item.Metadata), byte for byte
//
// Let E be the child element of <metadata> as served, and B its exact bytes
// from the '<' of its start tag through the '>' of its end tag. Item.Metadata
// is B with a sequence D of namespace declarations inserted immediately after
// the qualified element name in the start tag (that is, right after
// "<oai_dc:dc" or "<jpcoar:jpcoar", before E's own attributes and the
// whitespace preceding them). Everything else in B, including E's own
// namespace declarations, attributes and whitespace, is unchanged.
//
// D is built as follows:
//
//  1. Walk the ancestors of E from the outermost (OAI-PMH) to the innermost
//     (metadata), and within each ancestor take its namespace declaration
//     attributes (xmlns="..." and xmlns:p="...") in document order. The
//     default namespace declaration counts as a declaration of the empty
//     prefix and is included.
//  2. If a prefix is declared on more than one ancestor, keep only the
//     innermost declaration, at its own position in that walk.
//  3. Drop every declaration whose prefix (or the default namespace) E
//     itself declares.
//  4. Drop a default namespace undeclaration (xmlns=""). The reserved xml
//     prefix is never declared.
//  5. Serialise each remaining declaration as a single space, then xmlns or
//     xmlns:p, then =", the namespace URI, and ". (None of the URIs used
//     needs escaping; if one did, it would be escaped as an attribute value:
//     &amp; &lt; &gt; &quot;.)
//
// With the layout above this gives exactly:
//
//	oai_dc:     <oai_dc:dc xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd">
//	jpcoar_2.0: <jpcoar:jpcoar xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:datacite="https://schema.datacite.org/meta/kernel-4/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/2.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xsi:schemaLocation="https://github.com/JPCOAR/schema/blob/master/2.0/ https://github.com/JPCOAR/schema/blob/master/2.0/jpcoar_scm.xsd">
//
// The xsi prefix needed by xsi:schemaLocation is therefore always carried
// over from the root. Metadata never contains empty-element tags, comments,
// CDATA sections or processing instructions; text is escaped with &amp;,
// &lt;, &gt; and &apos; only.
//
// # Hostile items
//
// With Options.Hostile set, chosen items are served with one fault each (see
// Hostility): invalid UTF-8 or a reference to a forbidden character in the
// metadata text, an unparsable datestamp, a mismatched end tag, an identifier
// with an invalid byte or of 70,000 bytes, or oversized metadata. The rest of
// every page stays valid, so a harvester's recovery can be tested end to end.
// Such items break the byte-for-byte rule above on purpose; Item reports the
// fault and returns what a correct harvester stores.
package oaiserver
