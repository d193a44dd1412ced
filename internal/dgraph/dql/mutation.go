package dql

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/rdf"
)

// ParseMutation parses a mutation request in RDF form, as Dgraph's /mutate
// (application/rdf) and RunDQL accept it: a { set {...} delete {...} }
// block or an upsert block. The N-Quads are parsed by package rdf; errors
// carry positions in the whole text.
func ParseMutation(text string) (*Upsert, error) {
	u, err := parseMutation(text, false)
	if invariants.On && err == nil {
		checkUpsert(u)
	}
	return u, err
}

// ParseUpsert parses an upsert block:
//
//	upsert {
//	  query { v as var(func: eq(email, "a@b.c")) }
//	  mutation @if(eq(len(v), 0)) { set { _:n <email> "a@b.c" . } }
//	  mutation @if(eq(len(v), 1)) { set { uid(v) <seen> "true" . } }
//	}
//
// It checks the query as ParseWith does, counting the variables the
// mutations (uid(v), val(v)) and conditions (len(v), uid(v), val(v)) use.
func ParseUpsert(text string) (*Upsert, error) {
	u, err := parseMutation(text, true)
	if invariants.On && err == nil {
		checkUpsert(u)
	}
	return u, err
}

// ParseCond parses the condition of a mutation, "@if(eq(len(v), 1) AND
// NOT eq(len(w), 0))", as carried by Dgraph's Mutation.cond. Empty text and
// @if() are no condition (nil).
func ParseCond(text string) (*Filter, error) {
	p, err := newParser(text, nil)
	if err != nil {
		return nil, err
	}
	if p.peek().kind == tokEOF {
		return nil, nil
	}
	f, err := p.cond()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t, "the end of the condition")
	}
	return f, nil
}

// Uses returns the query variables a mutation refers to, in its condition
// and as uid(v) or val(v) in its N-Quads: what Options.Uses needs when the
// query and the mutations arrive apart (Dgraph's Request.query and
// Request.mutations).
func (m *Mutation) Uses() []string {
	var out []string
	for _, u := range mutationVars(m, nil, nil) {
		out = append(out, u.name)
	}
	return out
}

func parseMutation(text string, upsertOnly bool) (*Upsert, error) {
	p, err := newParser(text, nil)
	if err != nil {
		return nil, err
	}
	var u *Upsert
	var uses []varSite
	t := p.peek()
	switch {
	case t.kind == tokWord && t.text == "upsert":
		u, uses, err = p.upsertBlock()
	case t.is("{") && !upsertOnly:
		p.next()
		m := &Mutation{Pos: t.pos}
		var pos []Pos
		if pos, err = p.mutationOps(m); err == nil {
			u = &Upsert{Mutations: []*Mutation{m}}
			uses = mutationVars(m, pos, nil)
		}
	case upsertOnly:
		return nil, p.unexpected(t, "upsert {")
	default:
		return nil, p.unexpected(t, "'{' or upsert")
	}
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t, "the end of the mutation")
	}
	q := u.Query
	if q == nil {
		q = &Query{}
	}
	if err := validate(q, uses); err != nil {
		return nil, err
	}
	return u, nil
}

// upsertBlock reads upsert { query {...} mutation [@if(...)] {...} ... }.
func (p *parser) upsertBlock() (*Upsert, []varSite, error) {
	kw := p.next()
	if _, err := p.expect("{", "'{' after upsert"); err != nil {
		return nil, nil, err
	}
	u := &Upsert{}
	var uses []varSite
	for {
		t := p.peek()
		switch {
		case t.is("}"):
			p.next()
			if u.Query == nil {
				return nil, nil, errorAt(kw.pos, "an upsert block needs a query")
			}
			if len(u.Mutations) == 0 {
				return nil, nil, errorAt(kw.pos, "an upsert block needs at least one mutation")
			}
			return u, uses, nil
		case t.kind == tokWord && t.text == "query":
			if u.Query != nil {
				return nil, nil, errorAt(t.pos, "an upsert block takes one query")
			}
			p.next()
			if _, err := p.expect("{", "'{' after query"); err != nil {
				return nil, nil, err
			}
			q := &Query{}
			if err := p.blocks(q); err != nil {
				return nil, nil, err
			}
			u.Query = q
		case t.kind == tokWord && t.text == "mutation":
			m, mu, err := p.upsertMutation()
			if err != nil {
				return nil, nil, err
			}
			u.Mutations = append(u.Mutations, m)
			uses = append(uses, mu...)
		case t.kind == tokWord && t.text == "fragment":
			return nil, nil, errorAt(t.pos, "fragments are not supported in upsert blocks")
		default:
			return nil, nil, p.unexpected(t, "query, mutation or '}' in the upsert block")
		}
	}
}

