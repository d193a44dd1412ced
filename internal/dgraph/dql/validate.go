package dql

import (
	"fmt"
	"slices"
	"strings"
)

// varSite is where a query variable is defined or used; block is the index
// of the block holding it, -1 outside the query (an upsert's mutations).
type varSite struct {
	name  string
	pos   Pos
	block int
}

// validate checks what needs the whole query: block names, output keys,
// and query variables (defined once, defined where used, used, no cycles
// between blocks). extra are uses outside the query.
func validate(q *Query, extra []varSite) error {
	if err := checkBlockNames(q); err != nil {
		return err
	}
	for _, b := range q.Blocks {
		if err := checkKeys(b.Fields); err != nil {
			return err
		}
		if err := checkContexts(b); err != nil {
			return err
		}
	}
	var defs, uses []varSite
	for i, b := range q.Blocks {
		d, u := blockVars(b, i)
		defs, uses = append(defs, d...), append(uses, u...)
	}
	return checkVars(q, defs, append(uses, extra...))
}

func checkBlockNames(q *Query) error {
	seen := map[string]Pos{}
	for _, b := range q.Blocks {
		if b.Name == "var" || b.Name == "shortest" {
			continue
		}
		if at, dup := seen[b.Name]; dup {
			return errorAt(b.Pos, "block name %s is used twice (also at %s)", b.Name, at)
		}
		seen[b.Name] = b.Pos
	}
	return nil
}

// fieldKey is the key a field's values have in the result, "" for fields
// without one (expand, math or aggregates kept only in a variable).
func fieldKey(f *Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	switch f.Kind {
	case FieldPred:
		if len(f.Langs) > 0 {
			return f.Attr + "@" + strings.Join(f.Langs, ":")
		}
		return f.Attr
	case FieldCount:
		return "count(" + f.Attr + ")"
	case FieldCountUID:
		if f.Var != "" {
			return ""
		}
		return "count"
	case FieldVal:
		return "val(" + f.ValVar + ")"
	case FieldAgg:
		if f.Var != "" {
			return ""
		}
		if f.ValVar != "" {
			return f.Agg + "(val(" + f.ValVar + "))"
		}
		return f.Agg + "(" + f.Attr + ")"
	case FieldCheckpwd:
		return "checkpwd(" + f.Attr + ")"
	}
	return ""
}

// checkKeys rejects an alias that clashes with another field's key at the
// same level. Fields repeated without aliases are left alone.
func checkKeys(fields []*Field) error {
	seen := map[string]*Field{}
	for _, f := range fields {
		if k := fieldKey(f); k != "" {
			if g, dup := seen[k]; dup && (f.Alias != "" || g.Alias != "") {
				return errorAt(f.Pos, "alias %s conflicts with another field of this level (at %s)", k, g.Pos)
			} else if !dup {
				seen[k] = f
			}
		}
		if err := checkKeys(f.Fields); err != nil {
			return err
		}
	}
	return nil
}

// checkContexts applies the rules of @groupby selections (aggregates and
// counts only) and of blocks without a root function (aggregates and math
// only) again after fragment expansion, which may bring any field in.
func checkContexts(b *Block) error {
	aggOnly := b.Func == nil && b.Shortest == nil
	return checkSelection(&b.Selection, aggOnly)
}

func checkSelection(s *Selection, aggOnly bool) error {
	for _, f := range s.Fields {
		switch {
		case s.GroupBy != nil && f.Kind != FieldAgg && f.Kind != FieldCount && f.Kind != FieldCountUID:
			return errorAt(f.Pos, "only aggregates and count are allowed inside @groupby, found %s", f.Kind)
		case aggOnly && f.Kind != FieldAgg && f.Kind != FieldMath:
			return errorAt(f.Pos, "a block without func only aggregates: found %s", f.Kind)
		}
		if err := checkSelection(&f.Selection, false); err != nil {
			return err
		}
	}
	return nil
}

// Vars returns the query variables the block defines and those it uses,
// each once, in text order. An executor runs a block once the blocks
// defining its uses have run (a block may use its own variables; Parse
// rejects cycles between blocks).
func (b *Block) Vars() (defines, uses []string) {
	d, u := blockVars(b, 0)
	return uniqueNames(d), uniqueNames(u)
}

func uniqueNames(sites []varSite) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sites {
		if !seen[s.name] {
			seen[s.name] = true
			out = append(out, s.name)
		}
	}
	return out
}

// blockVars lists the variables block b (index i) defines and uses.
func blockVars(b *Block, i int) (defs, uses []varSite) {
	if b.Var != "" {
		defs = append(defs, varSite{b.Var, b.Pos, i})
	}
	if s := b.Shortest; s != nil {
		for _, r := range []UIDRef{s.From, s.To} {
			if r.Var != "" {
				uses = append(uses, varSite{r.Var, b.Pos, i})
			}
		}
	}
	uses = funcVars(b.Func, i, uses)
	d, u := selectionVars(&b.Selection, i)
	return append(defs, d...), append(uses, u...)
}

