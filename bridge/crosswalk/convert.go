package crosswalk

import (
	"errors"
	"fmt"
	"strings"
)

// conv holds one conversion's state; nothing outlives a call.
type conv struct {
	opt   Options
	src   *junii2
	rec   record
	warn  []Issue
	quar  []Issue
	niiTy string // the recognised NIItype, canonical spelling
	tv    string // textversion, lower-cased ("" when absent)
}

func (c *conv) warnf(code, arg, path, msg string) {
	c.warn = append(c.warn, Issue{Level: LevelWarning, Code: code, Arg: clipArg(arg), Path: path, Msg: msg})
}

func (c *conv) normalised(code, arg, path, msg string) {
	c.warn = append(c.warn, Issue{Level: LevelNormalised, Code: code, Arg: clipArg(arg), Path: path, Msg: msg})
}

func (c *conv) quarantine(code, arg, path, msg string) {
	c.quar = append(c.quar, Issue{Level: LevelRecord, Code: code, Arg: clipArg(arg), Path: path, Msg: msg})
}

// irdbError is an IRDB record error that the gateway only warns about
// unless IRDBStrict is set (GW-J2J-03).
func (c *conv) irdbError(is Issue) {
	if c.opt.IRDBStrict {
		c.quar = append(c.quar, is)
		return
	}
	is.Level = LevelWarning
	c.warn = append(c.warn, is)
}

// Junii2ToJPCOAR2 converts one junii2 metadata element to a JPCOAR 2.0
// record with the default Options (§H). See Options.Junii2ToJPCOAR2.
func Junii2ToJPCOAR2(metadata []byte) (Result, error) {
	return Options{}.Junii2ToJPCOAR2(metadata)
}

// Junii2ToJPCOAR2 converts one junii2 metadata element (the child of OAI-PMH
// <metadata>, made standalone) to a jpcoar:jpcoar element. Bad input never
// returns an error: it is quarantined with reasons (GW-J2J-01). An error
// means a bug in this package (a recovered panic).
//
// The conversion is a pure function of the bytes and o: no network
// (GW-J2J-22), no clock, no map-order dependence, so the same input always
// gives the same bytes (GW-J2J-20). Unlike the brief's sketch it takes no
// Source: nothing about where a record came from belongs inside the JPCOAR
// record (the PMH-040 provenance of GW-J2J-20 lives in the ResourceSync
// layer), and keeping the record independent of the OAI identifier means
// the Version/Fingerprint alone decide when stored records must be re-derived.
func (o Options) Junii2ToJPCOAR2(metadata []byte) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, fmt.Errorf("crosswalk: junii2 to jpcoar: internal error: %v", p)
		}
	}()
	src, err := parseJunii2(metadata)
	var nj *notJunii2Error
	switch {
	case errors.As(err, &nj):
		return quarantined(Issue{Level: LevelRecord, Code: "not-junii2", Arg: clipArg(nj.qname()), Msg: nj.Error()}), nil
	case errors.Is(err, errNotWellFormed):
		return quarantined(Issue{Level: LevelRecord, Code: "not-well-formed", Msg: err.Error()}), nil
	case err != nil:
		return Result{}, fmt.Errorf("crosswalk: parse junii2: %w", err)
	}
	c := &conv{opt: o, src: src}
	c.run()
	res.Provenance = c.provenance()
	res.Warnings = c.warn
	if len(c.quar) > 0 {
		res.Quarantine = c.quar
		return res, nil
	}
	res.Record = writeRecord(&c.rec)
	return res, nil
}

func quarantined(is Issue) Result { return Result{Quarantine: []Issue{is}} }

// run fills c.rec from c.src, in the order the sections depend on each
// other: the resource type and textversion first, since NCID placement
// (GW-J2J-14), the doi relation type (GW-J2J-12) and access rights
// (GW-J2J-17) read them.
func (c *conv) run() {
	c.structure()
	c.resourceType()
	c.textVersion()
	c.titles()
	c.rec.creators = c.people("creator")
	c.rec.contributors = c.people("contributor")
	c.accessRights()
	c.rights()
	c.subjects()
	c.descriptions()
	c.publishers()
	c.dates()
	c.languages()
	c.identifiers()
	c.relations()
	c.coverage()
	c.source()
	c.degree()
	c.files()
	c.irdbConditions()
}

// structure reports dialect (GW-J2J-02), unknown elements (GW-J2J-19),
// nested markup and repeated 0..1 elements (GW-J2J-05).
func (c *conv) structure() {
	if d := c.src.dialect(); d != "" {
		msg := "non-canonical junii2 dialect (GW-J2J-02)"
		if c.opt.StrictDialect {
			c.quarantine("legacy-dialect", d, "", msg)
		} else {
			c.warnf("legacy-dialect", d, "", msg)
		}
	}
	for _, f := range c.src.foreign {
		c.warnf("unknown-element", (&notJunii2Error{f.space, f.local}).qname(), "", "element outside the junii2 namespace dropped")
	}
	reported := map[string]bool{}
	for i := range c.src.fields {
		f := &c.src.fields[i]
		if !knownElements[f.name] && !reported[f.name] {
			reported[f.name] = true
			c.warnf("unknown-element", f.name, f.path(), "not a junii2 3.1 element; dropped")
		}
		if singleElements[f.name] && f.n > 1 && !reported["\x00"+f.name] {
			reported["\x00"+f.name] = true
			c.warnf("repeated", f.name, f.path(), "0..1 element repeated; the first occurrence is used")
		}
	}
	for _, p := range c.src.nested {
		c.warnf("nested-markup", "", p, "child elements inside a junii2 element; their text is concatenated")
	}
}

