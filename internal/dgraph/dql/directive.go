package dql

import (
	"strconv"
	"strings"
)

// cascade reads the optional (pred, ...) of @cascade.
func (p *parser) cascade() (*Cascade, error) {
	c := &Cascade{}
	if !p.peek().is("(") {
		return c, nil
	}
	open := p.next()
	if p.peek().is(")") {
		return nil, errorAt(open.pos, "@cascade() needs at least one predicate (or no parentheses)")
	}
	for {
		name, _, err := p.name("a predicate in @cascade(...)")
		if err != nil {
			return nil, err
		}
		c.Fields = append(c.Fields, name)
		if done, err := p.argSeparator(); done || err != nil {
			return c, err
		}
	}
}

// groupBy reads (alias: pred@lang, ...) of @groupby.
func (p *parser) groupBy() ([]GroupAttr, error) {
	open, err := p.expect("(", "'(' after @groupby")
	if err != nil {
		return nil, err
	}
	if p.peek().is(")") {
		return nil, errorAt(open.pos, "@groupby needs at least one predicate")
	}
	var out []GroupAttr
	for {
		var g GroupAttr
		if n := p.nameSpan(0); n > 0 && p.peekAt(n).is(":") {
			alias, pos, _ := p.name("")
			if isArgKey(alias) {
				return nil, errorAt(pos, "cannot use keyword %s as an alias in @groupby", alias)
			}
			p.next()
			g.Alias = alias
		}
		name, _, err := p.name("a predicate in @groupby(...)")
		if err != nil {
			return nil, err
		}
		g.Attr = name
		if p.peek().is("@") {
			p.next()
			if g.Langs, err = p.langs(); err != nil {
				return nil, err
			}
		}
		out = append(out, g)
		if done, err := p.argSeparator(); done || err != nil {
			return out, err
		}
	}
}

func isArgKey(s string) bool {
	switch s {
	case "first", "offset", "after", "orderasc", "orderdesc":
		return true
	}
	return false
}

// recurse reads the optional (depth: n, loop: bool) of @recurse.
func (p *parser) recurse() (*Recurse, error) {
	r := &Recurse{}
	if !p.peek().is("(") {
		return r, nil
	}
	p.next()
	seen := map[string]bool{}
	for {
		kt := p.peek()
		if kt.kind != tokWord {
			return nil, p.unexpected(kt, "depth or loop inside @recurse(...)")
		}
		key := strings.ToLower(kt.text)
		if seen[key] {
			return nil, errorAt(kt.pos, "%s given twice in @recurse", key)
		}
		seen[key] = true
		p.next()
		if _, err := p.expect(":", "':' after "+key); err != nil {
			return nil, err
		}
		v, pos, err := p.scalar("a value for " + key)
		if err != nil {
			return nil, err
		}
		switch key {
		case "depth":
			if r.Depth, err = strconv.ParseUint(v, 0, 64); err != nil {
				return nil, errorAt(pos, "depth inside @recurse must be a non-negative integer, found %q", v)
			}
		case "loop":
			if r.Loop, err = strconv.ParseBool(v); err != nil {
				return nil, errorAt(pos, "loop inside @recurse must be true or false, found %q", v)
			}
		default:
			return nil, errorAt(kt.pos, "unknown key %s inside @recurse (depth, loop)", kt.text)
		}
		if done, err := p.argSeparator(); done || err != nil {
			return r, err
		}
	}
}

// langs reads a language list after '@': en, en:fr, en:., ., *.
func (p *parser) langs() ([]string, error) {
	var out []string
	for {
		t := p.peek()
		switch {
		case t.is("."), t.is("*"):
			p.next()
			out = append(out, t.text)
		case t.kind == tokWord:
			l, pos, _ := p.name("")
			if !validLang(l) {
				return nil, errorAt(pos, "bad language tag %q", l)
			}
			out = append(out, l)
		default:
			return nil, p.unexpected(t, "a language (en, en:fr, ., *)")
		}
		if !p.peek().is(":") {
			break
		}
		p.next()
	}
	for i, l := range out {
		if l == "*" && len(out) > 1 {
			return nil, errorAt(p.peek().pos, "if * is used, no other languages are allowed in the list %s", strings.Join(out, ":"))
		}
		if l == "." && i != len(out)-1 {
			return nil, errorAt(p.peek().pos, "'.' (any language) must come last in the list %s", strings.Join(out, ":"))
		}
	}
	return out, nil
}

func validLang(l string) bool {
	if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// schemaQuery reads schema [(pred: ... | type: ...)] { fields }.
func (p *parser) schemaQuery() (*SchemaQuery, error) {
	kw := p.next()
	s := &SchemaQuery{Pos: kw.pos}
	if p.peek().is("(") {
		p.next()
		kt := p.peek()
		if !kt.isWord("pred") && !kt.isWord("type") {
			return nil, p.unexpected(kt, "pred or type inside schema(...)")
		}
		p.next()
		if _, err := p.expect(":", "':' after "+kt.text); err != nil {
			return nil, err
		}
		names, err := p.nameList()
		if err != nil {
			return nil, err
		}
		if kt.isWord("pred") {
			s.Preds = names
		} else {
			s.Types = names
		}
		if _, err := p.expect(")", "')' to close schema("); err != nil {
			return nil, err
		}
	}
	if _, err := p.expect("{", "'{' after schema"); err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.is("}") {
			p.next()
			return s, nil
		}
		name, _, err := p.name("a schema field (type, index, reverse, tokenizer, ...) or '}'")
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, name)
	}
}

// nameList reads a name or [name, name, ...].
func (p *parser) nameList() ([]string, error) {
	if !p.peek().is("[") {
		name, _, err := p.name("a name or [names]")
		return []string{name}, err
	}
	open := p.next()
	if p.peek().is("]") {
		return nil, errorAt(open.pos, "empty list")
	}
	var out []string
	for {
		name, _, err := p.name("a name")
		if err != nil {
			return nil, err
		}
		out = append(out, name)
		t := p.next()
		if t.is("]") {
			return out, nil
		}
		if !t.is(",") {
			return nil, p.unexpected(t, "',' or ']'")
		}
	}
}
