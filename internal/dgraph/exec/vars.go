package exec

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/value"
)

// scalarUID is the key of a value variable holding one value for the whole
// query (an aggregate in a block without func).
const scalarUID = 0

// varValue is value variable name at node u: its own value; else, when the
// variable is defined below this level, the sum of its values along the
// paths below u (Dgraph's value propagation); else the query-wide value of
// an aggregate variable.
func (x *run) varValue(sel *dql.Selection, name string, u uint64) (value.Value, bool) {
	if v, ok := x.valVars[name][u]; ok {
		return v, true
	}
	if sel != nil && definesVar(sel, name) {
		vs := x.descendantValues(sel, name, u)
		if len(vs) == 0 {
			return value.Value{}, false
		}
		return aggregate("sum", vs)
	}
	v, ok := x.valVars[name][scalarUID]
	return v, ok
}

// definesVar reports whether name is defined somewhere under sel.
func definesVar(sel *dql.Selection, name string) bool {
	for _, f := range sel.Fields {
		if f.Var == name || definesVar(&f.Selection, name) {
			return true
		}
		if f.Facets != nil {
			for _, k := range f.Facets.Keys {
				if k.Var == name {
					return true
				}
			}
		}
	}
	return false
}

// definedAtChildren reports whether uid-valued field f defines name on its
// children: a sub-field assigned to it, or a facet variable of its edges.
func definedAtChildren(f *dql.Field, name string) bool {
	if f.Facets != nil {
		for _, k := range f.Facets.Keys {
			if k.Var == name {
				return true
			}
		}
	}
	for _, g := range f.Fields {
		if g.Var == name {
			return true
		}
	}
	return false
}

// descendantValues collects the values of name on the nodes below u that
// the selection's uid-valued fields reached (one value per path).
func (x *run) descendantValues(sel *dql.Selection, name string, u uint64) []value.Value {
	var out []value.Value
	for _, f := range sel.Fields {
		lists, ok := x.edgeLists[f]
		if !ok || !definesVar(&dql.Selection{Fields: []*dql.Field{f}}, name) {
			continue
		}
		for _, c := range lists[u] {
			if definedAtChildren(f, name) {
				if v, ok := x.valVars[name][c]; ok {
					out = append(out, elems(v)...)
				}
				continue
			}
			out = append(out, x.descendantValues(&f.Selection, name, c)...)
		}
	}
	return out
}

// aggregate computes min, max, sum or avg; ok is false for no values or
// values that do not aggregate (sum of strings).
func aggregate(agg string, vs []value.Value) (value.Value, bool) {
	if len(vs) == 0 {
		return value.Value{}, false
	}
	switch agg {
	case "min", "max":
		best, found := value.Value{}, false
		for _, v := range vs {
			if !found {
				best, found = v, true
				continue
			}
			c, ok := value.Compare(v, best)
			if ok && (agg == "min" && c < 0 || agg == "max" && c > 0) {
				best = v
			}
		}
		return best, found
	}
	allInt := true
	var si int64
	var sf float64
	for _, v := range vs {
		f, ok := v.Number()
		if !ok {
			return value.Value{}, false
		}
		if v.Kind() == value.Int {
			si += v.Int()
		} else {
			allInt = false
		}
		sf += f
	}
	if agg == "avg" {
		return value.F64(sf / float64(len(vs))), true
	}
	if allInt {
		return value.I64(si), true
	}
	return value.F64(sf), true
}

// aggField computes min/max/sum/avg(val(v)) for each node over the values
// of v below it, or over all of v's values when v is defined elsewhere.
func (x *run) aggField(sel *dql.Selection, f *dql.Field, uids []uint64, objs map[uint64]*object) error {
	if f.ValVar == "" {
		return fmt.Errorf("%w: %s(%s) outside @groupby", ErrInvalid, f.Agg, f.Attr)
	}
	k, aliased := keyOf(f, fieldKey(f))
	vals := map[uint64]value.Value{}
	below := definesVar(sel, f.ValVar)
	var whole []value.Value // a variable of another block: aggregated whole
	if !below {
		m := x.valVars[f.ValVar]
		for _, u := range slicesSortedUIDs(m) {
			whole = append(whole, elems(m[u])...)
		}
	}
	for _, u := range uids {
		vs := whole
		if below {
			vs = x.descendantValues(sel, f.ValVar, u)
		}
		if v, ok := aggregate(f.Agg, vs); ok {
			objs[u].add(k, v, aliased)
			vals[u] = v
		}
	}
	x.defineVal(f.Var, vals)
	return nil
}

