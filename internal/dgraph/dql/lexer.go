package dql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token of DQL.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokWord           // a name or a number: name, director.film, ~genre, 0x1f, 1.5e-3, 2006
	tokIRI            // <any name>; text is the name
	tokString         // "..."; text is the unquoted value
	tokVar            // $name, a GraphQL variable; text is the name without '$'
	tokRegex          // /pattern/flags, only from rescanRegex; text is the pattern, aux the flags
	tokPunct          // { } ( ) [ ] : , @ . * = ! + - / % < > <= >= == !=
	tokError          // a lexical error; text is the message
)

// token is one lexical token. off and end are byte offsets of its text, so
// the parser can tell adjacent tokens (name-with-dashes) from spaced ones
// and restart the lexer at a token (regexps, mutation bodies).
type token struct {
	kind     tokKind
	text     string
	aux      string
	pos      Pos
	off, end int
}

// is reports whether t is the punctuation p.
func (t token) is(p string) bool { return t.kind == tokPunct && t.text == p }

// isWord reports whether t is the word w, ignoring ASCII case.
func (t token) isWord(w string) bool { return t.kind == tokWord && strings.EqualFold(t.text, w) }

// describe names a token for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIRI:
		return "<" + t.text + ">"
	case tokString:
		return strconv.Quote(t.text)
	case tokVar:
		return "$" + t.text
	case tokRegex:
		return "/" + t.text + "/" + t.aux
	case tokPunct:
		return "'" + t.text + "'"
	case tokError:
		return "bad input"
	}
	return strconv.Quote(t.text)
}

// lexer reads DQL tokens on demand. It never fails: a lexical error is a
// tokError token, reported by the parser only if it reaches it (a lookahead
// past a regexp must not fail on the regexp's text).
type lexer struct {
	s    string
	i    int
	line int
	col  int // column of s[i], in characters, from 1
}

func newLexer(s string) lexer { return lexer{s: s, line: 1, col: 1} }

// reset moves the lexer to byte offset off, at position pos.
func (l *lexer) reset(off int, pos Pos) {
	l.i, l.line, l.col = off, pos.Line, pos.Col
}

// advance moves past n bytes that hold no newline.
func (l *lexer) advance(n int) {
	l.col += utf8.RuneCountInString(l.s[l.i : l.i+n])
	l.i += n
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Col: l.col} }

func (l *lexer) errTok(pos Pos, format string, args ...any) token {
	// An error token consumes the rest of the input: nothing after it is read.
	off := l.i
	l.i = len(l.s)
	return token{kind: tokError, text: fmt.Sprintf(format, args...), pos: pos, off: off, end: off}
}

func (l *lexer) next() token {
	l.skipSpaceAndComments()
	pos, off := l.pos(), l.i
	if l.i == len(l.s) {
		return token{kind: tokEOF, pos: pos, off: off, end: off}
	}
	c := l.s[l.i]
	var t token
	switch {
	case isWordStart(c):
		t = l.word()
	case c == '"':
		t = l.str()
	case c == '<':
		t = l.lessOrIRI()
	case c == '$':
		t = l.variable()
	case c == '>' || c == '=' || c == '!':
		n := 1
		if l.i+1 < len(l.s) && l.s[l.i+1] == '=' {
			n = 2
		}
		t = token{kind: tokPunct, text: l.s[l.i : l.i+n]}
		l.advance(n)
	case strings.IndexByte("{}()[]:,@.*+-/%", c) >= 0:
		t = token{kind: tokPunct, text: l.s[l.i : l.i+1]}
		l.advance(1)
	default:
		r, _ := utf8.DecodeRuneInString(l.s[l.i:])
		return l.errTok(pos, "unexpected character %q", r)
	}
	if t.kind == tokError {
		return t
	}
	t.pos, t.off, t.end = pos, off, l.i
	return t
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
			j := strings.IndexByte(l.s[l.i:], '\n')
			if j < 0 {
				j = len(l.s) - l.i
			}
			l.advance(j)
		default:
			return
		}
	}
}

func isWordStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '~'
}

func isWordChar(c byte) bool { return isWordStart(c) || c == '.' }

