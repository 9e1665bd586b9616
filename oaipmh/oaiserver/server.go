package oaiserver

import (
	"bufio"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// oaiError is one <error> element.
type oaiError struct{ code, msg string }

// argOrder lists argument names in the order they are echoed in <request>.
func argOrder() []string {
	return []string{"identifier", "metadataPrefix", "from", "until", "set", "resumptionToken"}
}

func allowedArg(verb, name string) bool {
	switch verb {
	case "Identify":
		return false
	case "ListMetadataFormats":
		return name == "identifier"
	case "ListSets":
		return name == "resumptionToken"
	case "ListIdentifiers", "ListRecords":
		switch name {
		case "from", "until", "metadataPrefix", "set", "resumptionToken":
			return true
		}
	case "GetRecord":
		return name == "identifier" || name == "metadataPrefix"
	}
	return false
}

// reqCtx is the per-request state.
type reqCtx struct {
	s       *Synthetic
	verb    string
	args    url.Values // validated: one value per key
	baseURL string
	now     time.Time
}

// ServeHTTP is the OAI-PMH endpoint (GET, HEAD, or POST with an
// application/x-www-form-urlencoded body), at any path.
func (s *Synthetic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var (
		args url.Values
		perr error
	)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		args, perr = url.ParseQuery(r.URL.RawQuery)
	case http.MethodPost:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		if mt != "application/x-www-form-urlencoded" && len(body) > 0 {
			http.Error(w, "POST requests must be application/x-www-form-urlencoded", http.StatusUnsupportedMediaType)
			return
		}
		args, perr = url.ParseQuery(string(body))
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	c := &reqCtx{s: s, args: args, baseURL: scheme + "://" + r.Host + r.URL.EscapedPath(), now: s.now().UTC()}

	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	bw := bufio.NewWriterSize(w, 32<<10)
	x := newXW(bw)
	c.serve(x, perr)
	_ = bw.Flush()
}

func (c *reqCtx) serve(x *xw, perr error) {
	verbs := c.args["verb"]
	switch {
	case len(verbs) == 0:
		c.fail(x, false, oaiError{"badVerb", "The verb argument is missing."})
		return
	case len(verbs) > 1:
		c.fail(x, false, oaiError{"badVerb", "The verb argument is repeated."})
		return
	}
	c.verb = verbs[0]
	switch c.verb {
	case "Identify", "ListMetadataFormats", "ListSets", "ListIdentifiers", "ListRecords", "GetRecord":
	default:
		c.fail(x, false, oaiError{"badVerb", "Illegal OAI verb."})
		return
	}
	var errs []oaiError
	if perr != nil {
		errs = append(errs, oaiError{"badArgument", "The request arguments are not correctly URL-encoded."})
	}
	keys := make([]string, 0, len(c.args))
	for k := range c.args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "verb" {
			continue
		}
		vs := c.args[k]
		switch {
		case !allowedArg(c.verb, k):
			errs = append(errs, oaiError{"badArgument", "Illegal argument " + k + " for verb " + c.verb + "."})
		case len(vs) > 1:
			errs = append(errs, oaiError{"badArgument", "The argument " + k + " is repeated."})
		case vs[0] == "":
			errs = append(errs, oaiError{"badArgument", "The argument " + k + " is empty."})
		}
	}
	if c.has("resumptionToken") && len(c.args) > 2 {
		errs = append(errs, oaiError{"badArgument", "resumptionToken is an exclusive argument."})
	}
	if len(errs) > 0 {
		c.fail(x, false, errs...)
		return
	}
	switch c.verb {
	case "Identify":
		c.identify(x)
	case "ListMetadataFormats":
		c.listMetadataFormats(x)
	case "ListSets":
		c.listSets(x)
	case "ListIdentifiers", "ListRecords":
		c.list(x)
	case "GetRecord":
		c.getRecord(x)
	}
}

