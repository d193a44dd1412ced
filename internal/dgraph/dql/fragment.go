package dql

import "slices"

// fragment is a fragment definition: fragment name { fields }.
type fragment struct {
	pos    Pos
	fields []*Field
	state  uint8 // 0 unexpanded, 1 expanding, 2 expanded
}

// fragmentDef reads fragment name { fields }.
func (p *parser) fragmentDef() error {
	p.next() // fragment
	t := p.peek()
	if t.kind != tokWord {
		return p.unexpected(t, "a fragment name")
	}
	p.next()
	if p.frags == nil {
		p.frags = map[string]*fragment{}
	}
	if _, dup := p.frags[t.text]; dup {
		return errorAt(t.pos, "fragment %s defined twice", t.text)
	}
	if _, err := p.expect("{", "'{' after the fragment name"); err != nil {
		return err
	}
	var sel Selection
	if err := p.fields(&sel, fieldCtx{}); err != nil {
		return err
	}
	p.frags[t.text] = &fragment{pos: t.pos, fields: sel.Fields}
	return nil
}

// expandFragments replaces every ...name with a copy of the fragment's
// fields, detecting cycles and bounding the fields created.
func (p *parser) expandFragments(q *Query) error {
	budget := FragmentFieldsMax
	for _, b := range q.Blocks {
		var err error
		if b.Fields, err = p.expandFields(b.Fields, &budget); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) expandFields(fields []*Field, budget *int) ([]*Field, error) {
	if !slices.ContainsFunc(fields, hasSpread) {
		return fields, nil
	}
	var out []*Field
	for _, f := range fields {
		if f.Kind != fieldSpread {
			var err error
			if f.Fields, err = p.expandFields(f.Fields, budget); err != nil {
				return nil, err
			}
			out = append(out, f)
			continue
		}
		fr, ok := p.frags[f.Attr]
		if !ok {
			return nil, errorAt(f.Pos, "fragment %s is not defined", f.Attr)
		}
		if err := p.expandFragment(f.Attr, fr, budget); err != nil {
			return nil, err
		}
		for _, g := range fr.fields {
			if *budget -= countFields(g); *budget < 0 {
				return nil, errorAt(f.Pos, "fragments expand to more than %d fields", FragmentFieldsMax)
			}
			out = append(out, cloneField(g))
		}
	}
	return out, nil
}

// hasSpread reports whether f or a field below it is a spread.
func hasSpread(f *Field) bool {
	return f.Kind == fieldSpread || slices.ContainsFunc(f.Fields, hasSpread)
}

func (p *parser) expandFragment(name string, fr *fragment, budget *int) error {
	switch fr.state {
	case 1:
		return errorAt(fr.pos, "fragment %s spreads itself (a cycle)", name)
	case 2:
		return nil
	}
	fr.state = 1
	var err error
	fr.fields, err = p.expandFields(fr.fields, budget)
	fr.state = 2
	return err
}

func countFields(f *Field) int {
	n := 1
	for _, c := range f.Fields {
		n += countFields(c)
	}
	return n
}

// cloneField deep-copies a field, so expanded fragments share nothing.
func cloneField(f *Field) *Field {
	c := *f
	c.Langs = slices.Clone(f.Langs)
	c.Expand = slices.Clone(f.Expand)
	c.Math = cloneMath(f.Math)
	if f.Facets != nil {
		fc := *f.Facets
		fc.Keys, fc.Order = slices.Clone(fc.Keys), slices.Clone(fc.Order)
		c.Facets = &fc
	}
	c.FacetsFilter = cloneFilter(f.FacetsFilter)
	c.Selection = cloneSelection(f.Selection)
	return &c
}

func cloneSelection(s Selection) Selection {
	c := s
	c.Page = Page{First: clonePtr(s.Page.First), Offset: clonePtr(s.Page.Offset), After: clonePtr(s.Page.After)}
	c.Order = slices.Clone(s.Order)
	for i := range c.Order {
		c.Order[i].Langs = slices.Clone(c.Order[i].Langs)
	}
	c.Filter = cloneFilter(s.Filter)
	if s.Cascade != nil {
		c.Cascade = &Cascade{Fields: slices.Clone(s.Cascade.Fields)}
	}
	c.GroupBy = slices.Clone(s.GroupBy)
	for i := range c.GroupBy {
		c.GroupBy[i].Langs = slices.Clone(c.GroupBy[i].Langs)
	}
	if s.Fields != nil {
		c.Fields = make([]*Field, len(s.Fields))
		for i, f := range s.Fields {
			c.Fields[i] = cloneField(f)
		}
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneFilter(f *Filter) *Filter {
	if f == nil {
		return nil
	}
	c := &Filter{Op: f.Op}
	if f.Func != nil {
		fn := *f.Func
		fn.Args, fn.UIDs, fn.Vars = slices.Clone(fn.Args), slices.Clone(fn.UIDs), slices.Clone(fn.Vars)
		c.Func = &fn
	}
	for _, ch := range f.Children {
		c.Children = append(c.Children, cloneFilter(ch))
	}
	return c
}

func cloneMath(m *Math) *Math {
	if m == nil {
		return nil
	}
	c := &Math{Pos: m.Pos, Op: m.Op, Var: m.Var, Const: clonePtr(m.Const)}
	for _, a := range m.Args {
		c.Args = append(c.Args, cloneMath(a))
	}
	return c
}
