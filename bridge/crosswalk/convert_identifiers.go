package crosswalk

import "strings"

// identifiers is J2M-021/022/047, J2N-09 and GW-J2J-13/19. Order: the
// selfDOI as a DOI identifier first (the JPCOAR samples list the DOI first,
// T-J2J-09), then every URI (GW-J2J-05), then IR_URI (GW-J2J-19). A DOI-type
// URI is rewritten to https://doi.org/<doi> so that it meets [JCV]'s DOI
// pattern, and values are de-duplicated (J2N-09). No identifier at all →
// quarantine identifier-missing (GW-J2J-01); identifiers without URI →
// irdb-record-error:uri-missing.
func (c *conv) identifiers() {
	seen := map[string]bool{}
	add := func(typ, v string) {
		if !seen[v] {
			seen[v] = true
			c.rec.identifiers = append(c.rec.identifiers, typed{typ, v})
		}
	}
	if f := c.src.first("selfDOI"); f != nil {
		if doi, ok := normDOI(f.value); ok {
			add("DOI", doiURL(doi))
			c.registration(f, doi)
		} else {
			c.warnf("doi-invalid", f.value, f.path(), "not a DOI (J2N-02); dropped")
		}
	}
	for _, name := range []string{"URI", "IR_URI"} {
		for _, f := range c.src.get(name) {
			typ, ok := uriType(f.value)
			if !ok {
				c.warnf("uri-not-absolute", f.value, f.path(), "identifier is not an absolute URI (J2N-09); dropped")
				continue
			}
			v := f.value
			if typ == "DOI" {
				if doi, ok := normDOI(v); ok {
					v = doiURL(doi)
				} else {
					typ = "URI"
				}
			}
			add(typ, v)
		}
	}
	if len(c.rec.identifiers) == 0 {
		c.quarantine("identifier-missing", "", "URI", "no usable URI, IR_URI or selfDOI for jpcoar:identifier (GW-J2J-01)")
		return
	}
	if !c.src.has("URI") {
		c.irdbError(Issue{Level: LevelRecord, Code: "irdb-record-error", Arg: "uri-missing", Path: "URI",
			Msg: "URI is missing: IRDB rejects the record (J2V-06), the gateway derives it from selfDOI or IR_URI"})
	}
}

// registration is J2M-022/023 and GW-J2J-13: identifierRegistration only
// with a known @ra, never a silent JaLC default.
func (c *conv) registration(f *field, doi string) {
	if !f.hasRA || f.ra == "" {
		c.warnf("selfdoi-ra-missing", "", f.path()+"/@ra", "selfDOI without ra: no identifierRegistration")
		return
	}
	t, ok := registrationAgencies[strings.ToLower(f.ra)]
	if !ok {
		c.warnf("selfdoi-ra-unknown", f.ra, f.path()+"/@ra", "unknown registration agency: no identifierRegistration")
		return
	}
	c.rec.registration = &typed{t, doi}
}

// ncidInSource is GW-J2J-14: the NCID names the container (sourceIdentifier,
// [X2 r69] N) for serial contributions, and the item itself otherwise.
func (c *conv) ncidInSource() bool {
	for _, n := range []string{"jtitle", "issn", "volume", "issue"} {
		if c.src.has(n) {
			return true
		}
	}
	switch c.niiTy {
	case "Journal Article", "Departmental Bulletin Paper", "Article", "Conference Paper":
		return true
	}
	return false
}

