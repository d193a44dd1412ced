package dql

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/invariants"
)

const (
	// TextLenMax bounds the text Parse, ParseMutation and ParseUpsert accept
	// (bytes).
	TextLenMax = 32 << 20
	// DepthMax bounds nesting: fields inside fields, filter and math
	// parentheses. Deeper text is an error, never a stack overflow.
	DepthMax = 256
	// FragmentFieldsMax bounds the fields fragment expansion may create, so
	// fragments spreading each other twice over cannot blow up.
	FragmentFieldsMax = 1 << 16
)

// Options are the inputs of a query besides its text.
type Options struct {
	// Vars are the request's GraphQL variables ($name → value), as in
	// Dgraph's Request.vars; a key may omit the '$'. An empty value counts
	// as absent, as in Dgraph.
	Vars map[string]string
	// Uses names query variables used outside the query text, by an upsert's
	// mutations and conditions, so they count as used.
	Uses []string
}

// Parse parses and checks a DQL query without GraphQL variables (declared
// variables take their defaults).
func Parse(text string) (*Query, error) { return ParseWith(text, Options{}) }

// ParseWithVars parses and checks a DQL query, substituting the GraphQL
// variables declared in its query name(...) header from vars.
func ParseWithVars(text string, vars map[string]string) (*Query, error) {
	return ParseWith(text, Options{Vars: vars})
}

// ParseWith parses and checks a DQL query with the given options: the
// syntax, GraphQL variables (declared, typed, given or defaulted), function
// arities and argument types, pagination values, and query variables (each
// defined once, used, defined where used, without cycles between blocks).
func ParseWith(text string, opt Options) (*Query, error) {
	q, err := parseQuery(text, opt)
	if invariants.On && err == nil {
		checkQuery(q, opt)
	}
	return q, err
}

func parseQuery(text string, opt Options) (*Query, error) {
	p, err := newParser(text, opt.Vars)
	if err != nil {
		return nil, err
	}
	q, err := p.document()
	if err != nil {
		return nil, err
	}
	uses := make([]varSite, len(opt.Uses))
	for i, name := range opt.Uses {
		uses[i] = varSite{name: name, block: -1}
	}
	if err := validate(q, uses); err != nil {
		return nil, err
	}
	return q, nil
}

// parser reads DQL from a lexer with a lookahead buffer. It holds the
// request's GraphQL variables, which it substitutes as it reads, and the
// fragments it has seen.
type parser struct {
	lx        lexer
	buf       []token // lookahead from buf[head]; buf[head] is the current token
	head      int
	depth     int
	vals      map[string]string  // request variables by name without '$'
	gql       map[string]*gqlVar // declared GraphQL variables
	frags     map[string]*fragment
	hasSpread bool // some selection holds a fragment spread
}

func newParser(text string, vars map[string]string) (*parser, error) {
	if len(text) > TextLenMax {
		return nil, errorAt(Pos{}, "text of %d bytes is longer than %d", len(text), TextLenMax)
	}
	if !utf8.ValidString(text) {
		return nil, errorAt(invalidUTF8Pos(text), "invalid UTF-8")
	}
	p := &parser{lx: newLexer(text), vals: map[string]string{}}
	// "$a" wins over "a" when both are given.
	for k, v := range vars {
		if v != "" && !strings.HasPrefix(k, "$") {
			p.vals[k] = v
		}
	}
	for k, v := range vars {
		if v != "" && strings.HasPrefix(k, "$") {
			p.vals[k[1:]] = v
		}
	}
	return p, nil
}

func invalidUTF8Pos(text string) Pos {
	pos := Pos{Line: 1, Col: 1}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && w == 1 {
			return pos
		}
		if r == '\n' {
			pos.Line++
			pos.Col = 1
		} else {
			pos.Col++
		}
		i += w
	}
	return pos
}

func (p *parser) fill(k int) {
	for len(p.buf)-p.head <= k {
		p.buf = append(p.buf, p.lx.next())
	}
}

func (p *parser) peek() token { p.fill(0); return p.buf[p.head] }

func (p *parser) peekAt(k int) token { p.fill(k); return p.buf[p.head+k] }

func (p *parser) next() token {
	t := p.peek()
	// Reuse the buffer once the lookahead is used up.
	if p.head++; p.head == len(p.buf) {
		p.buf, p.head = p.buf[:0], 0
	}
	return t
}

