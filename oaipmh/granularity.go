package oaipmh

import (
	"fmt"
	"strings"
	"time"
)

// Granularity is the datestamp granularity a repository declares in Identify.
type Granularity int

const (
	// GranularityDay is YYYY-MM-DD, which every repository supports.
	GranularityDay Granularity = iota
	// GranularitySeconds is YYYY-MM-DDThh:mm:ssZ.
	GranularitySeconds
)

const (
	dayLayout     = "2006-01-02"
	secondsLayout = "2006-01-02T15:04:05Z"
)

// ParseGranularity reads the Identify granularity literal.
func ParseGranularity(s string) (Granularity, error) {
	switch strings.TrimSpace(s) {
	case "YYYY-MM-DD":
		return GranularityDay, nil
	case "YYYY-MM-DDThh:mm:ssZ":
		return GranularitySeconds, nil
	}
	return GranularityDay, fmt.Errorf("unknown granularity %q", s)
}

// String returns the OAI-PMH literal.
func (g Granularity) String() string {
	if g == GranularitySeconds {
		return "YYYY-MM-DDThh:mm:ssZ"
	}
	return "YYYY-MM-DD"
}

// Format renders t (in UTC) at this granularity, for from and until arguments.
func (g Granularity) Format(t time.Time) string {
	if g == GranularitySeconds {
		return t.UTC().Format(secondsLayout)
	}
	return t.UTC().Format(dayLayout)
}

// Truncate rounds t down to this granularity.
func (g Granularity) Truncate(t time.Time) time.Time {
	t = t.UTC()
	if g == GranularitySeconds {
		return t.Truncate(time.Second)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Unit is one granule: a day or a second.
func (g Granularity) Unit() time.Duration {
	if g == GranularitySeconds {
		return time.Second
	}
	return 24 * time.Hour
}

// ParseDatestamp reads an OAI-PMH datestamp. Both granularities are accepted, and
// for robustness also RFC 3339 with fractions or offsets and a zone-less form (taken
// as UTC). A date-only value is the start of that UTC day.
func ParseDatestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{secondsLayout, dayLayout, time.RFC3339Nano, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid datestamp %q", s)
}
