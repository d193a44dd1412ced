package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Pos is a place in schema text: line and column (in characters), from 1.
type Pos struct{ Line, Col int }

// Error is a schema error at a place in the text (Pos zero when the error
// is not about one place, e.g. a whole-schema check).
type Error struct {
	Pos
	Msg string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return "schema: " + e.Msg
	}
	return fmt.Sprintf("schema: line %d col %d: %s", e.Line, e.Col, e.Msg)
}

func errorAt(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Scalar is a predicate's value type.
type Scalar uint8

const (
	// Default is Dgraph's untyped scalar: values are stored as given.
	Default Scalar = iota
	Int
	Float
	BigFloat
	String
	Bool
	Datetime
	Geo
	Password
	UID
	Float32Vector
)

var scalarNames = [...]string{"default", "int", "float", "bigfloat", "string", "bool", "datetime",
	"geo", "password", "uid", "float32vector"}

func (s Scalar) String() string {
	if int(s) < len(scalarNames) {
		return scalarNames[s]
	}
	return "Scalar(" + strconv.Itoa(int(s)) + ")"
}

// ParseScalar reads a type name, ignoring case as Dgraph does (dateTime is
// datetime).
func ParseScalar(name string) (Scalar, bool) {
	i := slices.Index(scalarNames[:], strings.ToLower(name))
	return Scalar(i), i >= 0
}

// Tokenizer is one index of a predicate. Options are only for hnsw
// (metric, exponent, ...), kept sorted by key.
type Tokenizer struct {
	Name    string
	Options []Option
}

// Option is a key:"value" argument of a tokenizer.
type Option struct{ Key, Value string }

// String renders the tokenizer as in @index(...).
func (t Tokenizer) String() string {
	if len(t.Options) == 0 {
		return t.Name
	}
	parts := make([]string, len(t.Options))
	for i, o := range t.Options {
		parts[i] = o.Key + ": " + strconv.Quote(o.Value)
	}
	return t.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Equal compares name and options.
func (t Tokenizer) Equal(o Tokenizer) bool {
	return t.Name == o.Name && slices.Equal(t.Options, o.Options)
}

// tokenizerInfo describes the tokenizers Dgraph documents: the scalar each
// indexes, whether the index orders values (at most one sortable index per
// predicate), and whether it takes options.
var tokenizerInfo = map[string]struct {
	scalar   Scalar
	sortable bool
	options  bool
}{
	"exact": {String, true, false}, "hash": {String, false, false}, "term": {String, false, false},
	"fulltext": {String, false, false}, "trigram": {String, false, false}, "ngram": {String, false, false},
	"int": {Int, true, false}, "float": {Float, true, false}, "bigfloat": {BigFloat, true, false},
	"bool": {Bool, false, false}, "geo": {Geo, false, false},
	"year": {Datetime, true, false}, "month": {Datetime, true, false},
	"day": {Datetime, true, false}, "hour": {Datetime, true, false},
	"hnsw": {Float32Vector, false, true},
}

// Tokenizers lists the tokenizer names that index values of scalar s.
func Tokenizers(s Scalar) []string {
	var out []string
	for name, info := range tokenizerInfo {
		if info.scalar == s {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Predicate is one predicate's schema.
type Predicate struct {
	Name       string
	Type       Scalar
	List       bool        // [T]
	Index      []Tokenizer // sorted by name; empty means no @index
	Reverse    bool        // @reverse (uid only)
	Count      bool        // @count
	Lang       bool        // @lang (string only)
	Upsert     bool        // @upsert (needs an index); implied by @unique
	Unique     bool        // @unique (needs an exact, hash or int index)
	NoConflict bool        // @noconflict
	Pos        Pos         // where it was declared; not part of equality
}

// Indexed reports whether the predicate has tokenizer name.
func (p Predicate) Indexed(name string) bool {
	return slices.ContainsFunc(p.Index, func(t Tokenizer) bool { return t.Name == name })
}

// Equal compares everything but Pos.
func (p Predicate) Equal(o Predicate) bool {
	return p.Name == o.Name && p.Type == o.Type && p.List == o.List &&
		slices.EqualFunc(p.Index, o.Index, Tokenizer.Equal) && p.Reverse == o.Reverse &&
		p.Count == o.Count && p.Lang == o.Lang && p.Upsert == o.Upsert && p.Unique == o.Unique &&
		p.NoConflict == o.NoConflict
}

// String renders the canonical definition, e.g.
// "name: string @index(exact, term) @lang @upsert .".
func (p Predicate) String() string {
	var b strings.Builder
	b.WriteString(formatName(p.Name))
	b.WriteString(": ")
	if p.List {
		b.WriteString("[" + p.Type.String() + "]")
	} else {
		b.WriteString(p.Type.String())
	}
	if len(p.Index) > 0 {
		b.WriteString(" @index(")
		for i, t := range p.Index {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.String())
		}
		b.WriteByte(')')
	}
	for _, d := range []struct {
		on   bool
		name string
	}{{p.Reverse, "reverse"}, {p.Count, "count"}, {p.Lang, "lang"}, {p.Upsert, "upsert"},
		{p.Unique, "unique"}, {p.NoConflict, "noconflict"}} {
		if d.on {
			b.WriteString(" @" + d.name)
		}
	}
	b.WriteString(" .")
	return b.String()
}

func (p Predicate) clone() Predicate {
	p.Index = slices.Clone(p.Index)
	for i := range p.Index {
		p.Index[i].Options = slices.Clone(p.Index[i].Options)
	}
	return p
}

// Type is a type definition: a name and its fields, predicate names in
// declaration order, a reverse edge written ~name.
type Type struct {
	Name   string
	Fields []string
	Pos    Pos // where it was declared; not part of equality
}

// Equal compares name and fields (in order).
func (t Type) Equal(o Type) bool {
	return t.Name == o.Name && slices.Equal(t.Fields, o.Fields)
}

// String renders the canonical definition, one field per line.
func (t Type) String() string {
	var b strings.Builder
	b.WriteString("type " + formatName(t.Name) + " {\n")
	for _, f := range t.Fields {
		b.WriteString("\t" + formatName(f) + "\n")
	}
	b.WriteString("}")
	return b.String()
}

// formatName writes a name bare when the lexer reads it back as one name
// token, else as <name>.
func formatName(name string) string {
	if isBareName(name) {
		return name
	}
	return "<" + name + ">"
}

func isBareName(name string) bool {
	if name == "" || name[len(name)-1] == '.' || name[0] == '~' || name == "type" {
		return false
	}
	for i, r := range name {
		if !isNameChar(r) || i == 0 && !isNameStart(r) {
			return false
		}
	}
	return true
}

// Schema is a set of predicate definitions and type definitions, keyed by
// name. A Schema is immutable once built (Parse, Apply and the Drop methods
// return new ones), so it may be shared between goroutines; accessors
// return copies.
type Schema struct {
	preds map[string]Predicate
	types map[string]Type
}

// New returns an empty schema.
func New() *Schema {
	return &Schema{preds: map[string]Predicate{}, types: map[string]Type{}}
}

// Predicate returns the named predicate's definition.
func (s *Schema) Predicate(name string) (Predicate, bool) {
	p, ok := s.preds[name]
	return p.clone(), ok
}

// Predicates returns every predicate, sorted by name.
func (s *Schema) Predicates() []Predicate {
	out := make([]Predicate, 0, len(s.preds))
	for _, name := range slices.Sorted(maps.Keys(s.preds)) {
		out = append(out, s.preds[name].clone())
	}
	return out
}

// Type returns the named type's definition.
func (s *Schema) Type(name string) (Type, bool) {
	t, ok := s.types[name]
	t.Fields = slices.Clone(t.Fields)
	return t, ok
}

// Types returns every type, sorted by name.
func (s *Schema) Types() []Type {
	out := make([]Type, 0, len(s.types))
	for _, name := range slices.Sorted(maps.Keys(s.types)) {
		t := s.types[name]
		t.Fields = slices.Clone(t.Fields)
		out = append(out, t)
	}
	return out
}

// Equal reports whether two schemas define the same predicates and types.
func (s *Schema) Equal(o *Schema) bool {
	return maps.EqualFunc(s.preds, o.preds, Predicate.Equal) && maps.EqualFunc(s.types, o.types, Type.Equal)
}

// String renders the canonical schema text: predicates sorted by name, one
// per line, then types sorted by name. Parse(s.String()) equals s.
func (s *Schema) String() string {
	var b strings.Builder
	for _, p := range s.Predicates() {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	for i, t := range s.Types() {
		if i > 0 || len(s.preds) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Schema) clone() *Schema {
	return &Schema{preds: maps.Clone(s.preds), types: maps.Clone(s.types)}
}
