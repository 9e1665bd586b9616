package crosswalk

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Version changes whenever the output for some input changes (GW-J2J-21):
// stored junii2 records are re-derived when it does, and an `updated` event
// is emitted only where the derived bytes actually change. Options change the
// output too, so the wiring should key re-derivation on Options.Fingerprint,
// which includes Version.
const Version = "1"

// Level classifies an Issue the way IRDB classifies its findings ([IRDB-M]
// legend): a record error keeps the record out, an item error drops one
// field, a warning is a message only, and a normalisation says a value was
// rewritten.
type Level string

// The levels, from the most to the least severe.
const (
	LevelRecord     Level = "record-error"
	LevelItem       Level = "item-error"
	LevelWarning    Level = "warning"
	LevelNormalised Level = "normalised"
)

// Issue is one finding. Code is the digest's reason code (GW-J2J-01 for
// quarantine reasons, §E/§H for warnings, §F for checks); Arg is the variable
// part the digest writes after a colon (`niitype-unknown:<value>`), kept
// apart so that operators can group by Code. Path names the offending source
// element as `name[n]` (1-based among same-name siblings) or `name[n]/@attr`.
type Issue struct {
	Level Level
	Code  string
	Arg   string
	Path  string
	Msg   string
}

// Reason is the digest's reason string: Code, or Code:Arg when there is an
// argument (e.g. `niitype-unknown:Journal article paper`).
func (i Issue) Reason() string {
	if i.Arg == "" {
		return i.Code
	}
	return i.Code + ":" + i.Arg
}

// String renders the issue for logs.
func (i Issue) String() string {
	s := string(i.Level) + " " + i.Reason()
	if i.Path != "" {
		s += " at " + i.Path
	}
	if i.Msg != "" {
		s += ": " + i.Msg
	}
	return s
}

// maxArg caps the length of an Issue argument taken from input data, so a
// hostile multi-megabyte value cannot be copied into every log line.
const maxArg = 100

// clipArg shortens s to maxArg runes. It returns a copy: s is often a
// substring of the parsed document (see scanner), which an Issue kept for
// later should not hold in memory.
func clipArg(s string) string {
	if utf8.RuneCountInString(s) <= maxArg {
		return strings.Clone(s)
	}
	n := 0
	for i := range s {
		if n == maxArg {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Result is the outcome of one conversion.
type Result struct {
	// Record is the derived jpcoar:jpcoar element (a standalone, namespaced
	// metadata element without XML declaration), nil when the record cannot
	// be derived.
	Record []byte
	// Warnings lists lossy and normalised points and dropped fields.
	Warnings []Issue
	// Quarantine says why the record is not derived; non-empty iff Record is nil.
	Quarantine []Issue
	// Provenance carries what the wiring needs outside the record (GW-J2J-19,
	// GW-J2J-20); nothing of it is written into the record.
	Provenance Provenance
}

// Provenance is what the conversion learnt about the harvested record that
// belongs to the gateway's provenance and landing-page logic rather than to
// the JPCOAR record, which has no element for it.
type Provenance struct {
	// MetadataNamespace is the namespace of the junii2 root as harvested
	// ("" when none): `metadataNamespace` of the PMH-040 provenance
	// (GW-J2J-20). It differs from http://irdb.nii.ac.jp/oai for legacy dialects.
	MetadataNamespace string
	// BaseURL is IRDB's `baseurl` extension (GW-J2J-19, J2L-25).
	BaseURL string
	// LandingPage is the preferred item URI: IR_URI over a jairo.nii.ac.jp
	// URI, whose host is closed (GW-J2J-19, oaipmh-and-irdb.md MD-003).
	LandingPage string
}

// Options are the configuration switches of §H. The zero value is the
// default configuration the digest's tests assume.
type Options struct {
	// StrictDialect quarantines non-canonical dialects with legacy-dialect (GW-J2J-02).
	StrictDialect bool
	// IRDBStrict turns the IRDB record errors J2V-06–J2V-09 that the
	// gateway otherwise only warns about into quarantine reasons (GW-J2J-03).
	IRDBStrict bool
	// StrictXLSXTitles disables title promotion: every alternative becomes
	// dcterms:alternative, as the spreadsheet row r3 says (GW-J2J-07).
	StrictXLSXTitles bool
	// DescriptionAsAbstract types junii2 description as Abstract (GW-J2J-10).
	DescriptionAsAbstract bool
	// DeriveOpenAccess maps fullTextURL plus textversion author, publisher or
	// ETD to open access (GW-J2J-17).
	DeriveOpenAccess bool
	// NoLatinGuess is lang_guess_latin=off: Latin-script text gets no
	// xml:lang instead of en (GW-J2J-06).
	NoLatinGuess bool
}

// Fingerprint identifies the derivation: Version plus every option that
// changes output. The wiring re-derives stored records when it changes
// (GW-J2J-21); a bare Version would miss a configuration change.
func (o Options) Fingerprint() string {
	var b strings.Builder
	b.WriteString("junii2-jpcoar2/v" + Version)
	flags := []struct {
		on   bool
		name string
	}{
		{o.StrictDialect, "strict-dialect"},
		{o.IRDBStrict, "irdb-strict"},
		{o.StrictXLSXTitles, "strict-xlsx-titles"},
		{o.DescriptionAsAbstract, "description-as-abstract"},
		{o.DeriveOpenAccess, "derive-open-access"},
		{o.NoLatinGuess, "no-latin-guess"},
	}
	for _, f := range flags {
		if f.on {
			b.WriteString("+" + f.name)
		}
	}
	return b.String()
}

// path renders a source path `name[n]`.
func path(name string, n int) string {
	return name + "[" + strconv.Itoa(n) + "]"
}