// lang returns the xml:lang for a value: the explicit @lang mapped by
// J2N-11, which always wins (GW-J2J-06), else script detection. An
// unrecognised @lang falls back to detection (the digest would leave no
// attribute; [JCV] requires one on titles and names, and detection is the
// better guess).
func (c *conv) lang(f *field) string {
	if f.hasLang {
		if l, ok := langAttr(f.lang); ok {
			return l
		}
		c.warnf("lang-unrecognised", f.lang, f.path()+"/@lang", "unrecognised lang attribute; script detection used")
	}
	return detectLang(f.value, c.opt.NoLatinGuess)
}

// textLang is lang for values that are never readings (subjects,
// descriptions, publishers, …): a detected Katakana-only value there is a
// loanword such as データマイニング, tagged ja, not ja-Kana (J2N-14 limits
// readings to titles and names; T-J2J-10 expects ja on that subject).
func (c *conv) textLang(f *field) string {
	l := c.lang(f)
	if l == "ja-Kana" && !f.hasLang {
		return "ja"
	}
	return l
}

// resourceType is J2M-019 and §D.1: the first recognised NIItype wins
// (GW-J2J-05); none → quarantine. A case or white-space variant of a term
// is accepted with niitype-case (IRDB would reject it, so IRDBStrict
// quarantines it as niitype-unknown).
func (c *conv) resourceType() {
	fs := c.src.get("NIItype")
	if len(fs) == 0 {
		c.quarantine("niitype-missing", "", "NIItype", "NIItype is required (J2V-06)")
		return
	}
	var chosen *field
	for _, f := range fs {
		if chosen != nil {
			c.warnf("niitype-extra", f.value, f.path(), "further NIItype ignored")
			continue
		}
		if _, ok := niiTypes[f.value]; ok {
			chosen, c.niiTy = f, f.value
			continue
		}
		if canon := foldNIIType(f.value); canon != "" && !c.opt.IRDBStrict {
			chosen, c.niiTy = f, canon
			c.normalised("niitype-case", f.value, f.path(), "NIItype spelling normalised to "+canon)
			continue
		}
		c.warnf("niitype-extra", f.value, f.path(), "unrecognised NIItype skipped")
	}
	if chosen == nil {
		c.quarantine("niitype-unknown", fs[0].value, fs[0].path(), "NIItype outside the vocabulary (J2V-07)")
		return
	}
	c.rec.typ = niiTypes[c.niiTy]
	if c.niiTy == "Thesis or Dissertation" && (c.src.has("grantid") || c.src.has("dateofgranted")) {
		c.rec.typ = doctoralThesis // GW-J2J-18
	}
}

// foldNIIType matches an NIItype ignoring case and runs of white space.
func foldNIIType(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	for k := range niiTypes {
		if strings.EqualFold(k, v) {
			return k
		}
	}
	return ""
}

// textVersion is J2M-020 and §D.2 ([INF]): textversion → oaire:version;
// none and unknown values give no element.
func (c *conv) textVersion() {
	f := c.src.first("textversion")
	if f == nil {
		return
	}
	c.tv = strings.ToLower(f.value)
	if v, ok := versions[c.tv]; ok {
		c.rec.version = &v
	} else if c.tv != "none" {
		c.warnf("textversion-unknown", f.value, f.path(), "textversion outside author|publisher|ETD|none")
		c.tv = ""
	}
}

// accessRights is GW-J2J-17: textversion none without fullTextURL is
// metadata only access [INF]; open access only with DeriveOpenAccess.
func (c *conv) accessRights() {
	files := c.src.has("fullTextURL")
	switch {
	case c.tv == "none" && !files:
		c.rec.accessRights = &resType{"metadata only access", coarAccess + "c_14cb"}
	case c.opt.DeriveOpenAccess && files && c.tv != "" && c.tv != "none":
		c.rec.accessRights = &resType{"open access", coarAccess + "c_abf2"}
	}
}

// provenance fills Result.Provenance (GW-J2J-19, GW-J2J-20). Its strings
// are copies, not substrings of the parsed document (see scanner), which
// the caller should not keep in memory along with them.
func (c *conv) provenance() Provenance {
	p := c.provenanceOf()
	return Provenance{strings.Clone(p.MetadataNamespace), strings.Clone(p.BaseURL), strings.Clone(p.LandingPage)}
}

func (c *conv) provenanceOf() Provenance {
	p := Provenance{MetadataNamespace: c.src.space}
	if f := c.src.first("baseurl"); f != nil {
		p.BaseURL = f.value
	}
	if f := c.src.first("IR_URI"); f != nil && isAbsoluteURI(f.value) {
		p.LandingPage = f.value
		return p
	}
	for _, f := range c.src.get("URI") {
		if !isAbsoluteURI(f.value) {
			continue
		}
		if p.LandingPage == "" || strings.Contains(p.LandingPage, "://jairo.nii.ac.jp/") {
			p.LandingPage = f.value
		}
	}
	return p
}
