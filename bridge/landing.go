package bridge

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/antchfx/xmlquery"
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
// dc:identifier. Only absolute http(s) URLs qualify.
func landingPage(metadata []byte, repoHost string) string {
	doc, err := xmlquery.Parse(bytes.NewReader(metadata))
	if err != nil {
		return ""
	}
	var root *xmlquery.Node
	for c := doc.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xmlquery.ElementNode {
			root = c
			break
		}
	}
	if root == nil {
		return ""
	}
	var candidates []string
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != xmlquery.ElementNode {
			continue
		}
		switch {
		case isJPCOAR(root.NamespaceURI) && isJPCOAR(c.NamespaceURI) && c.Data == "identifier" && c.SelectAttr("identifierType") == "URI",
			root.NamespaceURI == nsJunii2 && c.NamespaceURI == nsJunii2 && c.Data == "URI",
			!isJPCOAR(root.NamespaceURI) && root.NamespaceURI != nsJunii2 && c.NamespaceURI == nsDC && c.Data == "identifier":
			if u := strings.TrimSpace(c.InnerText()); isHTTP(u) {
				candidates = append(candidates, u)
			}
		}
	}
	if len(candidates) == 0 {
		return ""
	}
	for _, u := range candidates {
		if p, err := url.Parse(u); err == nil && strings.EqualFold(p.Hostname(), repoHost) {
			return u
		}
	}
	return candidates[0]
}

func isHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