// aggBlock runs a block without func: aggregates over whole variables and
// math over them, each answer its own object as in Dgraph.
func (x *run) aggBlock(b *dql.Block) (*blockOut, error) {
	out := []*object{}
	for _, f := range b.Fields {
		var v value.Value
		var ok bool
		switch f.Kind {
		case dql.FieldAgg:
			if f.ValVar == "" {
				return nil, fmt.Errorf("%w: %s(%s) outside @groupby", ErrInvalid, f.Agg, f.Attr)
			}
			m := x.valVars[f.ValVar]
			var vs []value.Value
			for _, u := range slicesSortedUIDs(m) {
				vs = append(vs, elems(m[u])...)
			}
			v, ok = aggregate(f.Agg, vs)
			if len(vs) == 0 && f.Agg == "sum" {
				v, ok = value.F64(0), true // Dgraph answers 0 for the sum of nothing
			}
		case dql.FieldMath:
			v, ok = x.evalMath(nil, f.Math, scalarUID)
		default:
			return nil, fmt.Errorf("%w: a block without func only aggregates (found %s)", ErrInvalid, f.Kind)
		}
		if !ok {
			continue
		}
		if f.Var != "" {
			x.defineVal(f.Var, map[uint64]value.Value{scalarUID: v})
		}
		if f.Kind == dql.FieldMath && f.Alias == "" {
			continue
		}
		o := &object{}
		k, aliased := keyOf(f, fieldKey(f))
		o.add(k, v, aliased)
		out = append(out, o)
	}
	return &blockOut{key: b.Name, val: out}, nil
}

