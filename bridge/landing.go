package bridge

import (
	"bytes"
	"encoding/xml"
	"net/url"
	"strings"
)

// Namespaces whose landing page rsbridge knows how to find.
const (
	nsDC     = "http://purl.org/dc/elements/1.1/"
	nsJunii2 = "http://irdb.nii.ac.jp/oai"
)

// isJPCOAR recognises every JPCOAR namespace variant (GitHub or IRDB-hosted,
// 1.0, 2.0, 2.1, …; MD-001).
func isJPCOAR(ns string) bool {
	return strings.HasPrefix(ns, "https://github.com/JPCOAR/schema/blob/master/") ||
		strings.HasPrefix(ns, "https://irdb.nii.ac.jp/schema/jpcoar/")
}

// landingPage returns the item's landing page named by the metadata, or "":
// JPCOAR jpcoar:identifier with identifierType="URI" among the root's direct
// children (nested ones describe other things, D-PMH-11), preferring one on the
// repository's host (MD-003); junii2 URI; in oai_dc the first http(s)
// dc:identifier. Only absolute http(s) URLs qualify. It runs for every new or
// changed record, so it scans tokens (never building a tree), looks only at the
// root's children, and stops at the first answer that cannot be bettered.
func landingPage(metadata []byte, repoHost string) string {
	d := xml.NewDecoder(bytes.NewReader(metadata))
	var scopes []map[string]string // prefix -> namespace, per open element
	resolve := func(prefix string) string {
		for i := len(scopes) - 1; i >= 0; i-- {
			if ns, ok := scopes[i][prefix]; ok {
				return ns
			}
		}
		return ""
	}
	var rootNS, first string
	var want func(ns, local string, attrs []xml.Attr) bool
	for {
		tok, err := d.RawToken()
		if err != nil {
			return first
		}
		switch t := tok.(type) {
		case xml.StartElement:
			scope := map[string]string{}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" {
					scope[a.Name.Local] = a.Value
				} else if a.Name.Space == "" && a.Name.Local == "xmlns" {
					scope[""] = a.Value
				}
			}
			scopes = append(scopes, scope)
			ns := resolve(t.Name.Space)
			switch len(scopes) {
			case 1:
				rootNS = ns
				switch {
				case isJPCOAR(ns):
					want = func(ns, local string, attrs []xml.Attr) bool {
						return isJPCOAR(ns) && local == "identifier" && attrValue(attrs, "identifierType") == "URI"
					}
				case ns == nsJunii2:
					want = func(ns, local string, _ []xml.Attr) bool { return ns == nsJunii2 && local == "URI" }
				default:
					want = func(ns, local string, _ []xml.Attr) bool { return ns == nsDC && local == "identifier" }
				}
			case 2:
				if !want(ns, t.Name.Local, t.Attr) {
					continue
				}
				text, err := elementText(d)
				scopes = scopes[:len(scopes)-1]
				if err != nil {
					return first
				}
				if u := strings.TrimSpace(text); isHTTP(u) {
					if !isJPCOAR(rootNS) || onHost(u, repoHost) {
						return u // nothing can do better
					}
					if first == "" {
						first = u
					}
				}
			}
		case xml.EndElement:
			scopes = scopes[:len(scopes)-1]
			if len(scopes) == 0 {
				return first
			}
		}
	}
}

// elementText reads the character data of the element just started, through its
// end tag.
func elementText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	for depth := 1; depth > 0; {
		tok, err := d.RawToken()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 1 {
				b.Write(t)
			}
		}
	}
	return b.String(), nil
}

func attrValue(attrs []xml.Attr, local string) string {
	for _, a := range attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func onHost(u, host string) bool {
	p, err := url.Parse(u)
	return err == nil && host != "" && strings.EqualFold(p.Hostname(), host)
}

func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
