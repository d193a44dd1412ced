package exec

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// Upsert evaluates an upsert block's query (reading through r) and returns
// the mutations to apply: those whose @if condition holds, with uid(v) and
// val(v) substituted, in the form dgraph.Graph.Mutate takes, plus the
// query's result for the response. A quad with uid(v) as subject or object
// is repeated for every uid of v; when v is empty it names a new node (the
// blank node "uid(v)", as in Dgraph). A quad with val(v) as object takes
// v's value at its subject, and is dropped where v has none. vars are the
// request's GraphQL variables, already substituted when u was parsed; they
// are accepted for symmetry with Query.
func (e *Executor) Upsert(ctx context.Context, r dgraph.Reader, u *dql.Upsert, vars map[string]string) ([]dgraph.Mutation, *Result, error) {
	_ = vars
	res := &Result{Data: []byte("{}"), UIDVars: map[string][]uint64{}, ValueVars: map[string]map[uint64]value.Value{}}
	if u.Query != nil {
		var err error
		if res, err = e.Run(ctx, r, u.Query); err != nil {
			return nil, nil, err
		}
	}
	var out []dgraph.Mutation
	for i, m := range u.Mutations {
		ok, err := cond(m.Cond, res)
		if err != nil {
			return nil, nil, fmt.Errorf("mutation %d: %w", i+1, err)
		}
		if !ok {
			continue
		}
		set := substitute(m.Set, res, true)
		del := substitute(m.Delete, res, false)
		if len(set) > 0 || len(del) > 0 {
			out = append(out, dgraph.Mutation{Set: set, Del: del})
		}
	}
	return out, res, nil
}

// cond evaluates an @if condition: eq/le/lt/ge/gt/between over len(v)
// (the size of uid variable v), with AND, OR, NOT.
func cond(f *dql.Filter, res *Result) (bool, error) {
	if f == nil {
		return true, nil
	}
	switch f.Op {
	case dql.FilterNot:
		ok, err := cond(f.Children[0], res)
		return !ok, err
	case dql.FilterAnd, dql.FilterOr:
		and := f.Op == dql.FilterAnd
		for _, c := range f.Children {
			ok, err := cond(c, res)
			if err != nil || ok != and {
				return ok, err
			}
		}
		return and, nil
	}
	fn := f.Func
	if fn.LenVar == "" {
		return false, fmt.Errorf("%w: an @if condition compares len(v), found %s", ErrUnsupported, fn.Name)
	}
	n := value.I64(int64(len(resultUIDs(res, fn.LenVar))))
	var args []value.Value
	for _, a := range fn.Args {
		if a.Kind != dql.ArgValue {
			return false, fmt.Errorf("%w: %s(len(%s), ...) takes numbers", ErrInvalid, fn.Name, fn.LenVar)
		}
		v, err := dgraph.ConvertValue(value.Str(a.Value), schema.Int)
		if err != nil {
			return false, fmt.Errorf("%w: %s(len(%s), %q): %v", ErrInvalid, fn.Name, fn.LenVar, a.Value, err)
		}
		args = append(args, v)
	}
	return compareOne(fn.Name, n, args), nil
}

// resultUIDs are the nodes of variable name: a uid variable's, or those a
// value variable has values for.
func resultUIDs(res *Result, name string) []uint64 {
	if us, ok := res.UIDVars[name]; ok {
		return us
	}
	var out []uint64
	for u := range res.ValueVars[name] {
		if u != scalarUID {
			out = append(out, u)
		}
	}
	return sortedUnion(out)
}

// substitute expands uid(v) and val(v) in quads. In deletions (set false)
// an empty uid(v) names nothing, and its quads are dropped.
func substitute(qs []rdf.NQuad, res *Result, set bool) []rdf.NQuad {
	var out []rdf.NQuad
	for _, q := range qs {
		subs := expandTerm(q.Subject, res, set)
		objs := []rdf.Term{q.Object}
		if q.Object.Kind == rdf.UIDVar {
			objs = expandTerm(q.Object, res, set)
		}
		for _, s := range subs {
			for _, o := range objs {
				nq := q
				nq.Subject, nq.Object = s, o
				if o.Kind == rdf.ValVar {
					v, ok := valAt(res, o.Name, s)
					if !ok {
						continue
					}
					nq.Object = rdf.Term{Kind: rdf.Literal, Value: v, Datatype: datatypeOf(v)}
				}
				out = append(out, nq)
			}
		}
	}
	return out
}

// expandTerm turns uid(v) into one term per uid of v (when v is empty, a
// blank node named "uid(v)" in a set, nothing in a deletion); other terms
// are kept.
func expandTerm(t rdf.Term, res *Result, set bool) []rdf.Term {
	if t.Kind != rdf.UIDVar {
		return []rdf.Term{t}
	}
	us := resultUIDs(res, t.Name)
	if len(us) == 0 {
		if !set {
			return nil
		}
		return []rdf.Term{{Kind: rdf.Blank, Name: "uid(" + t.Name + ")"}}
	}
	out := make([]rdf.Term, len(us))
	for i, u := range us {
		out[i] = rdf.Term{Kind: rdf.UID, UID: u}
	}
	return out
}

// valAt is value variable name at the subject (or its query-wide value).
func valAt(res *Result, name string, subj rdf.Term) (value.Value, bool) {
	m := res.ValueVars[name]
	if subj.Kind == rdf.UID {
		if v, ok := m[subj.UID]; ok {
			return v, true
		}
	}
	v, ok := m[scalarUID]
	return v, ok
}

// datatypeOf is the literal datatype that keeps v's type.
func datatypeOf(v value.Value) rdf.Datatype {
	switch v.Kind() {
	case value.Int:
		return rdf.TypeInt
	case value.Float:
		return rdf.TypeFloat
	case value.Bool:
		return rdf.TypeBool
	case value.Datetime:
		return rdf.TypeDatetime
	case value.String:
		return rdf.TypeString
	}
	return rdf.TypeDefault
}
