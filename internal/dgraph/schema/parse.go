package schema

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/invariants"
)

// TextLenMax bounds the schema text Parse accepts (bytes).
const TextLenMax = 16 << 20

// Parse reads DQL schema text:
//
//	name: string @index(exact, term) @lang @upsert .
//	friend: [uid] @reverse @count .
//	type Person {
//		name
//		friend
//		<~friend>
//	}
//
// Statements may span lines and share them; # starts a comment. Type fields
// may also use the old "name: type" form, whose type is ignored as in
// Dgraph. Parse checks each definition on its own (see the package doc);
// what depends on an existing schema (type fields that name predicates,
// reserved names, allowed changes) is checked by Apply.
func Parse(text string) (*Schema, error) {
	s, err := parse(text)
	if err == nil && invariants.On {
		s.check()
	}
	return s, err
}

func parse(text string) (*Schema, error) {
	if len(text) > TextLenMax {
		return nil, errorAt(Pos{}, "schema text of %d bytes exceeds %d", len(text), TextLenMax)
	}
	if !utf8.ValidString(text) {
		return nil, errorAt(invalidUTF8Pos(text), "invalid UTF-8")
	}
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := parser{toks: toks}
	s := New()
	for p.peek().kind != tokEOF {
		t := p.peek()
		if t.kind == tokName && t.text == "type" && p.peekAt(1).kind != tokEOF && !p.peekAt(1).is(':') {
			ty, err := p.typeDef()
			if err != nil {
				return nil, err
			}
			if old, dup := s.types[ty.Name]; dup {
				return nil, errorAt(ty.Pos, "type %s defined twice (first at line %d)", ty.Name, old.Pos.Line)
			}
			s.types[ty.Name] = ty
			continue
		}
		pred, err := p.predicate()
		if err != nil {
			return nil, err
		}
		if old, dup := s.preds[pred.Name]; dup {
			return nil, errorAt(pred.Pos, "predicate %s defined twice (first at line %d)", pred.Name, old.Pos.Line)
		}
		s.preds[pred.Name] = pred
	}
	return s, nil
}

