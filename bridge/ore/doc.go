// Package ore builds OAI-ORE Resource Maps for harvested items: one Aggregation
// per OAI-PMH item, whose aggregated resources (ARs) are the gateway's copies of
// the item's metadata records, the landing page and the full-text and data files
// the metadata names.
//
// # One model, two serialisations
//
// [Extract] reads what one stored metadata record (JPCOAR 1.x/2.x, junii2, oai_dc
// or any Dublin Core based format) says about the object; [Assemble] merges the
// records of one item into a [Map]; the Map is then written as
//
//   - ORE 1.0 Atom ([Map.WriteORE10]): an Atom Entry Document, the current ORE
//     serialisation, served at the Resource Map URL [Map.URI];
//   - the ORE 0.2 Resource Map Profile of Atom ([Map.WriteORE02]): an Atom feed
//     with one entry per AR (rules ORE-006..ORE-036 of the project's digest),
//     served at [Map.AltURI] as an alternate representation.
//
// The 1.0 entry links to the 0.2 feed with
// <link rel="alternate" type="application/atom+xml">, and the 0.2 feed links back
// to the 1.0 entry with a feed-level alternate link, which has no ORE meaning
// (ORE-017). Neither document, nor the HTTP response serving it, carries a
// rel="resourcesync" link: that relation may only point to a Capability List
// that lists the linking resource and whose capabilities all cover it (RS-044..
// RS-046), and Resource Maps are listed in no Capability List. No other
// relation is put in its place: "collection" (RFC 6573) would make the Resource
// Map a member of the Capability List and "up" a document in its hierarchy,
// and it is neither. The sets the item is in are the Aggregation's
// dcterms:isPartOf.
//
// # URI-R and URI-A across the two documents
//
// Each document describes URI-A = its own URI-R (its self link) + "#aggregation":
//
//   - the 1.0 entry: self [Map.URI], ore:describes [Map.Aggregation] =
//     URI + "#aggregation";
//   - the 0.2 feed: self [Map.AltURI], describes AltURI + "#aggregation", as
//     ORE-015 requires.
//
// ORE 1.0 lets URI-A be any URI; the gateway applies the same rule to it, so in
// both documents the self and describes links agree, and a URI-A without its
// fragment is the URL of the document that describes it. The two URI-As name the same Aggregation of the same item, and the 0.2 feed
// says so with a related link (ore:analogousTo, "another URI by which the
// Aggregation is known", ORE-016) to the 1.0 URI-A. That one is the URI the
// ResourceSync documents name: every list entry of the item carries it as
// rel="collection" (GW-ORE-10), and the 1.0 document is the one served at the
// Resource Map URL. The alternate links between the two documents name
// documents (URI-Rs), never URI-As.
//
// Every URI written (hrefs, rdf:about, rdf:resource, author uri, the URI-valued
// extension elements of the 0.2 feed, rights) is made an IRI first: characters
// RFC 3987 does not allow are percent-encoded, non-ASCII characters it allows
// are kept, and a value that still is not an absolute IRI is left out (see
// [Map.Validate]).
//
// # Identifiers
//
// The 0.2 feed's atom:id is [Map.ID], UUIDv5 of repo + "\n" + OAI identifier
// ([MapID], GW-ORE-02), and each 0.2 entry's id is UUIDv5 of OAI identifier +
// "\n" + URI-AR ([EntryID]), in the fixed [NamespaceUUID]. The 1.0 entry is
// another Atom document, an entry where the other is a feed, so it gets its own
// id, [Entry10ID]: UUIDv5 of Map.ID + "\nore-1.0". Atom ids stay unique, and all
// are stable across rebuilds. (ORE 1.0's GRDDL reads the entry id as the Resource
// Map's dcterms:isVersionOf, so any stable IRI will do.)
//
// # Extraction rules
//
// Only the root element's direct children are read (and the children of the
// blocks that need them: jpcoar:file, jpcoar:creator): JPCOAR 2.x repeats
// dc:title, jpcoar:identifier and jpcoar:file inside jpcoar:catalog and
// jpcoar:relation to describe other things (D-PMH-11). The landing page follows
// bridge/landing.go exactly: JPCOAR jpcoar:identifier[@identifierType="URI"],
// preferring one on the repository's host; junii2 URI; otherwise (oai_dc and any
// other root) the first http(s) dc:identifier, even when it looks like a file.
//
//   - DOIs: JPCOAR identifier[@identifierType="DOI"] and identifierRegistration
//     of type JaLC, Crossref or DataCite; junii2 selfDOI (not doi, which names the
//     publisher's version); Dublin Core identifiers written doi:…, info:doi/… or
//     as a doi.org / dx.doi.org URL. A DOI must read 10.{digits[.digits]}/{suffix};
//     it is percent-decoded, deduplicated case-insensitively (MD-002) and
//     published as https://doi.org/{doi}.
//   - Handles: JPCOAR identifier[@identifierType="HDL"] (URL, hdl:, info:hdl/ or
//     bare prefix/suffix); in Dublin Core also hdl.handle.net URLs, hdl: and
//     info:hdl/ identifiers. Published as https://hdl.handle.net/{handle}.
//   - Files: JPCOAR jpcoar:file/jpcoar:URI with jpcoar:mimeType, the first
//     jpcoar:extent (or datacite:size) that parses as a size, @label (else the
//     last path segment) and @objectType; junii2 fullTextURL (objectType
//     fulltext); Dublin Core http(s) identifiers whose path ends in a known file
//     extension (documents, data, archives, images, audio, video; not .html,
//     .php, .jsp and other page extensions), other than the landing page and
//     other than DOI and Handle URLs.
//   - Sizes: a number with a unit, binary multiples as WEKO writes them ("18 KB"
//     beside "18432 B"): B/byte(s), K/KB/KiB = 1024, M/MB/MiB = 1024², G, T. A
//     bare number or "24 pages" is not a size.
//
// Extract scans tokens (encoding/xml RawToken, no tree), checks that end tags
// match, and stops at the first error, returning what it found until then.
package ore
