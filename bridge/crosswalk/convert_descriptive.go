package crosswalk

// titles is J2M-001/002 with GW-J2J-05 and GW-J2J-07. The first title is
// dc:title; further titles join the alternatives in document order. An
// alternative in a language no dc:title has yet is promoted to dc:title
// ([X2 r3] N), so each language has one title ([IRDB-J], [JCV]). Promotion
// is decided in two passes: full languages first, then readings (ja-Kana,
// ja-Latn), so a reading listed before its ja title is still promoted; the
// digest's single pass would leave it an alternative. Promoted titles are
// written in document order.
//
// A main title detected (not declared) as Katakana-only is tagged ja, not
// ja-Kana: it is the title itself (e.g. a loanword title), and a ja-Kana
// title without a ja title is an IRDB record error (J2V-04).
func (c *conv) titles() {
	ts := c.src.get("title")
	if len(ts) == 0 {
		c.quarantine("title-missing", "", "title", "title is required (J2V-06, GW-J2J-01)")
		return
	}
	main := ts[0]
	l := c.lang(main)
	if !main.hasLang && l == "ja-Kana" {
		l = "ja"
	}
	c.rec.titles = append(c.rec.titles, text{l, main.value})
	var cands []*field
	for i := range c.src.fields {
		f := &c.src.fields[i]
		if (f.name == "title" && f != main) || f.name == "alternative" {
			cands = append(cands, f)
		}
	}
	langs := make([]string, len(cands))
	for i, f := range cands {
		langs[i] = c.lang(f)
	}
	promote := make([]bool, len(cands))
	if !c.opt.StrictXLSXTitles {
		used := map[string]bool{l: true}
		for pass := 0; pass < 2; pass++ {
			for i, cl := range langs {
				reading := cl == "ja-Kana" || cl == "ja-Latn"
				if cl == "" || used[cl] || reading != (pass == 1) || (reading && !used["ja"]) {
					continue
				}
				used[cl], promote[i] = true, true
			}
		}
	}
	for i, f := range cands {
		if promote[i] {
			c.rec.titles = append(c.rec.titles, text{langs[i], f.value})
		} else {
			c.rec.alternatives = append(c.rec.alternatives, text{langs[i], f.value})
		}
	}
}

// people is J2M-003..006 with GW-J2J-08: one jpcoar:creator (or
// contributor) per junii2 element, @id as an NRID nameIdentifier (J2N-10),
// and a Katakana reading without @id merged into the nearest preceding
// person that has a ja name and no reading yet.
//
// Changed from the digest: an orphan reading (no such person) whose
// language was detected, not declared, is tagged ja rather than ja-Kana. A
// Katakana-only name with no kanji form is usually a foreign name written
// in Katakana, which is its Japanese form; a lone ja-Kana name is a [JCV]
// error. The warning kana-orphan stays. (Each person has one name before
// merging, so the candidate hosts form a stack: linear time.)
func (c *conv) people(elem string) []person {
	var out []person
	var hosts []int // persons with a ja name and no reading yet, in order
	for _, f := range c.src.get(elem) {
		l := c.lang(f)
		var ids []nameID
		if f.hasID {
			if d, ok := normNRID(f.id); ok {
				ids = append(ids, nameID{"NRID", nridURI(d), d})
				c.warnf("deprecated-identifier", "NRID", f.path()+"/@id", "NRID is deprecated in JPCOAR 2.0 but the only lossless choice (D-J2J-14)")
			} else {
				c.warnf("creator-id-unrecognised", f.id, f.path()+"/@id", "id is not a researcher-resolver URI; dropped")
			}
		}
		if l == "ja-Kana" && !f.hasID {
			if n := len(hosts); n > 0 {
				p := &out[hosts[n-1]]
				p.names = append(p.names, text{l, f.value})
				hosts = hosts[:n-1]
				continue
			}
			c.warnf("kana-orphan", "", f.path(), "Katakana name with no preceding ja name to attach to")
			if !f.hasLang {
				l = "ja"
			}
		}
		if l == "ja" {
			hosts = append(hosts, len(out))
		}
		out = append(out, person{ids: ids, names: []text{{l, f.value}}})
	}
	return out
}

// rights is J2M-007: dc:rights with xml:lang, no rdf:resource (J2L-24).
func (c *conv) rights() {
	for _, f := range c.src.get("rights") {
		c.rec.rights = append(c.rec.rights, text{c.textLang(f), f.value})
	}
}

