package etcdlog

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// scanObject walks the top-level members of the JSON object at the start
// of b (after optional spaces) and calls f with each key's raw content and
// its value. String values are passed without their quotes, with esc set
// when they contain escapes; nested objects and arrays are passed raw. It
// reports whether b held a well-formed object, ignoring what follows it.
//
// It is a tolerant scanner, not a validator: it checks the structure
// (quotes, brackets, separators) so that garbage is rejected, and leaves
// numbers and escapes to whoever reads the value.
func scanObject(b []byte, f func(key []byte, v jval)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ks, ke, kesc, ok := scanString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, ke+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return false
		}
		var v jval
		switch c := b[i]; {
		case c == '"':
			s, e, esc, ok := scanString(b, i)
			if !ok {
				return false
			}
			v = jval{b: b[s:e], esc: esc, str: true}
			i = e + 1
		case c == '{' || c == '[':
			e, ok := skipNested(b, i)
			if !ok {
				return false
			}
			v = jval{b: b[i:e]}
			i = e
		default:
			s := i
			for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ' ' && b[i] != '\t' {
				if b[i] == '"' || b[i] == '{' || b[i] == '[' || b[i] == ':' {
					return false
				}
				i++
			}
			if i == s {
				return false
			}
			v = jval{b: b[s:i]}
		}
		key := b[ks:ke]
		if kesc {
			key = nil // no key etcdlog reads has escapes
		}
		if key != nil {
			f(key, v)
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return true
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString reads the string whose opening quote is at b[i] and returns
// the bounds of its content (e is the index of the closing quote).
func scanString(b []byte, i int) (s, e int, esc, ok bool) {
	s = i + 1
	j := s
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, 0, false, false
		}
		q := j + k
		if bytes.IndexByte(b[j:q], '\\') < 0 {
			return s, q, esc, true
		}
		// Walk the escapes between j and q to see whether the quote at q
		// is itself escaped.
		esc = true
		p := j
		for p < q {
			if b[p] == '\\' {
				p += 2
				continue
			}
			p++
		}
		if p == q {
			return s, q, true, true
		}
		// p == q+1: the quote was escaped; keep looking after it.
		j = q + 1
	}
}

// skipNested returns the index just past the object or array at b[i].
func skipNested(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			_, e, _, ok := scanString(b, i)
			if !ok {
				return 0, false
			}
			i = e + 1
			continue
		case '{', '[':
			depth++
			if depth > 64 {
				return 0, false
			}
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}

// appendUnescaped appends the unescaped JSON string content s to dst.
// Invalid escapes are kept as they are.
func appendUnescaped(dst, s []byte) []byte {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:k]...)
		s = s[k:]
		if len(s) < 2 {
			return append(dst, s...)
		}
		switch s[1] {
		case '"', '\\', '/':
			dst = append(dst, s[1])
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, n := decodeU(s)
			if n == 0 {
				dst = append(dst, s[:2]...)
				s = s[2:]
				continue
			}
			dst = utf8.AppendRune(dst, r)
			s = s[n:]
			continue
		default:
			dst = append(dst, s[:2]...)
		}
		s = s[2:]
	}
	return dst
}

// decodeU decodes a \uXXXX escape (and a following low surrogate) at the
// start of s, returning the rune and the bytes used (0 when invalid).
func decodeU(s []byte) (rune, int) {
	r, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[6:]); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 12
				}
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
