package crosswalk

// source is J2M-029/034..039 with GW-J2J-09/14 and J2N-04/05. ISSNs come
// first, de-duplicated, typed ISSN (J2L-10), then NCID when it names the
// container. volume and issue are copied verbatim.
//
// Changed from GW-J2J-09: spage and epage are copied only when they are
// positive integers. [XSD2] types jpcoar:pageStart and jpcoar:pageEnd as
// xs:positiveInteger, so a verbatim `iii` or `A12` would make the derived
// record invalid; such values are dropped with page-not-integer.
func (c *conv) source() {
	seen := map[string]bool{}
	for _, f := range c.src.get("issn") {
		issn, ok, sum := normISSN(f.value)
		switch {
		case !ok:
			c.warnf("issn-invalid", f.value, f.path(), "not an ISSN (J2N-04); dropped")
			continue
		case !sum:
			c.warnf("issn-checksum", issn, f.path(), "ISSN check digit does not match; kept")
		}
		if !seen[issn] {
			seen[issn] = true
			c.rec.sourceIDs = append(c.rec.sourceIDs, typed{"ISSN", issn})
		}
	}
	if c.ncidInSource() {
		for _, f := range c.src.get("NCID") {
			ncid, ok := normNCID(f.value)
			if !ok {
				c.warnf("ncid-invalid", f.value, f.path(), "not an NCID (J2N-05); dropped")
				continue
			}
			if !seen[ncid] {
				seen[ncid] = true
				c.rec.sourceIDs = append(c.rec.sourceIDs, typed{"NCID", ncid})
			}
		}
	}
	if f := c.src.first("jtitle"); f != nil {
		c.rec.sourceTitle = &text{c.textLang(f), f.value}
	}
	if f := c.src.first("volume"); f != nil {
		c.rec.volume = f.value
	}
	if f := c.src.first("issue"); f != nil {
		c.rec.issue = f.value
	}
	c.rec.pageStart = c.page("spage")
	c.rec.pageEnd = c.page("epage")
}

func (c *conv) page(name string) string {
	f := c.src.first(name)
	if f == nil {
		return ""
	}
	if !isPositiveInteger(f.value) {
		c.warnf("page-not-integer", f.value, f.path(), "JPCOAR page numbers are positive integers; dropped")
		return ""
	}
	return f.value
}

// degree is J2M-040..043, J2N-13 and GW-J2J-15: grantid → dissertation
// number in the recommended 甲第n号 form, its 5-digit institution code →
// degreeGrantor/nameIdentifier kakenhi (a degreeGrantor is created even
// without grantor); dateofgranted must be a full date ([NII13]).
func (c *conv) degree() {
	kakenhi := ""
	if f := c.src.first("grantid"); f != nil {
		num, code, ok := normGrantID(f.value)
		if !ok {
			c.warnf("grantid-format", f.value, f.path(), "grantid in neither junii2 3.0 nor 3.1 form; kept verbatim")
		}
		c.rec.dissertationNumber, kakenhi = num, code
	}
	if f := c.src.first("degreename"); f != nil {
		c.rec.degreeName = &text{c.textLang(f), f.value}
	}
	if f := c.src.first("dateofgranted"); f != nil {
		if d, ok := normDate(f.value); ok && len(d) == len("2006-01-02") {
			c.rec.dateGranted = d
		} else {
			c.warnf("dategranted-invalid", f.value, f.path(), "dateofgranted is not YYYY-MM-DD; dropped")
		}
	}
	g := &grantor{kakenhi: kakenhi}
	if f := c.src.first("grantor"); f != nil {
		g.name = &text{c.textLang(f), f.value}
	}
	if g.kakenhi != "" || g.name != nil {
		c.rec.grantor = g
	}
}

// files is J2M-044/045 and GW-J2J-16: one jpcoar:file per fullTextURL with
// objectType fulltext (J2L-13); mimeType paired by position when the counts
// of valid formats and URLs agree, copied when there is exactly one format,
// otherwise absent (format-unpaired).
func (c *conv) files() {
	var urls []string
	for _, f := range c.src.get("fullTextURL") {
		if !isAbsoluteURI(f.value) {
			c.warnf("uri-not-absolute", f.value, f.path(), "fullTextURL is not an absolute URI; dropped")
			continue
		}
		urls = append(urls, f.value)
	}
	var formats []string
	for _, f := range c.src.get("format") {
		if !isIMT(f.value) {
			c.warnf("format-not-imt", f.value, f.path(), "format is not an Internet media type (J2N-15); dropped")
			continue
		}
		formats = append(formats, f.value)
	}
	if len(urls) == 0 {
		if len(formats) > 0 {
			c.warnf("format-without-file", "", "format", "format without fullTextURL dropped (GW-J2J-16)")
		}
		return
	}
	paired := len(formats) == len(urls)
	if !paired && len(formats) > 1 {
		c.warnf("format-unpaired", "", "format", "formats and fullTextURLs cannot be paired; no mimeType")
	}
	for i, u := range urls {
		f := file{uri: u}
		switch {
		case paired:
			f.mime = formats[i]
		case len(formats) == 1:
			f.mime = formats[0]
		}
		c.rec.files = append(c.rec.files, f)
	}
}

// irdbConditions reports the IRDB record errors the gateway derives anyway
// (GW-J2J-03): JaLC DOI conditions (J2V-08), ETD conditions (J2V-09) and a
// thesis without creator ([IRDB-J], J2V-04).
func (c *conv) irdbConditions() {
	for _, is := range irdbConditions(c.src) {
		c.irdbError(is)
	}
	if c.rec.typ.label != "" && thesisTypes[c.rec.typ.label] && len(c.rec.creators) == 0 {
		c.irdbError(Issue{Level: LevelRecord, Code: "irdb-record-error", Arg: "thesis-without-creator",
			Path: "creator", Msg: "IRDB rejects a thesis without jpcoar:creator (J2V-04)"})
	}
}
