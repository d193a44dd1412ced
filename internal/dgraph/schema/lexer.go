package schema

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token of the schema language.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokName           // name, director.film, dgraph.type, ~friend, dateTime
	tokIRI            // <any name>, <~friend>
	tokString         // "..." (index options)
	tokPunct          // one of : . , @ ( ) [ ] { } !
)

// token is one lexical token; text is the name, the IRI or string contents,
// or the punctuation character.
type token struct {
	kind tokKind
	text string
	pos  Pos
}

func (t token) is(punct byte) bool {
	return t.kind == tokPunct && t.text[0] == punct
}

// describe names a token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIRI:
		return "<" + t.text + ">"
	case tokString:
		return fmt.Sprintf("%q", t.text)
	case tokPunct:
		return "'" + t.text + "'"
	}
	return fmt.Sprintf("%q", t.text)
}

// lexer splits schema text into tokens; whitespace, newlines and # comments
// separate them.
type lexer struct {
	s    string
	i    int
	line int
	col  int // column of s[i], in characters, from 1
}

func lex(s string) ([]token, error) {
	l := lexer{s: s, line: 1, col: 1}
	var out []token
	for {
		from := l.i
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		// Every token but the last consumes input, so the loop ends.
		assert(t.kind == tokEOF || l.i > from, "lexer stuck at byte %d", from)
		out = append(out, t)
		if t.kind == tokEOF {
			return out, nil
		}
	}
}

// advance moves past n bytes that hold no newline.
func (l *lexer) advance(n int) {
	l.col += utf8.RuneCountInString(l.s[l.i : l.i+n])
	l.i += n
}

func (l *lexer) next() (token, error) {
	l.skipSpaceAndComments()
	pos := Pos{Line: l.line, Col: l.col}
	if l.i == len(l.s) {
		return token{kind: tokEOF, pos: pos}, nil
	}
	c := l.s[l.i]
	switch {
	case strings.IndexByte(":.,@()[]{}!", c) >= 0:
		l.advance(1)
		return token{kind: tokPunct, text: string(c), pos: pos}, nil
	case c == '<':
		return l.iri(pos)
	case c == '"':
		return l.str(pos)
	}
	r, w := utf8.DecodeRuneInString(l.s[l.i:])
	if !isNameStart(r) {
		return token{}, errorAt(pos, "unexpected character %q", r)
	}
	j := l.i + w
	for j < len(l.s) {
		r, w := utf8.DecodeRuneInString(l.s[j:])
		if !isNameChar(r) {
			break
		}
		j += w
	}
	for j > l.i+1 && l.s[j-1] == '.' { // "int." is the type then the end
		j--
	}
	text := l.s[l.i:j]
	l.advance(j - l.i)
	return token{kind: tokName, text: text, pos: pos}, nil
}

func (l *lexer) skipSpaceAndComments() {
	for l.i < len(l.s) {
		switch c := l.s[l.i]; {
		case c == '\n':
			l.i++
			l.line++
			l.col = 1
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			l.advance(1)
		case c == '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		default:
			return
		}
	}
}

// iri reads <...>: any printable characters but <>, quotes and spaces.
func (l *lexer) iri(pos Pos) (token, error) {
	j := l.i + 1
	for j < len(l.s) && l.s[j] != '>' {
		r, w := utf8.DecodeRuneInString(l.s[j:])
		if r == '<' || r == '"' || r == utf8.RuneError && w == 1 || unicode.IsSpace(r) || unicode.IsControl(r) {
			return token{}, errorAt(pos, "character %q not allowed in <name>", r)
		}
		j += w
	}
	if j == len(l.s) {
		return token{}, errorAt(pos, "unterminated <name> (no '>')")
	}
	if j == l.i+1 {
		return token{}, errorAt(pos, "empty name <>")
	}
	text := l.s[l.i+1 : j]
	l.advance(j + 1 - l.i)
	return token{kind: tokIRI, text: text, pos: pos}, nil
}

// str reads "..." with \" and \\ escapes (index option values).
func (l *lexer) str(pos Pos) (token, error) {
	var b strings.Builder
	j := l.i + 1
	for j < len(l.s) {
		c := l.s[j]
		switch {
		case c == '"':
			l.advance(j + 1 - l.i)
			return token{kind: tokString, text: b.String(), pos: pos}, nil
		case c == '\n':
			return token{}, errorAt(pos, "unterminated string")
		case c == '\\' && j+1 < len(l.s) && (l.s[j+1] == '"' || l.s[j+1] == '\\'):
			b.WriteByte(l.s[j+1])
			j += 2
			continue
		case c == '\\':
			return token{}, errorAt(pos, "only \\\" and \\\\ escapes are allowed in strings")
		}
		b.WriteByte(c)
		j++
	}
	return token{}, errorAt(pos, "unterminated string")
}

func isNameStart(r rune) bool {
	return r == '_' || r == '~' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isNameChar: letters, digits, '_', '.', '-' (predicate names such as
// director.film and performance.character_note).
func isNameChar(r rune) bool {
	return r == '_' || r == '.' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