// upsertMutation reads mutation [@if(...)] { set {...} delete {...} }.
func (p *parser) upsertMutation() (*Mutation, []varSite, error) {
	kw := p.next()
	m := &Mutation{Pos: kw.pos}
	if p.peek().is("@") {
		var err error
		if m.Cond, err = p.cond(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := p.expect("{", "'{' or @if after mutation"); err != nil {
		return nil, nil, err
	}
	pos, err := p.mutationOps(m)
	if err != nil {
		return nil, nil, err
	}
	return m, mutationVars(m, pos, nil), nil
}

// cond reads @if(filter).
func (p *parser) cond() (*Filter, error) {
	if _, err := p.expect("@", "@if"); err != nil {
		return nil, err
	}
	t := p.peek()
	if !t.isWord("if") {
		return nil, p.unexpected(t, "@if")
	}
	p.next()
	return p.filterDirective(ctxCond)
}

// mutationOps reads set {...} and delete {...} up to the closing '}' (its
// '{' already read) and returns where each quad (Set, then Delete) starts.
func (p *parser) mutationOps(m *Mutation) ([]Pos, error) {
	var setPos, delPos []Pos
	seen := map[string]bool{}
	for {
		t := p.peek()
		if t.is("}") {
			p.next()
			break
		}
		if t.kind != tokWord || t.text != "set" && t.text != "delete" && t.text != "del" {
			return nil, p.unexpected(t, "set, delete or '}'")
		}
		op := t.text
		if op == "del" {
			op = "delete"
		}
		if seen[op] {
			return nil, errorAt(t.pos, "%s given twice in one mutation", op)
		}
		seen[op] = true
		p.next()
		open, err := p.expect("{", "'{' after "+t.text)
		if err != nil {
			return nil, err
		}
		nqs, pos, err := p.rawQuads(open)
		if err != nil {
			return nil, err
		}
		if op == "set" {
			m.Set, setPos = nqs, pos
		} else {
			m.Delete, delPos = nqs, pos
		}
	}
	if len(m.Set)+len(m.Delete) == 0 {
		return nil, errorAt(m.Pos, "empty mutation: no N-Quads to set or delete")
	}
	return append(setPos, delPos...), nil
}

// rawQuads reads the N-Quads between open and its matching '}'.
func (p *parser) rawQuads(open token) ([]rdf.NQuad, []Pos, error) {
	p.restartAt(open.end, Pos{Line: open.pos.Line, Col: open.pos.Col + 1})
	body, at, et := p.lx.rawBlock()
	if et != nil {
		return nil, nil, errorAt(et.pos, "%s", et.text)
	}
	return parseQuads(body, at)
}

// parseQuads parses a block of N-Quads that starts at position at, one
// statement per line, mapping rdf's line:col errors into the whole text.
func parseQuads(body string, at Pos) ([]rdf.NQuad, []Pos, error) {
	var nqs []rdf.NQuad
	var pos []Pos
	lineNo := 0
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		start := Pos{Line: at.Line + lineNo, Col: 1}
		if lineNo == 0 {
			start.Col = at.Col
		}
		lineNo++
		nq, ok, err := rdf.ParseLine(line)
		if err != nil {
			var re *rdf.Error
			if errors.As(err, &re) {
				return nil, nil, errorAt(Pos{Line: start.Line, Col: start.Col + re.Col - 1}, "%s", re.Msg)
			}
			return nil, nil, errorAt(start, "%v", err)
		}
		if !ok {
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		start.Col += utf8.RuneCountInString(line) - utf8.RuneCountInString(trimmed)
		nqs = append(nqs, nq)
		pos = append(pos, start)
	}
	return nqs, pos, nil
}

// mutationVars lists the variables m uses: in its condition and as
// uid(v)/val(v) subjects and objects; pos holds each quad's position (Set,
// then Delete) when known.
func mutationVars(m *Mutation, pos []Pos, uses []varSite) []varSite {
	uses = filterVars(m.Cond, -1, uses)
	for i, nq := range append(append([]rdf.NQuad(nil), m.Set...), m.Delete...) {
		at := m.Pos
		if i < len(pos) {
			at = pos[i]
		}
		for _, t := range []rdf.Term{nq.Subject, nq.Object} {
			if t.Kind == rdf.UIDVar || t.Kind == rdf.ValVar {
				uses = append(uses, varSite{name: t.Name, pos: at, block: -1})
			}
		}
	}
	return uses
}
