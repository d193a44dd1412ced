package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/invariants"
)

// ReservedPrefix starts the names of Dgraph's pre-defined predicates and
// types, which an alter may restate but not change.
const ReservedPrefix = "dgraph."

const initialText = `dgraph.type: [string] @index(exact) .`

// Initial is the schema every database starts with (and returns to after
// drop-all): Dgraph's dgraph.type predicate, which holds node types.
func Initial() *Schema {
	s, err := Parse(initialText)
	if err != nil {
		panic("schema: initial schema: " + err.Error())
	}
	return s
}

// PredicateChange is what an alter does to one predicate: the definitions
// before and after, and the derived work for the engine.
type PredicateChange struct {
	Name     string
	Old, New *Predicate // Old nil: created; New nil: dropped
	// IndexBuild and IndexDrop are the tokenizers whose index must be built
	// (from the predicate's existing values) or deleted. A tokenizer whose
	// options change is dropped and built.
	IndexBuild, IndexDrop []Tokenizer
	// ReverseBuild/ReverseDrop and CountBuild/CountDrop: the reverse edges
	// and the count index to build or delete.
	ReverseBuild, ReverseDrop bool
	CountBuild, CountDrop     bool
	// Convert: the value type or list-ness changed, so stored values are
	// converted and every index (and the count index) is rebuilt.
	Convert bool
	// RequiresEmpty: Dgraph allows this change only while the predicate holds
	// no data (uid <-> scalar, or a list becoming a single value); the engine
	// must check and refuse otherwise.
	RequiresEmpty bool
}

// TypeChange is a type created (Old nil), replaced, or dropped (New nil).
type TypeChange struct {
	Name     string
	Old, New *Type
}

// Diff is what an alter changes, sorted by name; definitions restated
// unchanged do not appear.
type Diff struct {
	Predicates []PredicateChange
	Types      []TypeChange
}

// Empty reports whether the alter changes nothing.
func (d Diff) Empty() bool { return len(d.Predicates) == 0 && len(d.Types) == 0 }

// String renders the diff for logs and golden tests, one line per change.
func (d Diff) String() string {
	var b strings.Builder
	for _, c := range d.Predicates {
		switch {
		case c.Old == nil:
			fmt.Fprintf(&b, "create %s", c.New)
		case c.New == nil:
			fmt.Fprintf(&b, "drop %s", c.Old)
		default:
			fmt.Fprintf(&b, "change %s -> %s", c.Old, c.New)
		}
		work := []string{}
		add := func(on bool, s string) {
			if on {
				work = append(work, s)
			}
		}
		add(len(c.IndexBuild) > 0, "build index "+joinTokenizers(c.IndexBuild))
		add(len(c.IndexDrop) > 0, "drop index "+joinTokenizers(c.IndexDrop))
		add(c.ReverseBuild, "build reverse")
		add(c.ReverseDrop, "drop reverse")
		add(c.CountBuild, "build count")
		add(c.CountDrop, "drop count")
		add(c.Convert, "convert values")
		add(c.RequiresEmpty, "requires no data")
		if len(work) > 0 {
			b.WriteString(" [" + strings.Join(work, "; ") + "]")
		}
		b.WriteByte('\n')
	}
	for _, c := range d.Types {
		switch {
		case c.Old == nil:
			fmt.Fprintf(&b, "create type %s %v\n", c.New.Name, c.New.Fields)
		case c.New == nil:
			fmt.Fprintf(&b, "drop type %s\n", c.Old.Name)
		default:
			fmt.Fprintf(&b, "change type %s %v -> %v\n", c.New.Name, c.Old.Fields, c.New.Fields)
		}
	}
	return b.String()
}

func joinTokenizers(ts []Tokenizer) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// Apply is Dgraph's alter with schema text: each predicate or type in u
// replaces the definition of that name whole (a predicate restated without
// @index loses its index); names u does not mention are kept. It returns the
// new schema and what changed, or an error (and no change) when u:
// redefines a reserved dgraph.* predicate or type; changes a password
// predicate to another type or back; defines a type whose field names a
// predicate in neither s nor u (Dgraph: "Schema does not contain a matching
// predicate for field ..."). s is not modified.
func (s *Schema) Apply(u *Schema) (*Schema, Diff, error) {
	var d Diff
	for _, name := range slices.Sorted(maps.Keys(u.preds)) {
		np := u.preds[name]
		op, had := s.preds[name]
		if strings.HasPrefix(name, ReservedPrefix) && !(had && op.Equal(np)) {
			return nil, Diff{}, errorAt(np.Pos, "predicate %s is reserved (pre-defined) and cannot be changed", name)
		}
		if !had {
			d.Predicates = append(d.Predicates, created(np))
			continue
		}
		if op.Equal(np) {
			continue
		}
		if (op.Type == Password) != (np.Type == Password) {
			return nil, Diff{}, errorAt(np.Pos, "predicate %s cannot change type from %s to %s", name, op.Type, np.Type)
		}
		d.Predicates = append(d.Predicates, changed(op, np))
	}
	for _, name := range slices.Sorted(maps.Keys(u.types)) {
		nt := u.types[name]
		ot, had := s.types[name]
		if strings.HasPrefix(name, ReservedPrefix) && !(had && ot.Equal(nt)) {
			return nil, Diff{}, errorAt(nt.Pos, "type %s is reserved (pre-defined) and cannot be changed", name)
		}
		for _, f := range nt.Fields {
			pred := strings.TrimPrefix(f, "~")
			if _, ok := u.preds[pred]; !ok {
				if _, ok := s.preds[pred]; !ok {
					return nil, Diff{}, errorAt(nt.Pos, "schema does not contain a matching predicate for field %s in type %s", f, name)
				}
			}
		}
		switch {
		case !had:
			d.Types = append(d.Types, TypeChange{Name: name, New: &nt})
		case !ot.Equal(nt):
			d.Types = append(d.Types, TypeChange{Name: name, Old: &ot, New: &nt})
		}
	}
	return s.with(d), d, nil
}