// subjects is J2M-008..010 in document order: subject and NIIsubject with
// scheme Other ([X2 r43] N; J2L-08), classification codes with their own
// scheme and no xml:lang, headings with xml:lang. Invalid codes are dropped
// (J2N-16, J2V-12 item error).
func (c *conv) subjects() {
	for i := range c.src.fields {
		f := &c.src.fields[i]
		switch heading, isClass := classElements[f.name]; {
		case f.name == "subject" || f.name == "NIIsubject":
			c.rec.subjects = append(c.rec.subjects, subject{"Other", text{c.textLang(f), f.value}})
		case isClass && heading:
			c.rec.subjects = append(c.rec.subjects, subject{f.name, text{c.textLang(f), f.value}})
		case isClass && validClass(f.name, f.value):
			c.rec.subjects = append(c.rec.subjects, subject{f.name, text{"", f.value}})
		case isClass:
			c.warnf("classification-invalid", f.value, f.path(), "classification code with characters the scheme does not allow; dropped")
		}
	}
}

// descriptions is J2M-011..014 and GW-J2J-10: description, identifier,
// source and type, in that order, as descriptionType Other (J2L-06, J2L-07).
func (c *conv) descriptions() {
	for _, name := range []string{"description", "identifier", "source", "type"} {
		typ := "Other"
		if name == "description" && c.opt.DescriptionAsAbstract {
			typ = "Abstract"
		}
		for _, f := range c.src.get(name) {
			c.rec.descriptions = append(c.rec.descriptions, description{typ, text{c.textLang(f), f.value}})
		}
	}
}

// publishers is J2M-015; publisher/@id has no JPCOAR place (J2L-05).
func (c *conv) publishers() {
	for _, f := range c.src.get("publisher") {
		if f.hasID {
			c.warnf("publisher-id-dropped", f.id, f.path()+"/@id", "dc:publisher has no name identifier (J2L-05)")
		}
		c.rec.publishers = append(c.rec.publishers, text{c.textLang(f), f.value})
	}
}

// dates is J2M-016/017 with GW-J2J-11 and J2N-08. dateofissued is Issued;
// a date is Issued when no valid dateofissued exists, else Created.
// Refined: only the first such date becomes Issued and later ones Created,
// so a record never carries two Issued dates; a date equal to the Issued
// value and exact duplicates are not repeated. Unparsable values go to
// dcterms:date (date-unparsable); no Issued date at all → no-issued-date.
func (c *conv) dates() {
	issued := ""
	seen := map[typed]bool{}
	add := func(typ, v string) {
		if k := (typed{typ, v}); !seen[k] {
			seen[k] = true
			c.rec.dates = append(c.rec.dates, k)
		}
	}
	bad := func(f *field) {
		c.warnf("date-unparsable", f.value, f.path(), "not a W3CDTF date; kept as dcterms:date")
		l := ""
		if hasJapanese(f.value) {
			l = "ja"
		}
		c.rec.termsDates = append(c.rec.termsDates, text{l, f.value})
	}
	if f := c.src.first("dateofissued"); f != nil {
		if d, ok := normDate(f.value); ok {
			issued = d
			add("Issued", d)
		} else {
			bad(f)
		}
	}
	for _, f := range c.src.get("date") {
		d, ok := normDate(f.value)
		switch {
		case !ok:
			bad(f)
		case d == issued:
		case issued == "":
			issued = d
			add("Issued", d)
		default:
			add("Created", d)
		}
	}
	if issued == "" {
		c.warnf("no-issued-date", "", "", "no date usable as datacite:date Issued (not an IRDB error since 2022-07-27)")
	}
}

// languages is J2M-018 and J2N-07: ISO 639-3, und for unknown codes, de-duplicated.
func (c *conv) languages() {
	seen := map[string]bool{}
	for _, f := range c.src.get("language") {
		code, changed := normLanguage(f.value)
		if code == "und" && f.value != "und" {
			c.normalised("language-und", f.value, f.path(), "not an ISO 639-3 code; und ([IRDB-N22])")
		} else if changed {
			c.normalised("language-normalised", f.value, f.path(), "mapped to ISO 639-3 "+code)
		}
		if !seen[code] {
			seen[code] = true
			c.rec.languages = append(c.rec.languages, code)
		}
	}
}