// restartAt drops the lookahead and lexes again from byte offset off at
// position pos (for regexps and raw mutation bodies).
func (p *parser) restartAt(off int, pos Pos) {
	p.lx.reset(off, pos)
	p.buf, p.head = p.buf[:0], 0
}

func (p *parser) enter(pos Pos) error {
	p.depth++
	if p.depth > DepthMax {
		return errorAt(pos, "nesting deeper than %d", DepthMax)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// unexpected is the error for token t where want was expected.
func (p *parser) unexpected(t token, want string) error {
	if t.kind == tokError {
		return errorAt(t.pos, "%s", t.text)
	}
	return errorAt(t.pos, "expected %s, found %s", want, t.describe())
}

func (p *parser) expect(punct, want string) (token, error) {
	t := p.peek()
	if !t.is(punct) {
		return t, p.unexpected(t, want)
	}
	return p.next(), nil
}

// isAsAt reports whether the token at k is the keyword "as" (any case).
func (p *parser) isAsAt(k int) bool { return p.peekAt(k).isWord("as") }

// nameSpan returns how many tokens the name at lookahead k spans: 1 for an
// <iri> or a word, 1+2n for words joined by n dashes with no space around
// them (Jean-Pierre, hi-IN), 0 when there is no name.
func (p *parser) nameSpan(k int) int {
	t := p.peekAt(k)
	if t.kind == tokIRI {
		return 1
	}
	if t.kind != tokWord {
		return 0
	}
	n := 1
	for {
		prev, dash, w := p.peekAt(k+n-1), p.peekAt(k+n), p.peekAt(k+n+1)
		if !dash.is("-") || dash.off != prev.end || w.kind != tokWord || w.off != dash.end {
			return n
		}
		n += 2
	}
}

// name reads a name: a predicate, an alias, a block name, a type, a facet.
func (p *parser) name(want string) (string, Pos, error) {
	t := p.peek()
	n := p.nameSpan(0)
	if n == 0 {
		return "", t.pos, p.unexpected(t, want)
	}
	if n == 1 {
		p.next()
		return t.text, t.pos, nil
	}
	var b strings.Builder
	for range n {
		b.WriteString(p.next().text)
	}
	return b.String(), t.pos, nil
}

// varName reads the name of a query variable: one word starting with a
// letter or '_'.
func (p *parser) varName(want string) (string, Pos, error) {
	t := p.peek()
	if t.kind != tokWord {
		return "", t.pos, p.unexpected(t, want)
	}
	if c := t.text[0]; !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return "", t.pos, errorAt(t.pos, "bad variable name %q (it must start with a letter or '_')", t.text)
	}
	p.next()
	return t.text, t.pos, nil
}

// scalar reads a literal value: "text", a word (a number, a bare name,
// 2006-01-02), a signed number, or a GraphQL $variable, substituted.
func (p *parser) scalar(want string) (string, Pos, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return t.text, t.pos, nil
	case t.kind == tokVar:
		p.next()
		v, err := p.gqlValue(t)
		return v, t.pos, err
	case (t.is("-") || t.is("+")) && p.peekAt(1).kind == tokWord:
		p.next()
		w, _, err := p.name(want)
		return t.text + w, t.pos, err
	case t.kind == tokWord:
		return p.name(want)
	}
	return "", t.pos, p.unexpected(t, want)
}

func (p *parser) intValue(what string) (int64, Pos, error) {
	v, pos, err := p.scalar("a number for " + what)
	if err != nil {
		return 0, pos, err
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, pos, errorAt(pos, "%s must be an integer, found %q", what, v)
	}
	return n, pos, nil
}

func (p *parser) floatValue(what string) (float64, Pos, error) {
	v, pos, err := p.scalar("a number for " + what)
	if err != nil {
		return 0, pos, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f || f > maxFloat || f < -maxFloat {
		return 0, pos, errorAt(pos, "%s must be a finite number, found %q", what, v)
	}
	return f, pos, nil
}

const maxFloat = 1.7976931348623157e308

// parseUID reads a uid as Dgraph does: strconv.ParseUint base 0 (0x1f, 31).
func parseUID(v string, pos Pos) (uint64, error) {
	u, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errorAt(pos, "the uid value %q is too large", v)
		}
		return 0, errorAt(pos, "expected a uid (0x1f or 31), found %q", v)
	}
	return u, nil
}

func (p *parser) uidValue(what string) (uint64, Pos, error) {
	v, pos, err := p.scalar("a uid for " + what)
	if err != nil {
		return 0, pos, err
	}
	u, err := parseUID(v, pos)
	return u, pos, err
}