func slicesSortedUIDs(m map[uint64]value.Value) []uint64 {
	out := make([]uint64, 0, len(m))
	for u := range m {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// mathField evaluates math(...) per node; it is output under its alias and
// defines its variable.
func (x *run) mathField(sel *dql.Selection, f *dql.Field, uids []uint64, objs map[uint64]*object) error {
	vals := map[uint64]value.Value{}
	for _, u := range uids {
		v, ok := x.evalMath(sel, f.Math, u)
		if !ok {
			continue
		}
		vals[u] = v
		if f.Alias != "" {
			objs[u].add(f.Alias, v, true)
		}
	}
	x.defineVal(f.Var, vals)
	return nil
}

// evalMath evaluates an expression at node u; ok is false when a variable
// has no value there or the operation does not apply.
func (x *run) evalMath(sel *dql.Selection, m *dql.Math, u uint64) (value.Value, bool) {
	switch {
	case m.Var != "":
		v, ok := x.varValue(sel, m.Var, u)
		if ok && v.Kind() == value.List {
			return value.Value{}, false
		}
		return v, ok
	case m.Const != nil:
		if m.Const.IsFloat {
			return value.F64(m.Const.Float), true
		}
		return value.I64(m.Const.Int), true
	}
	args := make([]value.Value, len(m.Args))
	for i, a := range m.Args {
		v, ok := x.evalMath(sel, a, u)
		if !ok {
			return value.Value{}, false
		}
		args[i] = v
	}
	return applyMath(m.Op, args)
}

func num(v value.Value) (float64, bool) {
	if v.Kind() == value.Datetime {
		return float64(v.Time().UnixNano()) / 1e9, true
	}
	if v.Kind() == value.Bool {
		if v.Bool() {
			return 1, true
		}
		return 0, true
	}
	return v.Number()
}

// applyMath applies one operator. As in Dgraph, arithmetic is done in
// floats (math(p + 1) of an int p is a float); comparisons give booleans;
// cond gives its chosen argument.
func applyMath(op string, a []value.Value) (value.Value, bool) {
	fs := make([]float64, len(a))
	for i, v := range a {
		f, ok := num(v)
		if !ok {
			return value.Value{}, false
		}
		fs[i] = f
	}
	switch op {
	case "+":
		return finite(fs[0] + fs[1])
	case "-":
		return finite(fs[0] - fs[1])
	case "*":
		return finite(fs[0] * fs[1])
	case "%":
		return finite(math.Mod(fs[0], fs[1]))
	case "/":
		if fs[1] == 0 {
			return value.Value{}, false
		}
		return finite(fs[0] / fs[1])
	case "min":
		return finite(math.Min(fs[0], fs[1]))
	case "max":
		return finite(math.Max(fs[0], fs[1]))
	case "neg":
		return finite(-fs[0])
	case "<":
		return value.Boolean(fs[0] < fs[1]), true
	case ">":
		return value.Boolean(fs[0] > fs[1]), true
	case "<=":
		return value.Boolean(fs[0] <= fs[1]), true
	case ">=":
		return value.Boolean(fs[0] >= fs[1]), true
	case "==":
		return value.Boolean(fs[0] == fs[1]), true
	case "!=":
		return value.Boolean(fs[0] != fs[1]), true
	case "floor":
		return finite(math.Floor(fs[0]))
	case "ceil":
		return finite(math.Ceil(fs[0]))
	case "ln":
		return finite(math.Log(fs[0]))
	case "exp":
		return finite(math.Exp(fs[0]))
	case "sqrt":
		return finite(math.Sqrt(fs[0]))
	case "pow":
		return finite(math.Pow(fs[0], fs[1]))
	case "logbase":
		return finite(math.Log(fs[0]) / math.Log(fs[1]))
	case "since":
		if a[0].Kind() != value.Datetime {
			return value.Value{}, false
		}
		return finite(time.Since(a[0].Time()).Seconds())
	case "dot":
		return finite(fs[0] * fs[1])
	case "cond":
		if fs[0] != 0 {
			return a[1], true
		}
		return a[2], true
	}
	return value.Value{}, false
}

func finite(f float64) (value.Value, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return value.Value{}, false
	}
	return value.F64(f), true
}

// expand outputs the predicates of the nodes' types (expand(_all_): each
// node's dgraph.type; expand(T, ...): the types named), as if each were
// asked for with the expand's sub-fields: values in every language with
// their facets; uid-valued predicates only when the expand has sub-fields,
// as in Dgraph.
func (x *run) expand(sel *dql.Selection, f *dql.Field, uids []uint64, objs map[uint64]*object, lc levelCtx) error {
	if f.ValVar != "" {
		return fmt.Errorf("%w: expand(val(%s))", ErrUnsupported, f.ValVar)
	}
	byPred := map[string][]uint64{}
	for _, u := range uids {
		var types []string
		if slices.Contains(f.Expand, "_all_") {
			for _, t := range elems(x.node(u).Values["dgraph.type"]) {
				types = append(types, t.Str())
			}
		} else {
			types = f.Expand
		}
		seen := map[string]bool{}
		for _, t := range types {
			T, ok := x.sch.Type(t)
			if !ok {
				continue
			}
			for _, p := range T.Fields {
				if !seen[p] {
					seen[p] = true
					byPred[p] = append(byPred[p], u)
				}
			}
		}
	}
	for _, p := range slicesSortedKeys(byPred) {
		sf := &dql.Field{Pos: f.Pos, Kind: dql.FieldPred, Attr: p, Selection: f.Selection}
		edge := x.isEdge(&dql.Field{Attr: p}, byPred[p])
		if edge && len(f.Fields) == 0 {
			continue
		}
		if !edge {
			// Every language and facet of a value, as Dgraph expands them.
			sf.Selection = dql.Selection{}
			sf.Langs, sf.Facets = []string{"*"}, &dql.Facets{All: true}
		}
		if err := x.field(sel, sf, byPred[p], objs, lc); err != nil {
			return err
		}
	}
	return nil
}

// groupBy groups nodes by the values (or edge targets) of the @groupby
// predicates and computes the selection's counts and aggregates per group:
// {"@groupby": [{pred: value, "count": n, ...}, ...]}, groups by size then
// value; nil when no node has the predicates (Dgraph then omits the key).
func (x *run) groupBy(sel *dql.Selection, uids []uint64) (*object, error) {
	if err := x.fetch(uids); err != nil {
		return nil, err
	}
	type group struct {
		vals    []value.Value
		members []uint64
	}
	groups := map[string]*group{}
	for _, u := range uids {
		n := x.node(u)
		combos := [][]value.Value{{}}
		for _, ga := range sel.GroupBy {
			var opts []value.Value
			if es, ok := n.Edges[ga.Attr]; ok {
				for _, e := range es {
					opts = append(opts, value.Str(dgraph.FormatUID(e.UID)))
				}
			} else {
				v, _, _ := langValue(n, ga.Attr, ga.Langs)
				opts = elems(v)
			}
			var next [][]value.Value
			for _, c := range combos {
				for _, o := range opts {
					next = append(next, append(slices.Clone(c), o))
				}
			}
			combos = next
		}
		for _, c := range combos {
			k := string(appendValue(nil, value.ListOf(c...)))
			g := groups[k]
			if g == nil {
				g = &group{vals: c}
				groups[k] = g
			}
			g.members = append(g.members, u)
		}
	}
	if len(groups) == 0 {
		return nil, nil
	}
	// Dgraph lists groups by size, then by value.
	keys := slicesSortedKeys(groups)
	slices.SortStableFunc(keys, func(a, b string) int {
		if d := len(groups[a].members) - len(groups[b].members); d != 0 {
			return d
		}
		c, _ := value.Compare(value.ListOf(groups[a].vals...), value.ListOf(groups[b].vals...))
		return c
	})
	// A variable in a group by one uid predicate holds each group's answer
	// under the group's uid.
	groupUID := func(g *group) (uint64, bool) {
		if len(g.vals) != 1 || g.vals[0].Kind() != value.String {
			return 0, false
		}
		u, err := dgraph.ParseUID(g.vals[0].Str())
		return u, err == nil
	}
	var out []*object
	for _, k := range keys {
		g := groups[k]
		o := &object{}
		for i, ga := range sel.GroupBy {
			name := ga.Alias
			if name == "" {
				name = ga.Attr + langSuffix(ga.Langs)
			}
			o.add(name, g.vals[i], ga.Alias != "")
		}
		for _, f := range sel.Fields {
			key, aliased := keyOf(f, fieldKey(f))
			set := func(v value.Value) {
				o.add(key, v, aliased)
				if gu, ok := groupUID(g); ok && f.Var != "" {
					x.defineVal(f.Var, map[uint64]value.Value{gu: v})
				}
			}
			switch f.Kind {
			case dql.FieldCountUID:
				set(value.I64(int64(len(g.members))))
			case dql.FieldAgg:
				var vs []value.Value
				for _, m := range g.members {
					if f.ValVar != "" {
						if v, ok := x.valVars[f.ValVar][m]; ok {
							vs = append(vs, elems(v)...)
						}
					} else if v, _, ok := langValue(x.node(m), f.Attr, f.Langs); ok {
						vs = append(vs, elems(v)...)
					}
				}
				if v, ok := aggregate(f.Agg, vs); ok {
					set(v)
				}
			case dql.FieldCount:
				var c int64
				for _, m := range g.members {
					c += count(x.node(m), f.Attr)
				}
				set(value.I64(c))
			}
		}
		out = append(out, o)
	}
	top := &object{}
	top.add("@groupby", out, false)
	return top, nil
}

// normalizeList flattens objects as @normalize does: only aliased values
// are kept, and nested lists multiply out into one object per path.
func normalizeList(list []*object) []*object {
	out := []*object{}
	for _, o := range list {
		for _, f := range flatten(o) {
			if len(f.keys) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

func flatten(o *object) []*object {
	base := &object{}
	var lists [][]*object
	for i, k := range o.keys {
		v := o.vals[i]
		if one, ok := v.(*object); ok {
			v = []*object{one}
		}
		switch v := v.(type) {
		case []*object:
			var sub []*object
			for _, c := range v {
				sub = append(sub, flatten(c)...)
			}
			if len(sub) > 0 {
				lists = append(lists, sub)
			}
		default:
			if o.alias[i] {
				base.add(k, v, true)
			}
		}
	}
	res := []*object{base}
	for _, l := range lists {
		var next []*object
		for _, r := range res {
			for _, c := range l {
				m := r.clone()
				for j, k := range c.keys {
					m.add(k, c.vals[j], true)
				}
				next = append(next, m)
			}
		}
		res = next
	}
	return res
}