// relations is J2M-024..031 and J2N-12 in document order. doi gets the
// relationType of GW-J2J-12; pmid, NAID, ichushi, isbn and an item NCID
// get none; the 12 relation elements give their own name.
func (c *conv) relations() {
	ncidRel := !c.ncidInSource()
	done := map[string]bool{}
	for i := range c.src.fields {
		f := &c.src.fields[i]
		if singleElements[f.name] {
			if done[f.name] {
				continue
			}
			done[f.name] = true
		}
		switch {
		case f.name == "doi":
			c.relatedDOI(f)
		case f.name == "pmid":
			c.related(f, "PMID", "pmid-invalid", stripDigits, "info:pmid/")
		case f.name == "NAID":
			if c.related(f, "NAID", "naid-invalid", stripDigits, "http://ci.nii.ac.jp/naid/", "https://ci.nii.ac.jp/naid/") {
				c.warnf("deprecated-identifier", "NAID", f.path(), "NAID is deprecated in JPCOAR 2.0; no offline CRID (J2L-16)")
			}
		case f.name == "ichushi":
			c.related(f, "ICHUSHI", "ichushi-invalid", func(v string, _ ...string) (string, bool) { return normIchushi(v) })
		case f.name == "isbn":
			c.related(f, "ISBN", "isbn-invalid", func(v string, _ ...string) (string, bool) { return normISBN(v) })
		case f.name == "NCID" && ncidRel:
			c.related(f, "NCID", "ncid-invalid", func(v string, _ ...string) (string, bool) { return normNCID(v) })
		case f.name == "relation" || relationElements[f.name]:
			c.relationValue(f)
		}
	}
}

func (c *conv) relatedDOI(f *field) {
	doi, ok := normDOI(f.value)
	if !ok {
		c.warnf("doi-invalid", f.value, f.path(), "not a DOI (J2N-02); dropped")
		return
	}
	rt := ""
	switch c.tv {
	case "author":
		rt = "isVersionOf"
	case "publisher", "etd":
		rt = "isIdenticalTo"
	}
	c.rec.relations = append(c.rec.relations, relation{relType: rt, id: &typed{"DOI", doiURL(doi)}})
}

// related adds a relatedIdentifier without relationType, or warns with
// code and drops the value. It reports whether the value was kept.
func (c *conv) related(f *field, typ, code string, norm func(string, ...string) (string, bool), prefixes ...string) bool {
	v, ok := norm(f.value, prefixes...)
	if !ok {
		c.warnf(code, f.value, f.path(), "invalid "+typ+"; dropped")
		return false
	}
	c.rec.relations = append(c.rec.relations, relation{id: &typed{typ, v}})
	return true
}

// relationValue is J2N-12: a DOI form → DOI, a handle → HDL, another
// absolute http(s) URL → URI, anything else → relatedTitle with xml:lang.
func (c *conv) relationValue(f *field) {
	rt := ""
	if f.name != "relation" {
		rt = f.name
	}
	v := f.value
	hasDOIPrefix := false
	for _, p := range doiPrefixes {
		if _, ok := cutPrefixFold(v, p); ok {
			hasDOIPrefix = true
			break
		}
	}
	if doi, ok := normDOI(v); ok && hasDOIPrefix {
		c.rec.relations = append(c.rec.relations, relation{relType: rt, id: &typed{"DOI", doiURL(doi)}})
		return
	}
	if typ, ok := uriType(v); ok && (strings.HasPrefix(strings.ToLower(v), "http://") || strings.HasPrefix(strings.ToLower(v), "https://")) {
		if typ == "DOI" {
			typ = "URI" // a doi.org URL that is not a valid DOI
		}
		c.rec.relations = append(c.rec.relations, relation{relType: rt, id: &typed{typ, v}})
		return
	}
	c.rec.relations = append(c.rec.relations, relation{relType: rt, title: &text{c.textLang(f), v}})
}

// coverage is J2M-032/033: coverage, temporal and NIItemporal →
// dcterms:temporal (J2L-21); spatial and NIIspatial → one
// datacite:geoLocation each, without xml:lang (the row's lang is False).
func (c *conv) coverage() {
	for i := range c.src.fields {
		f := &c.src.fields[i]
		switch f.name {
		case "coverage", "temporal", "NIItemporal":
			c.rec.temporal = append(c.rec.temporal, text{c.textLang(f), f.value})
		case "spatial", "NIIspatial":
			c.rec.places = append(c.rec.places, f.value)
		}
	}
}
