// Package ore builds OAI-ORE Resource Maps for harvested items: one Aggregation
// per OAI-PMH item, whose aggregated resources (ARs) are the gateway's copies of
// the item's metadata records, the landing page and the full-text and data files
// the metadata names.
//
// Rule ids in this package are items of the spec digests: ORE-nnn and GW-ORE-nn
// of ore-atom.md, RS-nnn of resourcesync.md, MD-nnn and D-PMH-nn of
// oaipmh-and-irdb.md. Each is cited once, where the rule is applied.
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
//     with one entry per AR, served at [Map.AltURI] as an alternate
//     representation.
//
// The two documents link to each other with rel="alternate". Neither, nor the
// HTTP response serving it, carries rel="resourcesync": that relation may only
// point to a Capability List that lists the linking resource (RS-044..RS-046),
// and Resource Maps are in none. Nothing stands in for it: "collection"
// (RFC 6573) would make the map a member of the Capability List, "up" a
// document in its hierarchy. The item's sets are the Aggregation's
// dcterms:isPartOf.
//
// # URI-R and URI-A
//
// Each document describes URI-A = its own URI-R (self link) + "#aggregation":
// ORE-015 requires it of the 0.2 feed, and the 1.0 entry, where any URI would
// do, follows the same rule, so a URI-A without its fragment is the URL of the
// document that describes it. The 0.2 feed names the 1.0 URI-A as another URI
// of the same Aggregation (ORE-016); that is the URI the ResourceSync documents
// give every list entry of the item as rel="collection" (GW-ORE-10). Alternate
// links name documents, never URI-As.
//
// Every URI written is made an IRI first: what RFC 3987 does not allow is
// percent-encoded, non-ASCII it allows is kept, and a value that still is not
// an absolute IRI is left out (see [Map.Validate]).
//
// # Identifiers
//
// Atom ids are UUIDv5 in [NamespaceUUID], stable across rebuilds (GW-ORE-02):
// the 0.2 feed's is [MapID], each 0.2 entry's [EntryID]. The 1.0 entry is
// another Atom document, so it has its own, [Entry10ID]; ORE 1.0's GRDDL reads
// it as the map's dcterms:isVersionOf, for which any stable IRI will do.
//
// # Extraction rules
//
// Only the root's direct children are read (and the children of jpcoar:file and
// jpcoar:creator): JPCOAR 2.x repeats dc:title, jpcoar:identifier and
// jpcoar:file inside jpcoar:catalog and jpcoar:relation to describe other
// things (D-PMH-11).
//
//   - Landing page: JPCOAR jpcoar:identifier[@identifierType="URI"], preferring
//     one on the repository's host; junii2 URI; otherwise (oai_dc and any other
//     root) the first http(s) dc:identifier, even when it looks like a file.
//     The harvest's classify step (bridge/harvest) asks [Landing] for it on
//     every new or changed record: a byte scanner that must agree with Extract.
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
//     extension (not .html, .php and other page extensions), other than the
//     landing page and DOI and Handle URLs.
//   - Sizes: a number with a unit, binary multiples as WEKO writes them ("18 KB"
//     beside "18432 B"). A bare number or "24 pages" is not a size.
//
// Extract scans tokens (encoding/xml RawToken, no tree), checks that end tags
// match, and stops at the first error, returning what it found until then.
package ore