// word reads a name or a number: ASCII letters, digits, '_', '~' and '.'
// (director.film, 1.5), as Dgraph's lexer does. A number's exponent sign is
// part of it (1e-5); other dashes are separate tokens that the parser joins
// when they sit between two words (Jean-Pierre, 2006-01-02).
func (l *lexer) word() token {
	j := l.i
	for {
		for j < len(l.s) && isWordChar(l.s[j]) {
			j++
		}
		if j+1 < len(l.s) && (l.s[j] == '-' || l.s[j] == '+') && isDigit(l.s[j+1]) &&
			isDigit(l.s[l.i]) && (l.s[j-1] == 'e' || l.s[j-1] == 'E') {
			j += 2
			continue
		}
		break
	}
	t := token{kind: tokWord, text: l.s[l.i:j]}
	l.advance(j - l.i)
	return t
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// str reads "..." with Go's escapes (Dgraph unquotes with strconv.Unquote).
func (l *lexer) str() token {
	pos := l.pos()
	j := l.i + 1
	for j < len(l.s) {
		switch l.s[j] {
		case '"':
			raw := l.s[l.i : j+1]
			v, err := strconv.Unquote(raw)
			if err != nil {
				return l.errTok(pos, "bad escape in string %s", raw)
			}
			if !utf8.ValidString(v) {
				return l.errTok(pos, "string %s is not valid UTF-8 once unescaped", raw)
			}
			l.advance(j + 1 - l.i)
			return token{kind: tokString, text: v}
		case '\n':
			return l.errTok(pos, "unterminated string (a newline inside \"...\" must be written \\n)")
		case '\\':
			j++
		}
		j++
	}
	return l.errTok(pos, "unterminated string")
}

// lessOrIRI reads <name> when a name closes before any character a name
// cannot hold, else the operator < or <= (math comparisons).
func (l *lexer) lessOrIRI() token {
	j := l.i + 1
	for j < len(l.s) && !strings.ContainsRune(iriStop, rune(l.s[j])) && l.s[j] > ' ' {
		j++
	}
	if j < len(l.s) && l.s[j] == '>' && j > l.i+1 {
		name := l.s[l.i+1 : j]
		if utf8.ValidString(name) {
			l.advance(j + 1 - l.i)
			return token{kind: tokIRI, text: name}
		}
	}
	n := 1
	if l.i+1 < len(l.s) && l.s[l.i+1] == '=' {
		n = 2
	}
	t := token{kind: tokPunct, text: l.s[l.i : l.i+n]}
	l.advance(n)
	return t
}

// iriStop holds the characters that end a would-be <name>.
const iriStop = "<>\"{}()|^`\\,"

func (l *lexer) variable() token {
	pos := l.pos()
	j := l.i + 1
	for j < len(l.s) && isWordChar(l.s[j]) {
		j++
	}
	if j == l.i+1 {
		return l.errTok(pos, "expected a variable name after '$'")
	}
	t := token{kind: tokVar, text: l.s[l.i+1 : j]}
	l.advance(j - l.i)
	return t
}

// regex reads /pattern/flags from the current position, which holds '/'.
// A backslash escapes the next character; \/ stands for '/' in the pattern.
func (l *lexer) regex() token {
	pos, off := l.pos(), l.i
	var b strings.Builder
	j := l.i + 1
	for {
		if j >= len(l.s) || l.s[j] == '\n' {
			return l.errTok(pos, "unterminated regular expression (no closing '/')")
		}
		c := l.s[j]
		if c == '/' {
			break
		}
		if c == '\\' {
			if j+1 >= len(l.s) || l.s[j+1] == '\n' {
				return l.errTok(pos, "unterminated regular expression (no closing '/')")
			}
			if l.s[j+1] != '/' {
				b.WriteByte('\\')
			}
			b.WriteByte(l.s[j+1])
			j += 2
			continue
		}
		b.WriteByte(c)
		j++
	}
	k := j + 1
	for k < len(l.s) && 'a' <= l.s[k] && l.s[k] <= 'z' {
		k++
	}
	pattern, flags := b.String(), l.s[j+1:k]
	l.advance(k - l.i)
	return token{kind: tokRegex, text: pattern, aux: flags, pos: pos, off: off, end: l.i}
}

// rawBlock reads the body of a mutation's set or delete block from the
// current position (just after its '{') up to the matching '}', which it
// consumes. Quoted literals may hold braces; a '{' outside them is an error,
// as in Dgraph. It returns the body and where it starts.
func (l *lexer) rawBlock() (body string, at Pos, errTok *token) {
	at, start := l.pos(), l.i
	for l.i < len(l.s) {
		switch c := l.s[l.i]; c {
		case '}':
			body = l.s[start:l.i]
			l.advance(1)
			return body, at, nil
		case '{':
			t := l.errTok(l.pos(), "'{' inside a mutation block (quote it in a literal)")
			return "", at, &t
		case '\n':
			l.i++
			l.line++
			l.col = 1
		case '"':
			if t, ok := l.skipQuoted(); !ok {
				return "", at, &t
			}
		default:
			l.advance(1)
		}
	}
	t := l.errTok(at, "unterminated mutation block (no closing '}')")
	return "", at, &t
}

// skipQuoted moves past a "..." literal in a mutation body.
func (l *lexer) skipQuoted() (token, bool) {
	pos := l.pos()
	j := l.i + 1
	for j < len(l.s) && l.s[j] != '"' && l.s[j] != '\n' {
		if l.s[j] == '\\' && j+1 < len(l.s) && l.s[j+1] != '\n' {
			j++
		}
		j++
	}
	if j >= len(l.s) || l.s[j] != '"' {
		return l.errTok(pos, "unterminated literal in a mutation block"), false
	}
	l.advance(j + 1 - l.i)
	return token{}, true
}
