package rdf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/value"
)

// ParseLine parses one line of N-Quads text (without its newline). ok is
// false, with a nil error, for a blank or comment-only line. Errors are
// *Error with Line 1.
func ParseLine(line string) (nq NQuad, ok bool, err error) {
	return parseLine(line, 1)
}

// Parse parses a block of N-Quads text, one statement per line (the body of
// a Dgraph set or delete block). It stops at the first error.
func Parse(text string) ([]NQuad, error) {
	var out []NQuad
	lineNo := 0
	for line := range strings.Lines(text) {
		lineNo++
		nq, ok, err := parseLine(strings.TrimSuffix(line, "\n"), lineNo)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, nq)
		}
	}
	return out, nil
}

func parseLine(s string, lineNo int) (NQuad, bool, error) {
	p := parser{s: s, line: lineNo, end: len(s)}
	nq, ok, err := p.statement()
	if invariants.On && err == nil && ok {
		checkRoundTrip(nq)
	}
	return nq, ok, err
}

// parser reads one line. i is the read offset; end excludes trailing
// whitespace (a \r of a CRLF file among it).
type parser struct {
	s    string
	i    int
	end  int
	line int
}

func (p *parser) statement() (nq NQuad, ok bool, err error) {
	if !utf8.ValidString(p.s) {
		bad := 0
		for bad < len(p.s) {
			r, w := utf8.DecodeRuneInString(p.s[bad:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			bad += w
		}
		return NQuad{}, false, p.errAt(bad, "invalid UTF-8")
	}
	for p.end > 0 && isTrailingSpace(p.s[p.end-1]) {
		p.end--
	}
	p.skipSpace()
	if p.i == p.end || p.s[p.i] == '#' {
		return nq, false, nil
	}
	if nq.Subject, err = p.subject(); err != nil {
		return NQuad{}, false, err
	}
	p.skipSpace()
	if nq.Predicate, nq.Lang, err = p.predicate(); err != nil {
		return NQuad{}, false, err
	}
	p.skipSpace()
	objAt := p.i
	if nq.Object, err = p.object(&nq.Lang); err != nil {
		return NQuad{}, false, err
	}
	if err = p.tail(&nq); err != nil {
		return NQuad{}, false, err
	}
	if err = p.check(&nq, objAt); err != nil {
		return NQuad{}, false, err
	}
	return nq, true, nil
}

// tail reads the optional label and facets, the final '.' and an optional
// comment.
func (p *parser) tail(nq *NQuad) (err error) {
	p.skipSpace()
	if p.i < p.end && (p.s[p.i] == '<' || p.s[p.i] == '_') {
		if nq.Label, err = p.label(); err != nil {
			return err
		}
		p.skipSpace()
	}
	if p.i < p.end && p.s[p.i] == '(' {
		if nq.Facets, err = p.facets(); err != nil {
			return err
		}
		p.skipSpace()
	}
	if p.i == p.end {
		return p.errAt(p.i, "expected '.' at the end of the statement")
	}
	if p.s[p.i] != '.' {
		return p.errAt(p.i, "expected '.', a label or facets, found %s", p.found())
	}
	p.i++
	p.skipSpace()
	if p.i < p.end && p.s[p.i] != '#' {
		return p.errAt(p.i, "unexpected %s after '.' (one statement per line)", p.found())
	}
	return nil
}

// check applies the rules that tie the parts of a quad together.
func (p *parser) check(nq *NQuad, objAt int) error {
	switch {
	case nq.Predicate == Star && nq.Object.Kind != Wildcard:
		return p.errAt(objAt, "a * predicate needs a * object (<s> * * .)")
	case nq.Lang != "" && nq.Object.Kind != Literal && nq.Object.Kind != Wildcard && nq.Object.Kind != ValVar:
		return p.errAt(objAt, "language @%s on a %s object (needs a literal, val() or *)", nq.Lang, nq.Object.Kind)
	case nq.Predicate == PredType && nq.Object.Kind != Literal && nq.Object.Kind != Wildcard && nq.Object.Kind != ValVar:
		return p.errAt(objAt, "<%s> takes a type name literal, found a %s", PredType, nq.Object.Kind)
	}
	return nil
}

func (p *parser) subject() (Term, error) {
	c := p.s[p.i]
	switch {
	case c == '<':
		return p.iriTerm(true)
	case c == '_':
		return p.blank()
	case c == 'u':
		return p.variable("uid", UIDVar)
	case c >= '0' && c <= '9':
		return p.bareUID()
	case c == '*':
		return Term{}, p.errAt(p.i, "subject cannot be * (drop a predicate with Alter)")
	}
	return Term{}, p.errAt(p.i, "expected a subject (<iri>, _:blank, uid(v) or a uid), found %s", p.found())
}

func (p *parser) predicate() (pred, lang string, err error) {
	if p.i == p.end {
		return "", "", p.errAt(p.i, "expected a predicate")
	}
	switch p.s[p.i] {
	case '*':
		p.i++
		return Star, "", nil
	case '<':
	default:
		return "", "", p.errAt(p.i, "expected a predicate <iri> or *, found %s", p.found())
	}
	at := p.i
	name, err := p.iri()
	if err != nil {
		return "", "", err
	}
	// Dgraph reads <name@en> as predicate name with language en.
	if k := strings.LastIndexByte(name, '@'); k > 0 {
		if lang = name[k+1:]; !validLang(lang) {
			return "", "", p.errAt(at, "bad language %q in predicate <%s>", lang, name)
		}
		name = name[:k]
	}
	if !sane(name) {
		return "", "", p.errAt(at, "predicate <%s> has no letter or digit", name)
	}
	if strings.IndexByte(name, '@') >= 0 {
		return "", "", p.errAt(at, "predicate <%s> has an '@' (only <name@lang> is allowed)", name)
	}
	return name, lang, nil
}

func (p *parser) object(lang *string) (Term, error) {
	if p.i == p.end {
		return Term{}, p.errAt(p.i, "expected an object")
	}
	switch c := p.s[p.i]; c {
	case '<':
		return p.iriTerm(true)
	case '_':
		return p.blank()
	case '"':
		return p.literal(lang)
	case '*':
		p.i++
		return Term{Kind: Wildcard}, nil
	case 'u':
		return p.variable("uid", UIDVar)
	case 'v':
		return p.variable("val", ValVar)
	}
	return Term{}, p.errAt(p.i, "expected an object (<iri>, _:blank, \"literal\", uid(v), val(v) or *), found %s", p.found())
}

func (p *parser) label() (Term, error) {
	if p.s[p.i] == '_' {
		return p.blank()
	}
	return p.iriTerm(false)
}

// iriTerm reads <iri>. With uids, an IRI that is a number is a UID term
// (as Dgraph reads <0x1f>) and one that starts with _: is a blank node.
func (p *parser) iriTerm(uids bool) (Term, error) {
	at := p.i
	name, err := p.iri()
	if err != nil {
		return Term{}, err
	}
	if uids && strings.HasPrefix(name, "_:") {
		if !sane(name[2:]) {
			return Term{}, p.errAt(at, "blank node <%s> has no letter or digit", name)
		}
		return Term{Kind: Blank, Name: name[2:]}, nil
	}
	// Only a digit can start a uid: testing it first spares ParseUint's
	// error allocations on every ordinary IRI.
	if uids && name[0] >= '0' && name[0] <= '9' {
		if u, err := strconv.ParseUint(name, 0, 64); err == nil {
			if u == 0 {
				return Term{}, p.errAt(at, "uid 0 is not a valid uid")
			}
			return Term{Kind: UID, UID: u}, nil
		}
	}
	if !sane(name) {
		return Term{}, p.errAt(at, "IRI <%s> has no letter or digit", name)
	}
	return Term{Kind: IRI, Name: name}, nil
}

// iri reads <...> and returns the text between the brackets with \u and \U
// escapes decoded (IRIREF of the N-Quads grammar).
func (p *parser) iri() (string, error) {
	start := p.i
	j := p.i + 1
	for j < p.end {
		c := p.s[j]
		switch {
		case c == '>':
			if j == start+1 {
				return "", p.errAt(start, "empty IRI <>")
			}
			p.i = j + 1
			return p.s[start+1 : j], nil
		case c == '\\':
			return p.iriEscaped(start, j)
		case iriBad[c]:
			return "", p.errAt(j, "character %s not allowed in an IRI", quoteByte(c))
		}
		j++
	}
	return "", p.errAt(start, "unterminated IRI (no '>')")
}

// iriEscaped finishes an IRI that has escapes; j is at the first '\'.
func (p *parser) iriEscaped(start, j int) (string, error) {
	var b strings.Builder
	b.WriteString(p.s[start+1 : j])
	for j < p.end {
		c := p.s[j]
		switch {
		case c == '>':
			p.i = j + 1
			return b.String(), nil
		case c == '\\':
			if j+1 >= p.end || (p.s[j+1] != 'u' && p.s[j+1] != 'U') {
				return "", p.errAt(j, "only \\u and \\U escapes are allowed in an IRI")
			}
			r, n, err := p.uchar(j)
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			j += n
			continue
		case iriBad[c]:
			return "", p.errAt(j, "character %s not allowed in an IRI", quoteByte(c))
		}
		b.WriteByte(c)
		j++
	}
	return "", p.errAt(start, "unterminated IRI (no '>')")
}

// blank reads _:label (BLANK_NODE_LABEL: no '.' at the end).
func (p *parser) blank() (Term, error) {
	start := p.i
	if p.i+1 >= p.end || p.s[p.i+1] != ':' {
		return Term{}, p.errAt(start, "expected _: for a blank node")
	}
	j := p.i + 2
	if j == p.end {
		return Term{}, p.errAt(start, "empty blank node label")
	}
	r, w := utf8.DecodeRuneInString(p.s[j:])
	if !isPNCharsU(r) && !(r >= '0' && r <= '9') {
		return Term{}, p.errAt(j, "blank node label cannot start with %q", r)
	}
	j += w
	for j < p.end {
		r, w = utf8.DecodeRuneInString(p.s[j:])
		if r != '.' && !isPNChar(r) {
			break
		}
		j += w
	}
	for p.s[j-1] == '.' { // the statement's '.', not the label's
		j--
	}
	name := p.s[start+2 : j]
	if !sane(name) {
		return Term{}, p.errAt(start, "blank node _:%s has no letter or digit", name)
	}
	p.i = j
	return Term{Kind: Blank, Name: name}, nil
}

// validBlankLabel reports whether _:name would read back as name.
func validBlankLabel(name string) bool {
	for i, r := range name {
		switch {
		case i == 0 && !isPNCharsU(r) && !(r >= '0' && r <= '9'):
			return false
		case r != '.' && !isPNChar(r):
			return false
		}
	}
	return name != "" && name[len(name)-1] != '.'
}

// variable reads uid(v) or val(v); spaces are allowed inside the parentheses.
func (p *parser) variable(fn string, kind Kind) (Term, error) {
	start := p.i
	if !strings.HasPrefix(p.s[p.i:p.end], fn) {
		return Term{}, p.errAt(start, "expected %s(...), found %s", fn, p.found())
	}
	p.i += len(fn)
	p.skipSpace()
	if p.i == p.end || p.s[p.i] != '(' {
		return Term{}, p.errAt(p.i, "expected '(' after %s", fn)
	}
	p.i++
	p.skipSpace()
	j := p.i
	for j < p.end && !isSpace(p.s[j]) && p.s[j] != ')' && p.s[j] != '(' {
		j++
	}
	if j == p.i {
		return Term{}, p.errAt(p.i, "empty variable name in %s()", fn)
	}
	name := p.s[p.i:j]
	p.i = j
	p.skipSpace()
	if p.i == p.end || p.s[p.i] != ')' {
		return Term{}, p.errAt(p.i, "expected ')' after %s(%s", fn, name)
	}
	p.i++
	return Term{Kind: kind, Name: name}, nil
}

// bareUID reads a subject uid written without brackets (0x1f), as Dgraph
// allows.
func (p *parser) bareUID() (Term, error) {
	start := p.i
	j := p.i
	for j < p.end && (isAlnum(p.s[j]) || p.s[j] == '_') {
		j++
	}
	u, err := strconv.ParseUint(p.s[start:j], 0, 64)
	if err != nil {
		return Term{}, p.errAt(start, "bad uid %q", p.s[start:j])
	}
	if u == 0 {
		return Term{}, p.errAt(start, "uid 0 is not a valid uid")
	}
	p.i = j
	return Term{Kind: UID, UID: u}, nil
}

// literal reads "..." with an optional @lang or ^^<datatype>.
func (p *parser) literal(lang *string) (Term, error) {
	start := p.i
	lex, err := p.quoted()
	if err != nil {
		return Term{}, err
	}
	t := Term{Kind: Literal, Datatype: TypeDefault}
	if p.i < p.end && p.s[p.i] == '@' {
		at := p.i
		j := p.i + 1
		for j < p.end && (isAlnum(p.s[j]) || p.s[j] == '-') {
			j++
		}
		l := p.s[p.i+1 : j]
		if !validLang(l) {
			return Term{}, p.errAt(at, "bad language tag @%s", l)
		}
		*lang = l // the literal's own tag wins over a <pred@lang> one, as in Dgraph
		p.i = j
	} else if strings.HasPrefix(p.s[p.i:p.end], "^^") {
		p.i += 2
		if p.i == p.end || p.s[p.i] != '<' {
			return Term{}, p.errAt(p.i, "expected <datatype> after ^^")
		}
		at := p.i
		iri, err := p.iri()
		if err != nil {
			return Term{}, err
		}
		dt, ok := datatypes[iri]
		if !ok {
			return Term{}, p.errAt(at, "unknown datatype <%s>", iri)
		}
		t.Datatype = dt
	}
	if t.Value, err = ParseValue(lex, t.Datatype); err != nil {
		return Term{}, p.wrapAt(start, err)
	}
	return t, nil
}

// quoted reads "..." at p.i and returns the unescaped text. A literal
// without escapes is a substring of the line (no copy).
func (p *parser) quoted() (string, error) {
	start := p.i
	for j := p.i + 1; j < p.end; j++ {
		switch p.s[j] {
		case '"':
			p.i = j + 1
			return p.s[start+1 : j], nil
		case '\\':
			return p.quotedEscaped(start, j)
		case '\r', '\n':
			return "", p.errAt(j, "line break in a literal (write \\n or \\r)")
		}
	}
	return "", p.errAt(start, "unterminated literal (no closing '\"')")
}

func (p *parser) quotedEscaped(start, j int) (string, error) {
	var b strings.Builder
	b.WriteString(p.s[start+1 : j])
	for j < p.end {
		c := p.s[j]
		switch c {
		case '"':
			p.i = j + 1
			return b.String(), nil
		case '\r', '\n':
			return "", p.errAt(j, "line break in a literal (write \\n or \\r)")
		case '\\':
			r, n, err := p.escape(j)
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			j += n
			continue
		}
		b.WriteByte(c)
		j++
	}
	return "", p.errAt(start, "unterminated literal (no closing '\"')")
}

// escape decodes the escape at p.s[j] == '\' and returns the rune and how
// many bytes it took: ECHAR (\t \b \n \r \f \" \' \\), UCHAR (\uXXXX,
// \UXXXXXXXX) and, as Dgraph allows, \xHH for ASCII.
func (p *parser) escape(j int) (rune, int, error) {
	if j+1 >= p.end {
		return 0, 0, p.errAt(j, "escape at the end of the line")
	}
	switch c := p.s[j+1]; c {
	case 't':
		return '\t', 2, nil
	case 'b':
		return '\b', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 'f':
		return '\f', 2, nil
	case '"', '\'', '\\':
		return rune(c), 2, nil
	case 'u', 'U':
		return p.uchar(j)
	case 'x':
		if j+4 > p.end {
			return 0, 0, p.errAt(j, "\\x needs two hex digits")
		}
		v, err := strconv.ParseUint(p.s[j+2:j+4], 16, 8)
		if err != nil || v > 0x7f {
			return 0, 0, p.errAt(j, "\\x%s is not an ASCII escape (use \\u for others)", p.s[j+2:j+4])
		}
		return rune(v), 4, nil
	}
	r, _ := utf8.DecodeRuneInString(p.s[j+1:])
	return 0, 0, p.errAt(j, "invalid escape \\%c", r)
}

// uchar decodes \uXXXX or \UXXXXXXXX at p.s[j] == '\'.
func (p *parser) uchar(j int) (rune, int, error) {
	n := 4
	if p.s[j+1] == 'U' {
		n = 8
	}
	if j+2+n > p.end {
		return 0, 0, p.errAt(j, "\\%c needs %d hex digits", p.s[j+1], n)
	}
	hex := p.s[j+2 : j+2+n]
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || strings.ContainsAny(hex, "+-_") {
		return 0, 0, p.errAt(j, "\\%c%s: bad hex digits", p.s[j+1], hex)
	}
	r := rune(v)
	if !utf8.ValidRune(r) {
		return 0, 0, p.errAt(j, "\\%c%s is not a Unicode scalar value", p.s[j+1], hex)
	}
	return r, 2 + n, nil
}

// facets reads (key=value, ...) and returns the facets sorted by key.
func (p *parser) facets() ([]Facet, error) {
	open := p.i
	p.i++
	var out []Facet
	for {
		p.skipSpace()
		f, err := p.facet()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
		p.skipSpace()
		if p.i == p.end {
			return nil, p.errAt(open, "unterminated facets (no ')')")
		}
		if p.s[p.i] == ')' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return nil, p.errAt(p.i, "expected ',' or ')' after a facet, found %s", p.found())
		}
		p.i++
	}
	slices.SortStableFunc(out, func(a, b Facet) int { return strings.Compare(a.Key, b.Key) })
	for i := 1; i < len(out); i++ {
		if out[i].Key == out[i-1].Key {
			return nil, p.errAt(open, "facet key %q repeated", out[i].Key)
		}
	}
	return out, nil
}

func (p *parser) facet() (Facet, error) {
	j := p.i
	for j < p.end && !isFacetStop(p.s[j]) && p.s[j] != '"' && p.s[j] != '(' {
		j++
	}
	if j == p.i {
		return Facet{}, p.errAt(p.i, "expected a facet key, found %s", p.found())
	}
	key := p.s[p.i:j]
	p.i = j
	p.skipSpace()
	if p.i == p.end || p.s[p.i] != '=' {
		return Facet{}, p.errAt(p.i, "expected '=' after facet key %q", key)
	}
	p.i++
	p.skipSpace()
	if p.i < p.end && p.s[p.i] == '"' {
		s, err := p.quoted()
		if err != nil {
			return Facet{}, err
		}
		return Facet{Key: key, Value: value.Str(s)}, nil
	}
	vAt := p.i
	for p.i < p.end && !isFacetStop(p.s[p.i]) {
		p.i++
	}
	v, err := FacetValue(p.s[vAt:p.i])
	if err != nil {
		return Facet{}, p.wrapAt(vAt, err)
	}
	return Facet{Key: key, Value: v}, nil
}

func isFacetStop(c byte) bool {
	return c == '=' || c == ',' || c == ')' || isSpace(c)
}

// errAt builds a syntax error at byte offset at of the line.
func (p *parser) errAt(at int, format string, args ...any) error {
	return &Error{Line: p.line, Col: p.col(at), Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
}

// wrapAt positions a value error (wrapping ErrValue or ErrRange).
func (p *parser) wrapAt(at int, err error) error {
	return &Error{Line: p.line, Col: p.col(at), Msg: strings.TrimPrefix(err.Error(), "rdf: "), Err: err}
}

func (p *parser) col(at int) int {
	return utf8.RuneCountInString(p.s[:min(at, len(p.s))]) + 1
}

// found describes what is at p.i for an error message.
func (p *parser) found() string {
	if p.i >= p.end {
		return "end of line"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.i < p.end && isSpace(p.s[p.i]) {
		p.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

func isTrailingSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func quoteByte(c byte) string { return strconv.QuoteRune(rune(c)) }

// iriBad marks the ASCII bytes IRIREF excludes: controls and space, and
// <>"{}|^`\ (a '\' is only the start of an escape).
var iriBad = func() (t [256]bool) {
	for c := 0; c <= 0x20; c++ {
		t[c] = true
	}
	for _, c := range "<>\"{}|^`\\" {
		t[c] = true
	}
	return t
}()

// validLang checks a language tag as Dgraph does: a letter, then letters,
// digits and '-', not ending in '-'.
func validLang(s string) bool {
	if s == "" || !isLetter(s[0]) || s[len(s)-1] == '-' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sane is Dgraph's check that a name has at least one letter or digit.
func sane(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// PN_CHARS_BASE, PN_CHARS_U and PN_CHARS of the N-Quads grammar.
func isPNCharsBase(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z',
		r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

func isPNCharsU(r rune) bool { return r == '_' || r == ':' || isPNCharsBase(r) }

func isPNChar(r rune) bool {
	switch {
	case r == '-', r >= '0' && r <= '9', r == 0xB7, r >= 0x300 && r <= 0x36F, r >= 0x203F && r <= 0x2040:
		return true
	}
	return isPNCharsU(r)
}
