package dql

import (
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/rdf"
)

// Validate checks the query against a schema, the checks Dgraph makes when
// it runs a query, with its error texts where they are known:
//
//   - a comparison at the root (func: eq/le/lt/ge/gt/between) needs an
//     index on its predicate ("Attribute name is not indexed."), a sortable
//     one except for eq; count(pred) at the root needs @count;
//   - term, full-text, ngram, trigram (match, and regexp at the root), geo
//     and vector functions need their index, at the root and in filters;
//   - uid_in needs a uid predicate, checkpwd a password predicate;
//   - ordering needs a scalar, non-list predicate;
//   - ~pred needs @reverse, and name@lang needs a string with @lang;
//   - literal arguments of comparisons must convert to the predicate's type.
//
// Predicates the schema does not define count as untyped and unindexed.
func (q *Query) Validate(s *schema.Schema) error {
	v := schemaValidator{s}
	for _, b := range q.Blocks {
		if b.Func != nil {
			if err := v.fn(b.Func, true); err != nil {
				return err
			}
		}
		if err := v.selection(&b.Selection); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the upsert's query against a schema (see Query.Validate)
// and the conditions' functions.
func (u *Upsert) Validate(s *schema.Schema) error {
	v := schemaValidator{s}
	for _, m := range u.Mutations {
		if err := v.filter(m.Cond); err != nil {
			return err
		}
	}
	if u.Query == nil {
		return nil
	}
	return u.Query.Validate(s)
}

type schemaValidator struct{ s *schema.Schema }

// pred returns a predicate's schema; an unknown predicate is default-typed.
func (v schemaValidator) pred(name string) schema.Predicate {
	if p, ok := v.s.Predicate(name); ok {
		return p
	}
	return schema.Predicate{Name: name, Type: schema.Default}
}

func (v schemaValidator) selection(sel *Selection) error {
	for _, o := range sel.Order {
		if err := v.order(o); err != nil {
			return err
		}
	}
	if err := v.filter(sel.Filter); err != nil {
		return err
	}
	for _, f := range sel.Fields {
		if err := v.field(f); err != nil {
			return err
		}
	}
	return nil
}

func (v schemaValidator) field(f *Field) error {
	switch f.Kind {
	case FieldPred, FieldCount:
		if err := v.attr(f.Attr, f.Langs, f.Pos); err != nil {
			return err
		}
	case FieldCheckpwd:
		if p := v.pred(f.Attr); p.Type != schema.Password {
			return errorAt(f.Pos, "checkpwd fn can only be used on attr: [%s] with schema type password. Got type: %s",
				f.Attr, typeName(p))
		}
	}
	return v.selection(&f.Selection)
}

// attr checks a predicate reference: a reverse edge needs @reverse, a
// language needs a string predicate with @lang.
func (v schemaValidator) attr(name string, langs []string, pos Pos) error {
	if rev, ok := strings.CutPrefix(name, "~"); ok {
		if p := v.pred(rev); !p.Reverse {
			return errorAt(pos, "Predicate %s doesn't have reverse edge", rev)
		}
		return nil
	}
	if len(langs) > 0 && name != "uid" {
		if p := v.pred(name); p.Type != schema.String || !p.Lang {
			return errorAt(pos, "Language tags can only be used with predicates of string type having @lang directive in schema. Got: [%s]", name)
		}
	}
	return nil
}

func (v schemaValidator) order(o Order) error {
	if o.Var != "" {
		return nil
	}
	p := v.pred(o.Attr)
	switch {
	case p.Type == schema.UID:
		return errorAt(o.Pos, "Cannot sort attribute %s of type object.", o.Attr)
	case p.List:
		return errorAt(o.Pos, "Sorting not supported on attr: %s of type: [scalar]", o.Attr)
	}
	return v.attr(o.Attr, o.Langs, o.Pos)
}

func (v schemaValidator) filter(f *Filter) error {
	if f == nil {
		return nil
	}
	if f.Func != nil {
		return v.fn(f.Func, false)
	}
	for _, c := range f.Children {
		if err := v.filter(c); err != nil {
			return err
		}
	}
	return nil
}

// indexNeeded names the tokenizer a function needs anywhere (at the root
// and in filters); regexp needs trigram at the root only.
var indexNeeded = map[string]string{
	"allofterms": "term", "anyofterms": "term", "alloftext": "fulltext", "anyoftext": "fulltext",
	"ngram": "ngram", "match": "trigram", "near": "geo", "within": "geo", "contains": "geo",
	"intersects": "geo", "similar_to": "hnsw",
}

func (v schemaValidator) fn(f *Func, root bool) error {
	if f.Attr == "" || f.ValVar != "" || f.LenVar != "" {
		return nil
	}
	// A reverse edge ~pred runs over uids; attr checks its @reverse.
	base, reverse := strings.CutPrefix(f.Attr, "~")
	p := v.pred(base)
	if reverse {
		p = schema.Predicate{Name: f.Attr, Type: schema.UID, List: true, Reverse: true, Count: p.Count}
	}
	var langs []string
	if f.Lang != "" {
		langs = []string{f.Lang}
	}
	if err := v.attr(f.Attr, langs, f.Pos); err != nil {
		return err
	}
	if tok, ok := indexNeeded[f.Name]; ok || f.Name == "regexp" && root {
		if !ok {
			tok = "trigram"
		}
		if !p.Indexed(tok) {
			return errorAt(f.Pos, "Attribute %s is not indexed with type %s", f.Attr, tok)
		}
		return nil
	}
	switch f.Name {
	case "uid_in":
		if p.Type != schema.UID {
			return errorAt(f.Pos, "uid_in needs a uid predicate, %s is %s", f.Attr, typeName(p))
		}
	case "eq", "le", "lt", "ge", "gt", "between":
		return v.compare(f, p, root)
	}
	return nil
}

// compare checks a comparison: its index at the root and its arguments.
func (v schemaValidator) compare(f *Func, p schema.Predicate, root bool) error {
	if f.Count {
		if root && !p.Count {
			return errorAt(f.Pos, "Need @count directive in schema for attr: %s for fn: %s at root", f.Attr, f.Name)
		}
		return nil
	}
	if root && p.Type != schema.UID {
		if len(p.Index) == 0 {
			return errorAt(f.Pos, "Attribute %s is not indexed.", f.Attr)
		}
		if f.Name != "eq" && !hasSortable(p) {
			return errorAt(f.Pos, "Attribute %s does not have a sortable index for %s at the root (%s)",
				f.Attr, f.Name, sortableFor(p.Type))
		}
	}
	for _, a := range f.Args {
		if a.Kind != ArgValue {
			continue
		}
		if err := convertible(a.Value, p.Type); err != nil {
			return errorAt(f.Pos, "%s(%s, %q): %q is not a valid %s", f.Name, f.Attr, a.Value, a.Value, p.Type)
		}
	}
	return nil
}

var sortableTokenizers = map[string]bool{"exact": true, "int": true, "float": true, "bigfloat": true,
	"year": true, "month": true, "day": true, "hour": true}

func hasSortable(p schema.Predicate) bool {
	for _, t := range p.Index {
		if sortableTokenizers[t.Name] {
			return true
		}
	}
	return false
}

func sortableFor(t schema.Scalar) string {
	switch t {
	case schema.String:
		return "exact"
	case schema.Datetime:
		return "year, month, day or hour"
	}
	return t.String()
}

// convertible reports whether a literal converts to a predicate's type.
func convertible(s string, t schema.Scalar) error {
	var err error
	switch t {
	case schema.Int:
		_, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	case schema.Float, schema.BigFloat:
		_, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
	case schema.Bool:
		_, err = strconv.ParseBool(strings.TrimSpace(s))
	case schema.Datetime:
		_, err = rdf.ParseDatetime(s)
	}
	return err
}

func typeName(p schema.Predicate) string {
	if p.List {
		return "[" + p.Type.String() + "]"
	}
	return p.Type.String()
}
