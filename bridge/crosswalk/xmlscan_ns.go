package crosswalk

// Namespaces: the declarations in scope and the translation of prefixes,
// as encoding/xml's Decoder.Token does them.

// binding is one namespace declaration: prefix "" is the default
// namespace. shadowed is the index in scanner.ns of the declaration of
// the same prefix that it hides, -1 if none; it is kept only while
// scanner.nsIndex is.
type binding struct {
	prefix, uri string
	shadowed    int
}

// maxScanBindings is how many declarations lookups search one by one.
// Records declare a handful; a hostile one with thousands would make every
// name cost as much, so beyond this the scanner indexes them.
const maxScanBindings = 32

// translate maps a prefix to its namespace as encoding/xml does: xmlns
// and xml are fixed, an unprefixed attribute (and an element named xmlns)
// has no namespace, and an unbound prefix stands for itself.
func (s *scanner) translate(prefix, local string, element bool) string {
	switch {
	case prefix == "xmlns", prefix == "" && (!element || local == "xmlns"):
		return prefix
	case prefix == "xml":
		return nsXML
	}
	if uri, ok := s.lookup(prefix); ok {
		return uri
	}
	return prefix
}

// bind declares prefix for the element just opened.
func (s *scanner) bind(prefix, uri string) {
	if s.nsIndex == nil && len(s.ns) == maxScanBindings {
		s.indexBindings()
	}
	b := binding{prefix: prefix, uri: uri, shadowed: -1}
	if s.nsIndex != nil {
		if i, ok := s.nsIndex[prefix]; ok {
			b.shadowed = i
		}
		s.nsIndex[prefix] = len(s.ns)
	}
	s.ns = append(s.ns, b)
}

// indexBindings starts nsIndex from the declarations in scope.
func (s *scanner) indexBindings() {
	s.nsIndex = make(map[string]int, 2*len(s.ns))
	for i := range s.ns {
		b := &s.ns[i]
		b.shadowed = -1
		if j, ok := s.nsIndex[b.prefix]; ok {
			b.shadowed = j
		}
		s.nsIndex[b.prefix] = i
	}
}

// unbind ends the declarations from ns[mark] on.
func (s *scanner) unbind(mark int) {
	for i := len(s.ns) - 1; i >= mark && s.nsIndex != nil; i-- {
		if b := s.ns[i]; b.shadowed >= 0 {
			s.nsIndex[b.prefix] = b.shadowed
		} else {
			delete(s.nsIndex, b.prefix)
		}
	}
	s.ns = s.ns[:mark]
}

// lookup returns the namespace prefix is bound to.
func (s *scanner) lookup(prefix string) (string, bool) {
	if s.nsIndex != nil {
		i, ok := s.nsIndex[prefix]
		if !ok {
			return "", false
		}
		return s.ns[i].uri, true
	}
	for i := len(s.ns) - 1; i >= 0; i-- {
		if s.ns[i].prefix == prefix {
			return s.ns[i].uri, true
		}
	}
	return "", false
}