func invalidUTF8Pos(text string) Pos {
	pos := Pos{Line: 1, Col: 1}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && w == 1 {
			return pos
		}
		if r == '\n' {
			pos.Line, pos.Col = pos.Line+1, 1
		} else {
			pos.Col++
		}
		i += w
	}
	return pos
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token { return p.toks[min(p.i+k, len(p.toks)-1)] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// expect consumes the punctuation c or fails naming what the statement needs.
func (p *parser) expect(c byte, what string) (token, error) {
	t := p.next()
	if !t.is(c) {
		return t, errorAt(t.pos, "expected '%c' %s, found %s", c, what, t.describe())
	}
	return t, nil
}

// name reads a name token or a <name>.
func (p *parser) name(what string) (token, error) {
	t := p.next()
	if t.kind != tokName && t.kind != tokIRI {
		return t, errorAt(t.pos, "expected %s, found %s", what, t.describe())
	}
	return t, nil
}

// predicate reads "name: type @directive ... ." and checks it.
func (p *parser) predicate() (Predicate, error) {
	nt, err := p.name("a predicate name or a type definition")
	if err != nil {
		return Predicate{}, err
	}
	pred := Predicate{Name: nt.text, Pos: nt.pos}
	if err := checkPredicateName(nt); err != nil {
		return Predicate{}, err
	}
	if p.peek().is('@') {
		return Predicate{}, errorAt(p.peek().pos, "'@' is not allowed in a predicate name")
	}
	if _, err := p.expect(':', "after predicate "+nt.text); err != nil {
		return Predicate{}, err
	}
	typePos := p.peek().pos
	if pred.Type, pred.List, err = p.scalar(); err != nil {
		return Predicate{}, err
	}
	if pred.List && (pred.Type == Password || pred.Type == Bool || pred.Type == Float32Vector) {
		return Predicate{}, errorAt(typePos, "[%s] lists are not supported", pred.Type)
	}
	seen := map[string]Pos{}
	for p.peek().is('@') {
		if err := p.directive(&pred, seen); err != nil {
			return Predicate{}, err
		}
	}
	if t := p.next(); !t.is('.') {
		return Predicate{}, errorAt(t.pos, "expected a directive or '.' to end predicate %s, found %s", pred.Name, t.describe())
	}
	return pred, checkPredicate(pred, seen)
}

func checkPredicateName(t token) error {
	switch {
	case strings.Contains(t.text, "@"):
		return errorAt(t.pos, "'@' is not allowed in a predicate name")
	case strings.HasPrefix(t.text, "~"):
		return errorAt(t.pos, "a predicate name cannot start with '~' (reverse edges come from @reverse)")
	case t.text == "uid":
		return errorAt(t.pos, "uid is reserved for internal use")
	}
	return nil
}

// scalar reads T or [T].
func (p *parser) scalar() (s Scalar, list bool, err error) {
	if p.peek().is('[') {
		p.next()
		list = true
	}
	t := p.next()
	if t.kind != tokName {
		return 0, false, errorAt(t.pos, "expected a type, found %s", t.describe())
	}
	s, ok := ParseScalar(t.text)
	if !ok {
		return 0, false, errorAt(t.pos, "unknown type %q (want one of %s)", t.text, strings.Join(scalarNames[:], ", "))
	}
	if list {
		if _, err := p.expect(']', "to close ["+t.text); err != nil {
			return 0, false, err
		}
	}
	return s, list, nil
}

// directive reads one @name or @index(...) and records where it was, for
// the checks that follow.
func (p *parser) directive(pred *Predicate, seen map[string]Pos) error {
	at := p.next()
	t := p.next()
	if t.kind != tokName {
		return errorAt(t.pos, "expected a directive name after '@', found %s", t.describe())
	}
	if first, dup := seen[t.text]; dup {
		return errorAt(at.pos, "@%s given twice (first at col %d)", t.text, first.Col)
	}
	seen[t.text] = at.pos
	switch t.text {
	case "index":
		toks, err := p.tokenizers(*pred, at.pos)
		if err != nil {
			return err
		}
		pred.Index = toks
		return nil
	case "reverse":
		pred.Reverse = true
	case "count":
		pred.Count = true
	case "lang":
		pred.Lang = true
	case "upsert":
		pred.Upsert = true
	case "unique":
		pred.Unique, pred.Upsert = true, true
	case "noconflict":
		pred.NoConflict = true
	default:
		return errorAt(t.pos, "unknown directive @%s", t.text)
	}
	if p.peek().is('(') {
		return errorAt(p.peek().pos, "@%s takes no arguments", t.text)
	}
	return nil
}

// tokenizers reads "(tok, tok(opt: "v"), ...)" after @index and checks each
// tokenizer against the predicate's type.
func (p *parser) tokenizers(pred Predicate, at Pos) ([]Tokenizer, error) {
	if !p.peek().is('(') {
		return nil, errorAt(at, "@index needs tokenizers, e.g. @index(%s)", strings.Join(Tokenizers(pred.Type), ", "))
	}
	p.next()
	var out []Tokenizer
	sortable := ""
	for {
		t := p.next()
		if t.kind != tokName {
			return nil, errorAt(t.pos, "expected a tokenizer, found %s", t.describe())
		}
		name := strings.ToLower(t.text)
		info, ok := tokenizerInfo[name]
		switch {
		case !ok:
			return nil, errorAt(t.pos, "unknown tokenizer %q", t.text)
		case pred.Type == UID || pred.Type == Default || pred.Type == Password:
			return nil, errorAt(at, "indexing is not allowed on %s predicate %s", pred.Type, pred.Name)
		case info.scalar != pred.Type:
			return nil, errorAt(t.pos, "tokenizer %s indexes %s, not %s (for %s use %s)", name, info.scalar,
				pred.Type, pred.Type, strings.Join(Tokenizers(pred.Type), ", "))
		case slices.ContainsFunc(out, func(o Tokenizer) bool { return o.Name == name }):
			return nil, errorAt(t.pos, "tokenizer %s given twice", name)
		case info.sortable && sortable != "":
			return nil, errorAt(t.pos, "more than one sortable tokenizer (%s and %s)", sortable, name)
		}
		if info.sortable {
			sortable = name
		}
		tok := Tokenizer{Name: name}
		if p.peek().is('(') {
			if !info.options {
				return nil, errorAt(p.peek().pos, "tokenizer %s takes no options", name)
			}
			opts, err := p.options()
			if err != nil {
				return nil, err
			}
			tok.Options = opts
		}
		out = append(out, tok)
		if sep := p.next(); sep.is(')') {
			break
		} else if !sep.is(',') {
			return nil, errorAt(sep.pos, "expected ',' or ')' in @index, found %s", sep.describe())
		}
	}
	slices.SortFunc(out, func(a, b Tokenizer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// options reads (key: "value", ...) of a tokenizer such as hnsw.
func (p *parser) options() ([]Option, error) {
	p.next() // (
	var out []Option
	for {
		k := p.next()
		if k.kind != tokName {
			return nil, errorAt(k.pos, "expected an option name, found %s", k.describe())
		}
		if _, err := p.expect(':', "after option "+k.text); err != nil {
			return nil, err
		}
		v := p.next()
		if v.kind != tokString && v.kind != tokName {
			return nil, errorAt(v.pos, "expected a value for option %s, found %s", k.text, v.describe())
		}
		if slices.ContainsFunc(out, func(o Option) bool { return o.Key == k.text }) {
			return nil, errorAt(k.pos, "option %s given twice", k.text)
		}
		out = append(out, Option{Key: k.text, Value: v.text})
		if sep := p.next(); sep.is(')') {
			break
		} else if !sep.is(',') {
			return nil, errorAt(sep.pos, "expected ',' or ')' in options, found %s", sep.describe())
		}
	}
	slices.SortFunc(out, func(a, b Option) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// checkPredicate applies Dgraph's rules between type and directives, each
// error at the directive that breaks it.
func checkPredicate(pred Predicate, seen map[string]Pos) error {
	switch {
	case pred.Reverse && pred.Type != UID:
		return errorAt(seen["reverse"], "@reverse is only allowed on uid predicates, not %s", pred.Type)
	case pred.Lang && (pred.Type != String || pred.List):
		return errorAt(seen["lang"], "@lang is only allowed on string predicates (not lists)")
	case pred.Unique && !slices.ContainsFunc(pred.Index, func(t Tokenizer) bool {
		return t.Name == "exact" || t.Name == "hash" || t.Name == "int"
	}):
		return errorAt(seen["unique"], "@unique needs an exact, hash or int index")
	case pred.Upsert && len(pred.Index) == 0:
		return errorAt(seen["upsert"], "@upsert needs an index (Dgraph: index tokenizer is mandatory)")
	}
	for _, t := range pred.Index {
		if t.Name == "hnsw" {
			if err := checkHNSW(t, seen["index"]); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkHNSW(t Tokenizer, at Pos) error {
	for _, o := range t.Options {
		switch o.Key {
		case "metric":
			if o.Value != "euclidean" && o.Value != "cosine" && o.Value != "dotproduct" {
				return errorAt(at, "hnsw metric %q (want euclidean, cosine or dotproduct)", o.Value)
			}
		case "exponent", "maxLevels", "efConstruction", "efSearch":
			if o.Value == "" || strings.Trim(o.Value, "0123456789") != "" {
				return errorAt(at, "hnsw option %s %q is not a number", o.Key, o.Value)
			}
		default:
			return errorAt(at, "unknown hnsw option %s", o.Key)
		}
	}
	return nil
}

// typeDef reads "type Name { field ... }".
func (p *parser) typeDef() (Type, error) {
	kw := p.next()
	nt, err := p.name("a type name")
	if err != nil {
		return Type{}, err
	}
	if strings.HasPrefix(nt.text, "~") || strings.Contains(nt.text, "@") {
		return Type{}, errorAt(nt.pos, "bad type name %q", nt.text)
	}
	ty := Type{Name: nt.text, Pos: kw.pos}
	if _, err := p.expect('{', "after type "+nt.text); err != nil {
		return Type{}, err
	}
	seen := map[string]bool{}
	for !p.peek().is('}') {
		ft, err := p.name("a field name or '}'")
		if err != nil {
			return Type{}, err
		}
		if ft.text == "~" || strings.Contains(ft.text, "@") || strings.Count(ft.text, "~") > 1 {
			return Type{}, errorAt(ft.pos, "bad field name %q", ft.text)
		}
		if seen[ft.text] {
			return Type{}, errorAt(ft.pos, "field %s given twice in type %s", ft.text, ty.Name)
		}
		seen[ft.text] = true
		ty.Fields = append(ty.Fields, ft.text)
		if err := p.oldFieldType(); err != nil {
			return Type{}, err
		}
		if p.peek().is(',') {
			p.next()
		}
	}
	p.next()
	return ty, nil
}

// oldFieldType skips the ": type" of the old field syntax (name: [string]!),
// which Dgraph accepts and ignores.
func (p *parser) oldFieldType() error {
	if !p.peek().is(':') {
		return nil
	}
	p.next()
	if _, _, err := p.scalarOrTypeName(); err != nil {
		return err
	}
	if p.peek().is('!') {
		p.next()
	}
	return nil
}

// scalarOrTypeName reads T or [T]!? where T may name an object type.
func (p *parser) scalarOrTypeName() (string, bool, error) {
	list := false
	if p.peek().is('[') {
		p.next()
		list = true
	}
	t, err := p.name("a field type")
	if err != nil {
		return "", false, err
	}
	if list {
		if p.peek().is('!') {
			p.next()
		}
		if _, err := p.expect(']', "to close ["+t.text); err != nil {
			return "", false, err
		}
	}
	return t.text, list, nil
}
