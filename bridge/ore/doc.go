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
// (ORE-017). Both carry <link rel="resourcesync"> to the ResourceSync Capability
// List (feed level only in 0.2: ORE-032 allows no other links in entries).
//
// # URI-R and URI-A across the two documents
//
// There is one Aggregation, URI-A = (1.0 URI-R) + "#aggregation" ([Map.Aggregation]),
// and both documents describe it: the 1.0 entry's ore:describes link and the 0.2
// feed's describes link carry the same URI-A. Each document's self link names the
// URL where that document is served: [Map.URI] for 1.0, [Map.AltURI] for 0.2.
//
// This deviates from the letter of ORE-015 for the 0.2 document, which wants
// URI-A = (its own URI-R) + "#aggregation". The alternative, describes =
// AltURI#aggregation, would mint a second Aggregation URI for the same item, and
// the ResourceSync wiring (collection links, GW-ORE-10/11) and ORE 1.0 both need a
// single URI-A. Pointing the 0.2 self link at the 1.0 URL instead would misstate
// where the 0.2 document is. ORE 1.0 lets URI-A be any URI, and the 0.2 profile is
// the superseded alpha (D-ORE-01), so the 1.0 rule wins and the 0.2 deviation is
// recorded here.
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
