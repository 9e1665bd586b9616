package ore

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Map is one Resource Map: the Aggregation for one OAI-PMH item and the
// resources it aggregates. Build it with Assemble, or by hand; WriteORE10 and
// WriteORE02 serialise the same Map.
type Map struct {
	URI           string    // URI-R of the ORE 1.0 document: where it is served, its self link
	AltURI        string    // URI-R of the 0.2 profile document: where it is served, its self link
	Aggregation   string    // URI-A the 1.0 document describes: URI + "#aggregation" (Assemble sets it); the 0.2 document describes AltURI + "#aggregation"
	ID            string    // atom:id of the 0.2 feed (see MapID); the 1.0 entry's id derives from it
	OAIIdentifier string    // the item's OAI identifier: entry ids (EntryID) and, as a URI, a related link
	Title         string    // the object's title; "" falls back to OAIIdentifier, then Aggregation
	Created       time.Time // when the gateway first saw the item (1.0 published)
	Updated       time.Time // newest change of any part; the writers never emit less than the newest resource time
	Author        Agent     // the gateway operator: author of the Resource Map (name required, uri recommended)
	ItemAuthors   []Agent   // creators of the aggregated object (ORE 1.0 entry/author); empty: Author
	Related       []string  // other URIs of the Aggregation (DOI resolver URLs, handles); the URI-As themselves are dropped
	Types         []string  // rdf:type of the Aggregation (COAR resource type URIs)
	Creators      []string  // dcterms:creator of the Aggregation (name identifier URIs)
	IsPartOf      []string  // dcterms:isPartOf of the Aggregation (the gateway URIs of the item's sets)
	Resources     []Resource
	Rights        string // licence URI of the Resource Map's metadata (atom:rights); "" or not an IRI: none
}

// Kind says what an aggregated resource is.
type Kind int