// DropPredicate removes a predicate (Dgraph's drop_attr); its data and
// indexes go, as the diff says. Types naming it keep the field, as in
// Dgraph. Dropping an absent predicate changes nothing.
func (s *Schema) DropPredicate(name string) (*Schema, Diff, error) {
	if strings.HasPrefix(name, ReservedPrefix) {
		return nil, Diff{}, errorAt(Pos{}, "predicate %s is reserved (pre-defined) and cannot be dropped", name)
	}
	op, ok := s.preds[name]
	if !ok {
		return s, Diff{}, nil
	}
	d := Diff{Predicates: []PredicateChange{{
		Name: name, Old: &op, IndexDrop: slices.Clone(op.Index), ReverseDrop: op.Reverse, CountDrop: op.Count,
	}}}
	return s.with(d), d, nil
}

// DropType removes a type definition (Dgraph's DropOp TYPE); predicates
// stay. Dropping an absent type changes nothing.
func (s *Schema) DropType(name string) (*Schema, Diff, error) {
	if strings.HasPrefix(name, ReservedPrefix) {
		return nil, Diff{}, errorAt(Pos{}, "type %s is reserved (pre-defined) and cannot be dropped", name)
	}
	ot, ok := s.types[name]
	if !ok {
		return s, Diff{}, nil
	}
	d := Diff{Types: []TypeChange{{Name: name, Old: &ot}}}
	return s.with(d), d, nil
}

// with returns a copy of s with the diff applied.
func (s *Schema) with(d Diff) *Schema {
	out := s.clone()
	for _, c := range d.Predicates {
		if c.New == nil {
			delete(out.preds, c.Name)
		} else {
			out.preds[c.Name] = c.New.clone()
		}
	}
	for _, c := range d.Types {
		if c.New == nil {
			delete(out.types, c.Name)
		} else {
			out.types[c.Name] = *c.New
		}
	}
	if invariants.On {
		out.check()
	}
	return out
}

// created: a predicate without a previous definition. Its indexes, reverse
// edges and count are built from whatever values exist (none, unless data
// was written before the schema, as Dgraph's flexible mode allows).
func created(np Predicate) PredicateChange {
	return PredicateChange{Name: np.Name, New: &np, IndexBuild: slices.Clone(np.Index),
		ReverseBuild: np.Reverse, CountBuild: np.Count}
}

// changed derives the work between two definitions of a predicate.
func changed(op, np Predicate) PredicateChange {
	c := PredicateChange{Name: np.Name, Old: &op, New: &np}
	c.Convert = op.Type != np.Type || op.List != np.List
	c.RequiresEmpty = (op.Type == UID) != (np.Type == UID) || op.List && !np.List
	if c.Convert {
		// Every index key derives from the values, which change form.
		c.IndexDrop, c.IndexBuild = slices.Clone(op.Index), slices.Clone(np.Index)
		c.ReverseDrop, c.ReverseBuild = op.Reverse, np.Reverse
		c.CountDrop, c.CountBuild = op.Count, np.Count
		return c
	}
	c.IndexDrop = tokenizersMinus(op.Index, np.Index)
	c.IndexBuild = tokenizersMinus(np.Index, op.Index)
	c.ReverseDrop, c.ReverseBuild = op.Reverse && !np.Reverse, np.Reverse && !op.Reverse
	c.CountDrop, c.CountBuild = op.Count && !np.Count, np.Count && !op.Count
	return c
}

// tokenizersMinus is a \ b, comparing options too.
func tokenizersMinus(a, b []Tokenizer) []Tokenizer {
	var out []Tokenizer
	for _, t := range a {
		if !slices.ContainsFunc(b, t.Equal) {
			out = append(out, t)
		}
	}
	return out
}