func selectionVars(s *Selection, i int) (defs, uses []varSite) {
	for _, o := range s.Order {
		if o.Var != "" {
			uses = append(uses, varSite{o.Var, o.Pos, i})
		}
	}
	uses = filterVars(s.Filter, i, uses)
	for _, f := range s.Fields {
		if f.Var != "" {
			defs = append(defs, varSite{f.Var, f.Pos, i})
		}
		if f.ValVar != "" {
			uses = append(uses, varSite{f.ValVar, f.Pos, i})
		}
		if f.Facets != nil {
			for _, k := range f.Facets.Keys {
				if k.Var != "" {
					defs = append(defs, varSite{k.Var, f.Pos, i})
				}
			}
		}
		uses = mathVars(f.Math, i, uses)
		d, u := selectionVars(&f.Selection, i)
		defs, uses = append(defs, d...), append(uses, u...)
	}
	return defs, uses
}

func filterVars(f *Filter, i int, uses []varSite) []varSite {
	if f == nil {
		return uses
	}
	uses = funcVars(f.Func, i, uses)
	for _, c := range f.Children {
		uses = filterVars(c, i, uses)
	}
	return uses
}

func funcVars(f *Func, i int, uses []varSite) []varSite {
	if f == nil {
		return uses
	}
	for _, v := range []string{f.ValVar, f.LenVar} {
		if v != "" {
			uses = append(uses, varSite{v, f.Pos, i})
		}
	}
	for _, v := range f.Vars {
		uses = append(uses, varSite{v, f.Pos, i})
	}
	for _, a := range f.Args {
		if a.Kind == ArgValVar {
			uses = append(uses, varSite{a.Value, f.Pos, i})
		}
	}
	return uses
}

func mathVars(m *Math, i int, uses []varSite) []varSite {
	if m == nil {
		return uses
	}
	if m.Var != "" {
		uses = append(uses, varSite{m.Var, m.Pos, i})
	}
	for _, a := range m.Args {
		uses = mathVars(a, i, uses)
	}
	return uses
}

// checkVars applies Dgraph's rules: a variable is defined once, every use
// has a definition, every definition a use; and blocks may not depend on
// each other's variables in a cycle (none could run first).
func checkVars(q *Query, defs, uses []varSite) error {
	defined := map[string]varSite{}
	for _, d := range defs {
		if first, dup := defined[d.name]; dup {
			return errorAt(d.pos, "variable %s is defined twice (also at %s)", d.name, first.pos)
		}
		defined[d.name] = d
	}
	used := map[string]bool{}
	for _, u := range uses {
		if _, ok := defined[u.name]; !ok {
			return errorAt(usePos(u, q), "variable %s is used but not defined", u.name)
		}
		used[u.name] = true
	}
	for _, d := range defs {
		if !used[d.name] {
			return errorAt(d.pos, "variable %s is defined but not used", d.name)
		}
	}
	return checkCycles(q, defined, uses)
}

// usePos is where to report a use: outside uses without a place point at
// the query's start.
func usePos(u varSite, q *Query) Pos {
	switch {
	case u.pos.Line > 0:
		return u.pos
	case len(q.Blocks) > 0:
		return q.Blocks[0].Pos
	}
	return Pos{Line: 1, Col: 1}
}

// checkCycles finds blocks that need each other's variables. A block may
// use its own variables (Dgraph runs it once and resolves them inside).
func checkCycles(q *Query, defined map[string]varSite, uses []varSite) error {
	n := len(q.Blocks)
	// dep[i][j]: the first use in block i of a variable block j defines.
	dep := make([]map[int]varSite, n)
	for _, u := range uses {
		d := defined[u.name]
		if u.block < 0 || d.block == u.block {
			continue
		}
		if dep[u.block] == nil {
			dep[u.block] = map[int]varSite{}
		}
		if _, ok := dep[u.block][d.block]; !ok {
			dep[u.block][d.block] = u
		}
	}
	state := make([]uint8, n) // 0 new, 1 on the path, 2 done
	var path []int
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = 1
		path = append(path, i)
		js := make([]int, 0, len(dep[i]))
		for j := range dep[i] {
			js = append(js, j)
		}
		slices.Sort(js)
		for _, j := range js {
			switch state[j] {
			case 1:
				return cycleError(q, path[slices.Index(path, j):], dep)
			case 0:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		path = path[:len(path)-1]
		return nil
	}
	for i := range n {
		if state[i] == 0 {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

func cycleError(q *Query, cycle []int, dep []map[int]varSite) error {
	var b strings.Builder
	for k, i := range cycle {
		j := cycle[(k+1)%len(cycle)]
		fmt.Fprintf(&b, "%s uses %s of %s", blockLabel(q, i), dep[i][j].name, blockLabel(q, j))
		if k < len(cycle)-1 {
			b.WriteString(", ")
		}
	}
	first := dep[cycle[0]][cycle[(1)%len(cycle)]]
	return errorAt(first.pos, "blocks depend on each other's variables in a cycle: %s", b.String())
}

func blockLabel(q *Query, i int) string {
	return fmt.Sprintf("block %s (%s)", q.Blocks[i].Name, q.Blocks[i].Pos)
}