// Kinds of aggregated resources.
const (
	KindOther    Kind = iota // anything else a caller aggregates
	KindMetadata             // the gateway's copy of one metadata record of the item
	KindLanding              // the item's landing (splash) page
	KindFile                 // a full-text or data file
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindMetadata:
		return "metadata"
	case KindLanding:
		return "landing"
	case KindFile:
		return "file"
	case KindOther:
		return "other"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Resource is one aggregated resource (AR).
type Resource struct {
	URI        string
	ID         string // atom:id of its 0.2 entry; "" means EntryID(Map.OAIIdentifier, URI)
	Kind       Kind
	Type       string // media type; "" defaults to application/xml for metadata, text/html for the landing page, else application/octet-stream
	Title      string // "" defaults by kind (file: last path segment)
	Length     int64  // bytes, 0 when unknown
	ConformsTo string // for KindMetadata: the metadata namespace URI
	ObjectType string // for KindFile: JPCOAR objectType
	Published  time.Time
	Updated    time.Time
}

// Agent is an Atom person: a name and an optional URI.
type Agent struct{ Name, URI string }

// Semantic types of aggregated resources (the 0.2 profile's examples, GW-ORE-05).
const (
	TypeDescriptiveMetadata = "info:eu-repo/semantics/descriptiveMetadata"
	TypeHumanStartPage      = "info:eu-repo/semantics/humanStartPage"
)

// Validate reports what keeps the Map from being serialised: a URI or AltURI
// that is not an absolute IRI or has a fragment, AltURI equal to URI, a missing
// ID or author name, an Aggregation other than URI + "#aggregation", no
// resource (ORE-010), a resource without URI, duplicate entry ids (ORE-020),
// an entry id equal to its resource's URI (ORE-028), no time at all, or a time
// outside years 0000-9999.
//
// Every URI the writers emit goes through the same IRI clean-up (see iri):
// characters an IRI does not allow are percent-encoded, and a value that is
// still not an absolute IRI is left out: a related link, a type, creator or
// set, a conformsTo, an author uri, Rights, or a resource (which is then not
// aggregated). Duplicate resource URIs (after that clean-up) are not an error:
// the writers keep the first.
func (m *Map) Validate() error {
	_, err := m.view()
	return err
}

// view is the Map as both writers emit it: defaults applied, URIs made IRIs,
// resources deduplicated, times settled.
type view struct {
	uri, alt   string // the documents' URI-Rs (alt "" when there is no AltURI)
	agg, agg02 string // the URI-As they describe: uri + "#aggregation", alt + "#aggregation" ("" without alt)
	title      string
	updated    time.Time
	related    []string // other URIs of the Aggregation, without agg and agg02
	types      []string
	creators   []string
	isPartOf   []string
	rights     string
	landing    Resource // the first KindLanding resource, URI "" when none
	res        []Resource
}

// documentURI checks a URI-R: an absolute IRI without a fragment, since the
// document's URI-A is URI-R + "#aggregation".
func documentURI(name, s string) (string, error) {
	u := iri(s)
	switch {
	case s == "" || u == "":
		return "", fmt.Errorf("%s %q is not an absolute URI", name, s)
	case strings.Contains(u, "#"):
		return "", fmt.Errorf("%s %q has a fragment", name, s)
	}
	return u, nil
}

func (m *Map) view() (view, error) {
	var v view
	errs := v.setURIs(m)
	if m.ID == "" {
		errs = append(errs, errors.New("no ID"))
	}
	if m.Author.Name == "" {
		errs = append(errs, errors.New("no Author name (ORE-007)"))
	}
	errs = append(errs, v.setResources(m)...)
	errs = append(errs, v.checkTimes(m)...)
	v.title = m.Title
	if v.title == "" {
		v.title = m.OAIIdentifier
	}
	if v.title == "" {
		v.title = m.Aggregation
	}
	for _, u := range iris(m.Related, []string{m.OAIIdentifier}) {
		if u != v.agg && u != v.agg02 {
			v.related = append(v.related, u)
		}
	}
	v.types, v.creators, v.isPartOf = iris(m.Types), iris(m.Creators), iris(m.IsPartOf)
	v.rights = iri(m.Rights)
	return v, errors.Join(errs...)
}

// setURIs settles the documents' URI-Rs and the URI-As they describe, and
// checks m.Aggregation against them.
func (v *view) setURIs(m *Map) []error {
	var errs []error
	var err error
	if v.uri, err = documentURI("URI", m.URI); err != nil {
		errs = append(errs, err)
	}
	if m.AltURI != "" {
		if v.alt, err = documentURI("AltURI", m.AltURI); err != nil {
			errs = append(errs, err)
		} else if v.alt == v.uri {
			errs = append(errs, fmt.Errorf("AltURI %q is the URI of the 1.0 document", m.AltURI))
			v.alt = ""
		}
	}
	if v.uri != "" {
		v.agg = v.uri + "#aggregation"
	}
	if v.alt != "" {
		v.agg02 = v.alt + "#aggregation"
	}
	switch {
	case m.Aggregation == "":
		errs = append(errs, errors.New("no Aggregation URI (URI-A)"))
	case m.Aggregation == m.URI || m.Aggregation == m.AltURI:
		errs = append(errs, fmt.Errorf("Aggregation URI %q is a document URI", m.Aggregation))
	case v.agg != "" && iri(m.Aggregation) != v.agg:
		errs = append(errs, fmt.Errorf(`Aggregation URI %q is not URI + "#aggregation" (ORE-015)`, m.Aggregation))
	}
	return errs
}

// setResources keeps the resources whose URI is an IRI, each URI once, with
// their defaults applied (withDefaults), checks their entry ids and notes the
// landing page and the newest resource time.
func (v *view) setResources(m *Map) []error {
	var errs []error
	base := m.Updated
	if base.IsZero() {
		base = m.Created
	}
	seen := map[string]bool{}
	ids := map[string]bool{}
	for i, r := range m.Resources {
		if r.URI == "" {
			errs = append(errs, fmt.Errorf("resource %d has no URI", i))
			continue
		}
		raw := r.URI
		if r.URI = iri(raw); r.URI == "" || seen[r.URI] {
			continue // not an IRI even escaped: not aggregated; or a duplicate
		}
		seen[r.URI] = true
		if r.ID == "" {
			r.ID = EntryID(m.OAIIdentifier, raw) // as Assemble does: ids stay what they were
		}
		if r.ID == r.URI || r.ID == raw {
			errs = append(errs, fmt.Errorf("resource %s: entry id is the resource URI (ORE-028)", r.URI))
		}
		if ids[r.ID] {
			errs = append(errs, fmt.Errorf("resource %s: entry id %s used twice (ORE-020)", r.URI, r.ID))
		}
		ids[r.ID] = true
		r = withDefaults(r, raw, base)
		if r.Kind == KindLanding && v.landing.URI == "" {
			v.landing = r
		}
		v.updated = latest(v.updated, r.Published, r.Updated)
		v.res = append(v.res, r)
	}
	if len(v.res) == 0 {
		errs = append(errs, errors.New("no aggregated resource (ORE-010)"))
	}
	return errs
}

// withDefaults fills in what r leaves open: its conformsTo made an IRI, a
// missing time from the other one or from base (the Map's time), and the type
// and title its kind implies (file: the last segment of raw, its URI as given).
func withDefaults(r Resource, raw string, base time.Time) Resource {
	if r.ConformsTo != "" {
		r.ConformsTo = iri(r.ConformsTo)
	}
	if r.Updated.IsZero() {
		r.Updated = r.Published
	}
	if r.Published.IsZero() {
		r.Published = r.Updated
	}
	if r.Updated.IsZero() {
		r.Published, r.Updated = base, base
	}
	if r.Type == "" {
		switch r.Kind {
		case KindMetadata:
			r.Type = "application/xml"
		case KindLanding:
			r.Type = "text/html"
		default:
			r.Type = "application/octet-stream"
		}
	}
	if r.Title == "" {
		switch r.Kind {
		case KindMetadata:
			r.Title = "Metadata record"
		case KindLanding:
			r.Title = "Landing page"
		default:
			r.Title = lastSegment(raw)
		}
		if r.Title == "" {
			r.Title = r.URI
		}
	}
	return r
}

// checkTimes settles the Map's updated time (never before a resource's) and
// checks that there is one and that every time fits RFC 3339's four-digit
// years.
func (v *view) checkTimes(m *Map) []error {
	var errs []error
	v.updated = latest(v.updated, m.Updated, m.Created)
	if v.updated.IsZero() {
		errs = append(errs, errors.New("no time: set Updated"))
	}
	for _, t := range []time.Time{m.Created, v.updated} {
		if !t.IsZero() && !inRange(t) {
			errs = append(errs, fmt.Errorf("time %v is outside years 0000-9999", t))
		}
	}
	for _, r := range v.res {
		if !inRange(r.Published) || !inRange(r.Updated) {
			errs = append(errs, fmt.Errorf("resource %s: a time is outside years 0000-9999", r.URI))
		}
	}
	return errs
}

func latest(t time.Time, more ...time.Time) time.Time {
	for _, u := range more {
		if u.After(t) {
			t = u
		}
	}
	return t
}

func inRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// formatTime writes an RFC 3339 date-time in UTC with seconds precision and a Z
// (ORE-004, ORE-005).
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