func (c *reqCtx) has(k string) bool { _, ok := c.args[k]; return ok }
func (c *reqCtx) get(k string) string {
	if v := c.args[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// head writes the XML declaration, the OAI-PMH start tag, responseDate and
// request. echo selects whether the arguments are echoed.
func (c *reqCtx) head(x *xw, echo, jp bool) {
	x.s("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<OAI-PMH")
	for _, d := range rootDecls(jp) {
		x.s(d.String())
	}
	x.s(` xsi:schemaLocation="` + nsOAI + ` ` + schemaOAI + `">` + "\n<responseDate>")
	x.time(c.now, "2006-01-02T15:04:05Z")
	x.s("</responseDate>\n<request")
	if echo {
		x.attr("verb", c.verb)
		for _, k := range argOrder() {
			if c.has(k) {
				x.attr(k, c.get(k))
			}
		}
	}
	x.s(">")
	x.text(c.baseURL)
	x.s("</request>\n")
}

func (c *reqCtx) fail(x *xw, echo bool, errs ...oaiError) {
	c.head(x, echo, false)
	for _, e := range errs {
		x.s(`<error code="`)
		x.s(e.code)
		x.s(`">`)
		x.text(e.msg)
		x.s("</error>\n")
	}
	x.s("</OAI-PMH>\n")
}

func (c *reqCtx) identify(x *xw) {
	s := c.s
	c.head(x, true, false)
	x.s("<Identify>\n")
	x.elem("repositoryName", s.repoName)
	x.s("\n")
	x.elem("baseURL", c.baseURL)
	x.s("\n<protocolVersion>2.0</protocolVersion>\n<adminEmail>" + adminEmail + "</adminEmail>\n<earliestDatestamp>")
	x.time(time.Unix(s.trunc(s.start), 0), s.layout())
	x.s("</earliestDatestamp>\n<deletedRecord>" + s.deletedRecord + "</deletedRecord>\n<granularity>")
	if s.dayGran {
		x.s("YYYY-MM-DD")
	} else {
		x.s("YYYY-MM-DDThh:mm:ssZ")
	}
	x.s("</granularity>\n<description>\n<oai-identifier" +
		` xmlns="` + nsOAIID + `" xsi:schemaLocation="` + nsOAIID + ` ` + schemaOAIID + `">` +
		"\n<scheme>oai</scheme>\n<repositoryIdentifier>" + repoID + "</repositoryIdentifier>\n" +
		"<delimiter>:</delimiter>\n<sampleIdentifier>" + idPrefix + "item-1</sampleIdentifier>\n" +
		"</oai-identifier>\n</description>\n</Identify>\n</OAI-PMH>\n")
}

// lookup resolves an identifier to a live-or-tombstone item.
func (s *Synthetic) lookup(id string) (int, state, bool) {
	i, ok := parseIdentifier(id)
	if !ok {
		return 0, state{}, false
	}
	s.mu.RLock()
	st, ok := s.stateLocked(i)
	s.mu.RUnlock()
	if !ok || s.vanished(&st) {
		return 0, state{}, false
	}
	return i, st, true
}

func (c *reqCtx) listMetadataFormats(x *xw) {
	if c.has("identifier") {
		if _, _, ok := c.s.lookup(c.get("identifier")); !ok {
			c.fail(x, true, oaiError{"idDoesNotExist", "No item has this identifier."})
			return
		}
	}
	c.head(x, true, false)
	x.s("<ListMetadataFormats>\n")
	for _, f := range c.s.formats {
		x.s("<metadataFormat>\n<metadataPrefix>" + f.prefix + "</metadataPrefix>\n<schema>" + f.schema +
			"</schema>\n<metadataNamespace>" + f.ns + "</metadataNamespace>\n</metadataFormat>\n")
	}
	x.s("</ListMetadataFormats>\n</OAI-PMH>\n")
}

// parseDate parses an OAI UTCdatetime argument strictly: YYYY-MM-DD or
// YYYY-MM-DDThh:mm:ssZ.
func parseDate(v string) (t time.Time, day, ok bool) {
	var layout string
	switch len(v) {
	case 10:
		layout, day = "2006-01-02", true
	case 20:
		layout = "2006-01-02T15:04:05Z"
	default:
		return t, false, false
	}
	for j := 0; j < len(v); j++ {
		c := v[j]
		digit := c >= '0' && c <= '9'
		switch layout[j] {
		case '-', ':', 'T', 'Z':
			if c != layout[j] {
				return t, false, false
			}
		default:
			if !digit {
				return t, false, false
			}
		}
	}
	t, err := time.Parse(layout, v)
	if err != nil || t.Format(layout) != v {
		return t, false, false
	}
	return t, day, true
}

// list answers ListIdentifiers and ListRecords: it reads the request, collects
// one page of entries and writes it.
func (c *reqCtx) list(x *xw) {
	s := c.s
	q, p, cursor, ok := c.listRequest(x)
	if !ok {
		return
	}
	f := s.formats[q.prefix]

	s.mu.RLock()
	if q.hasSet && !s.hasSetsLocked() {
		s.mu.RUnlock()
		c.fail(x, true, oaiError{"noSetHierarchy", "This repository does not support sets."})
		return
	}
	entries, next, more := s.collect(&q, p, s.pageSize)
	total := s.countLocked(&q)
	s.mu.RUnlock()

	if len(entries) == 0 {
		c.fail(x, true, oaiError{"noRecordsMatch", "The combination of the values of the from, until, set and metadataPrefix arguments results in an empty list."})
		return
	}
	c.writeEntries(x, f, entries)
	if more || c.has("resumptionToken") {
		total = max(total, cursor+len(entries))
		var tok string
		if more {
			tok = encodeToken(&q, next, cursor+len(entries), c.now.Add(time.Hour).Unix())
		}
		writeToken(x, tok, c.now.Add(time.Hour), total, cursor)
	}
	x.s("</")
	x.s(c.verb)
	x.s(">\n</OAI-PMH>\n")
}

// listRequest reads a list request: the query, and where and at which cursor
// the page starts, from the resumption token or from the arguments. A bad
// request gets its error response, and ok is false.
func (c *reqCtx) listRequest(x *xw) (q query, p position, cursor int, ok bool) {
	verbCode := byte('I')
	if c.verb == "ListRecords" {
		verbCode = 'R'
	}
	if !c.has("resumptionToken") {
		q, ok = c.listArgs(x, verbCode)
		return q, position{posIdx: -1}, 0, ok
	}
	var exp int64
	q, p, cursor, exp, ok = decodeToken(c.get("resumptionToken"))
	if !ok || q.verb != verbCode || q.prefix < 0 || q.prefix >= len(c.s.formats) || c.now.Unix() > exp {
		c.fail(x, true, oaiError{"badResumptionToken", "The resumptionToken is invalid or expired."})
		return q, p, cursor, false
	}
	return q, p, cursor, true
}

// listArgs reads the query of a first list request from its arguments.
func (c *reqCtx) listArgs(x *xw, verbCode byte) (query, bool) {
	s := c.s
	var errs []oaiError
	if !c.has("metadataPrefix") {
		errs = append(errs, oaiError{"badArgument", "The metadataPrefix argument is required."})
	}
	q := query{verb: verbCode, from: noFrom, untilExcl: noUntil}
	errs = c.dateRange(&q, errs)
	if len(errs) > 0 {
		c.fail(x, false, errs...)
		return q, false
	}
	f := s.formatByPrefix(c.get("metadataPrefix"))
	if f == nil {
		c.fail(x, true, oaiError{"cannotDisseminateFormat", "The metadata format is not supported by this repository."})
		return q, false
	}
	q.prefix = s.formatIndex(f)
	if c.has("set") {
		q.hasSet, q.set = true, c.get("set")
	}
	return q, true
}

// dateRange sets q's range from the from and until arguments and returns errs
// with their problems added.
func (c *reqCtx) dateRange(q *query, errs []oaiError) []oaiError {
	s := c.s
	var from, until time.Time
	var fromDay, untilDay bool
	if c.has("from") {
		var ok bool
		if from, fromDay, ok = parseDate(c.get("from")); !ok {
			errs = append(errs, oaiError{"badArgument", "The from argument is not a valid UTC date."})
		} else if !fromDay && s.dayGran {
			errs = append(errs, oaiError{"badArgument", "The from argument is finer than the repository granularity."})
		} else {
			q.from = from.Unix()
		}
	}
	if c.has("until") {
		var ok bool
		if until, untilDay, ok = parseDate(c.get("until")); !ok {
			errs = append(errs, oaiError{"badArgument", "The until argument is not a valid UTC date."})
		} else if !untilDay && s.dayGran {
			errs = append(errs, oaiError{"badArgument", "The until argument is finer than the repository granularity."})
		} else if untilDay {
			q.untilExcl = until.Add(24 * time.Hour).Unix()
		} else {
			q.untilExcl = until.Add(time.Second).Unix()
		}
	}
	if len(errs) == 0 && c.has("from") && c.has("until") {
		if fromDay != untilDay {
			errs = append(errs, oaiError{"badArgument", "The from and until arguments have different granularities."})
		} else if from.After(until) {
			errs = append(errs, oaiError{"badArgument", "The from argument is later than the until argument."})
		}
	}
	return errs
}

// writeEntries writes the head of a list response, the list's start tag and
// its records (ListRecords) or headers (ListIdentifiers).
func (c *reqCtx) writeEntries(x *xw, f *format, entries []entry) {
	s := c.s
	records := c.verb == "ListRecords"
	jp := records && f.jp
	c.head(x, true, jp)
	x.s("<")
	x.s(c.verb)
	for _, d := range verbDecls(jp) {
		x.s(d.String())
	}
	x.s(">\n")
	for j := range entries {
		e := &entries[j]
		if records {
			x.s("<record>")
			s.writeHeader(x, e)
			if !e.st.deleted {
				x.s("<metadata>")
				s.writeMetadata(x, f, e.idx, e.st.version, "")
				x.s("</metadata>\n")
			}
			x.s("</record>\n")
		} else {
			s.writeHeader(x, e)
		}
	}
}

func writeToken(x *xw, tok string, exp time.Time, total, cursor int) {
	x.s("<resumptionToken")
	if tok != "" {
		x.s(` expirationDate="`)
		x.time(exp, "2006-01-02T15:04:05Z")
		x.s(`"`)
	}
	x.attrInt("completeListSize", total)
	x.attrInt("cursor", cursor)
	if tok == "" {
		x.s("/>\n")
		return
	}
	x.s(">")
	x.text(tok)
	x.s("</resumptionToken>\n")
}

func (s *Synthetic) writeHeader(x *xw, e *entry) {
	if e.st.deleted {
		x.s("<header status=\"deleted\">\n<identifier>")
	} else {
		x.s("<header>\n<identifier>")
	}
	writeIdentifier(x, e.idx)
	s.writeHostileIdentifier(x, e.idx)
	x.s("</identifier>\n<datestamp>")
	if s.hostility(e.idx) == HostileBadDatestamp {
		x.s("2024-13-45")
	} else {
		x.time(time.Unix(e.st.ds, 0), s.layout())
	}
	x.s("</datestamp>\n")
	if e.st.customSets {
		for _, spec := range e.st.sets {
			x.s("<setSpec>")
			x.text(spec)
			x.s("</setSpec>\n")
		}
	} else if n := s.setCount; n > 0 {
		if e.idx%(2*n) == 0 {
			x.s("<setSpec>s0:sub</setSpec>\n")
		} else {
			x.s("<setSpec>s")
			x.int(e.idx % n)
			x.s("</setSpec>\n")
		}
	}
	x.s("</header>\n")
}

func (c *reqCtx) getRecord(x *xw) {
	s := c.s
	var errs []oaiError
	if !c.has("identifier") {
		errs = append(errs, oaiError{"badArgument", "The identifier argument is required."})
	}
	if !c.has("metadataPrefix") {
		errs = append(errs, oaiError{"badArgument", "The metadataPrefix argument is required."})
	}
	if len(errs) > 0 {
		c.fail(x, false, errs...)
		return
	}
	i, st, found := s.lookup(c.get("identifier"))
	if !found {
		errs = append(errs, oaiError{"idDoesNotExist", "No item has this identifier."})
	}
	f := s.formatByPrefix(c.get("metadataPrefix"))
	if f == nil {
		errs = append(errs, oaiError{"cannotDisseminateFormat", "The metadata format is not supported by this repository."})
	}
	if len(errs) > 0 {
		c.fail(x, true, errs...)
		return
	}
	c.head(x, true, f.jp)
	x.s("<GetRecord")
	for _, d := range verbDecls(f.jp) {
		x.s(d.String())
	}
	x.s(">\n<record>")
	e := entry{idx: i, st: st}
	s.writeHeader(x, &e)
	if !st.deleted {
		x.s("<metadata>")
		s.writeMetadata(x, f, i, st.version, "")
		x.s("</metadata>\n")
	}
	x.s("</record>\n</GetRecord>\n</OAI-PMH>\n")
}

func (c *reqCtx) listSets(x *xw) {
	s := c.s
	offset, cursor := 0, 0
	resume := c.has("resumptionToken")
	if resume {
		q, p, cur, exp, ok := decodeToken(c.get("resumptionToken"))
		if !ok || q.verb != 'S' || p.pos < 0 || p.pos > 1<<31 || c.now.Unix() > exp {
			c.fail(x, true, oaiError{"badResumptionToken", "The resumptionToken is invalid or expired."})
			return
		}
		offset, cursor = int(p.pos), cur
	}
	s.mu.RLock()
	sets := s.setListLocked()
	s.mu.RUnlock()
	if len(sets) == 0 {
		c.fail(x, true, oaiError{"noSetHierarchy", "This repository does not support sets."})
		return
	}
	if offset >= len(sets) {
		c.fail(x, true, oaiError{"badResumptionToken", "The resumptionToken is no longer valid."})
		return
	}
	end := min(offset+s.pageSize, len(sets))
	c.head(x, true, false)
	x.s("<ListSets>\n")
	for _, spec := range sets[offset:end] {
		x.s("<set>\n<setSpec>")
		x.text(spec)
		x.s("</setSpec>\n<setName>")
		name, desc := s.setInfo(spec)
		x.text(name)
		x.s("</setName>\n<setDescription>\n<oai_dc:dc" +
			` xmlns:oai_dc="` + nsOAIDC + `" xsi:schemaLocation="` + nsOAIDC + ` ` + schemaOAIDC + `">` +
			"\n<dc:description>")
		x.text(desc)
		x.s("</dc:description>\n</oai_dc:dc>\n</setDescription>\n</set>\n")
	}
	if end < len(sets) || resume {
		var tok string
		if end < len(sets) {
			q := query{verb: 'S'}
			tok = encodeToken(&q, position{pos: int64(end)}, cursor+end-offset, c.now.Add(time.Hour).Unix())
		}
		writeToken(x, tok, c.now.Add(time.Hour), len(sets), cursor)
	}
	x.s("</ListSets>\n</OAI-PMH>\n")
}

func (s *Synthetic) setInfo(spec string) (name, desc string) {
	if m, r, ok := s.baseSet(spec); ok {
		if spec == "s0:sub" {
			return "Demo subset of s0", "Items whose index i satisfies i mod " + strconv.Itoa(m) + " = 0."
		}
		return "Demo set " + strconv.Itoa(r), "Items whose index i satisfies i mod " + strconv.Itoa(m) + " = " + strconv.Itoa(r) + "."
	}
	return "Set " + spec, "Items moved into set " + spec + " (or its descendants)."
}
