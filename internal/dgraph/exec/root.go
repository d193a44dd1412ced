package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/value"
)

// root returns the sorted uids a block's root function selects, through
// the indexes: uid() from literals and variables, eq/type from exact-style
// indexes, le/lt/ge/gt/between from a sortable index, has from has-sets,
// allofterms/anyofterms from the term index, alloftext/anyoftext from the
// fulltext index, regexp and match from the trigram index (their
// candidates then tested). Functions no index answers (counts, value
// variables, regexp on a predicate without trigram index) start from
// has(pred), or the variable's nodes, and test each node.
func (x *run) root(f *dql.Func) ([]uint64, error) {
	if why, ok := unsupportedFuncs[f.Name]; ok {
		return nil, fmt.Errorf("%w: %s: %s", ErrUnsupported, f.Name, why)
	}
	switch {
	case f.Name == "uid":
		out := append([]uint64(nil), f.UIDs...)
		for _, v := range f.Vars {
			out = append(out, x.varUIDs(v)...)
		}
		return sortedUnion(out), nil
	case f.ValVar != "":
		var cand []uint64
		for u := range x.valVars[f.ValVar] {
			cand = append(cand, u)
		}
		return x.testAll(f, sortedUnion(cand))
	case f.Name == "regexp" && !f.Count && x.indexed(f, "trigram"):
		return x.rootRegexp(f)
	case f.Count || f.Name == "regexp" || f.Name != "eq" && slices.ContainsFunc(f.Args, func(a dql.Arg) bool { return a.Kind == dql.ArgValVar }):
		if strings.HasPrefix(f.Attr, "~") {
			return nil, fmt.Errorf("%w: %s on a reverse predicate at the root", ErrUnsupported, f.Name)
		}
		cand, err := x.rd.Has(x.ctx, f.Attr)
		if err != nil {
			return nil, err
		}
		return x.testAll(f, cand)
	}
	switch f.Name {
	case "has":
		if p, ok := strings.CutPrefix(f.Attr, "~"); ok {
			return x.hasReverse(p)
		}
		return x.rd.Has(x.ctx, f.Attr)
	case "type":
		return x.eqUnion("dgraph.type", "", f.Args)
	case "eq":
		return x.eqUnion(f.Attr, f.Lang, f.Args)
	case "le", "lt", "ge", "gt", "between":
		return x.rootRange(f)
	case "allofterms", "anyofterms":
		return x.rootTerms(f)
	case "alloftext", "anyoftext":
		return x.rootText(f)
	case "match":
		return x.rootMatch(f)
	case "uid_in":
		return nil, fmt.Errorf("%w: uid_in is a filter, not a root function", ErrInvalid)
	}
	return nil, fmt.Errorf("%w: root function %s", ErrUnsupported, f.Name)
}

// hasReverse answers has(~p), for which no has-set exists: the targets of
// the p edges of every node having p (it reads all of them).
func (x *run) hasReverse(p string) ([]uint64, error) {
	subj, err := x.rd.Has(x.ctx, p)
	if err != nil {
		return nil, err
	}
	if err := x.fetch(subj); err != nil {
		return nil, err
	}
	var out []uint64
	for _, u := range subj {
		for _, e := range x.node(u).Edges[p] {
			out = append(out, e.UID)
		}
	}
	return sortedUnion(out), nil
}

// testAll keeps the candidates passing f.
func (x *run) testAll(f *dql.Func, cand []uint64) ([]uint64, error) {
	return x.filter(&dql.Filter{Op: dql.FilterFunc, Func: f}, cand)
}

func (x *run) eqUnion(pred, lang string, args []dql.Arg) ([]uint64, error) {
	var lists [][]uint64
	var vals []value.Value
	for _, a := range args {
		switch a.Kind {
		case dql.ArgValue:
			vals = append(vals, value.Str(a.Value))
		case dql.ArgValVar:
			vals = append(vals, x.varValues(a.Value)...)
		default:
			return nil, fmt.Errorf("%w: eq takes values", ErrInvalid)
		}
	}
	for _, v := range vals {
		us, err := x.rd.Eq(x.ctx, pred, lang, v)
		if err != nil {
			return nil, err
		}
		lists = append(lists, us)
	}
	return sortedUnion(lists...), nil
}

func (x *run) rootRange(f *dql.Func) ([]uint64, error) {
	var lo, hi *dgraph.Bound
	arg := func(i int) (value.Value, error) {
		if i >= len(f.Args) || f.Args[i].Kind != dql.ArgValue {
			return value.Value{}, fmt.Errorf("%w: %s needs literal values", ErrInvalid, f.Name)
		}
		return value.Str(f.Args[i].Value), nil
	}
	v, err := arg(0)
	if err != nil {
		return nil, err
	}
	switch f.Name {
	case "le", "lt":
		hi = &dgraph.Bound{Value: v, Exclusive: f.Name == "lt"}
	case "ge", "gt":
		lo = &dgraph.Bound{Value: v, Exclusive: f.Name == "gt"}
	case "between":
		w, err := arg(1)
		if err != nil {
			return nil, err
		}
		lo, hi = &dgraph.Bound{Value: v}, &dgraph.Bound{Value: w}
	}
	return x.rd.Range(x.ctx, f.Attr, f.Lang, lo, hi)
}

func (x *run) rootTerms(f *dql.Func) ([]uint64, error) {
	c, err := x.compile(f)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for i, t := range c.terms {
		us, err := x.rd.Lookup(x.ctx, f.Attr, f.Lang, "term", t)
		if err != nil {
			return nil, err
		}
		switch {
		case f.Name == "anyofterms":
			out = sortedUnion(out, us)
		case i == 0:
			out = us
		default:
			out = intersect(out, us)
		}
	}
	return out, nil
}

// varUIDs are the nodes of variable v: a uid variable's, or those a value
// variable has values for (Dgraph's uid(valueVar)).
func (x *run) varUIDs(v string) []uint64 {
	if us, ok := x.uidVars[v]; ok {
		return us
	}
	var out []uint64
	for u := range x.valVars[v] {
		if u != scalarUID {
			out = append(out, u)
		}
	}
	return sortedUnion(out)
}

// indexed reports whether f's predicate has index tok and f names one
// value key (not p@., nor several languages): a lookup reads one key.
func (x *run) indexed(f *dql.Func, tok string) bool {
	P, ok := x.predOf(f.Attr)
	return ok && P.Indexed(tok) && !strings.ContainsAny(f.Lang, ":.*")
}

// lookups returns the nodes with each token of index tok, reading each
// distinct token once.
func (x *run) lookups(f *dql.Func, tok string, tokens []string, cache map[string][]uint64) ([][]uint64, error) {
	out := make([][]uint64, len(tokens))
	for i, t := range tokens {
		us, ok := cache[t]
		if !ok {
			var err error
			if us, err = x.rd.Lookup(x.ctx, f.Attr, f.Lang, tok, t); err != nil {
				return nil, err
			}
			cache[t] = us
		}
		out[i] = us
	}
	return out, nil
}

// rootText answers alloftext/anyoftext: the fulltext index's nodes with
// every (any) stem of the text in the asked language, each then checked
// in its value's language (the index holds stems of all languages).
func (x *run) rootText(f *dql.Func) ([]uint64, error) {
	c, err := x.compile(f)
	if err != nil {
		return nil, err
	}
	if !x.indexed(f, "fulltext") {
		return x.scanRoot(f)
	}
	terms := c.queryTerms(f.Lang)
	if len(terms) == 0 {
		return nil, nil
	}
	if len(terms) > tokenLookupsMax {
		return x.scanRoot(f)
	}
	lists, err := x.lookups(f, "fulltext", terms, map[string][]uint64{})
	if err != nil {
		return nil, err
	}
	cand := lists[0]
	for _, l := range lists[1:] {
		if f.Name == "anyoftext" {
			cand = sortedUnion(cand, l)
		} else {
			cand = intersect(cand, l)
		}
	}
	return x.testAll(f, cand)
}

// rootMatch answers match: the trigram index's nodes sharing a trigram
// with the string, checked for the edit distance.
func (x *run) rootMatch(f *dql.Func) ([]uint64, error) {
	c, err := x.compile(f)
	if err != nil {
		return nil, err
	}
	if !x.indexed(f, "trigram") {
		return x.scanRoot(f)
	}
	if len(c.grams) > tokenLookupsMax {
		return x.scanRoot(f)
	}
	lists, err := x.lookups(f, "trigram", c.grams, map[string][]uint64{})
	if err != nil {
		return nil, err
	}
	return x.testAll(f, sortedUnion(lists...))
}

// tokenLookupsMax bounds the distinct tokens a root alloftext, anyoftext,
// regexp or match looks up (each a read of every bucket's token vertex);
// beyond it (a long text, a (?i) regexp with a long literal) the root
// scans has(pred) instead.
const tokenLookupsMax = 128

// countTrigrams counts the distinct trigrams of q into seen.
func countTrigrams(q *index.TrigramQuery, seen map[string]bool) int {
	for _, t := range q.Trigrams {
		seen[t] = true
	}
	for _, s := range q.Sub {
		countTrigrams(s, seen)
	}
	return len(seen)
}

// errRegexpTooWide is Dgraph's refusal of a root regexp giving no trigram.
const errRegexpTooWide = "regular expression is too wide-ranging and can't be executed efficiently"

// rootRegexp answers regexp through the trigram index: the nodes
// satisfying the regexp's trigram query, checked with the regexp.
func (x *run) rootRegexp(f *dql.Func) ([]uint64, error) {
	c, err := x.compile(f)
	if err != nil {
		return nil, err
	}
	if c.trigrams.Op == index.TrigramAll {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, errRegexpTooWide)
	}
	if countTrigrams(c.trigrams, map[string]bool{}) > tokenLookupsMax {
		return x.scanRoot(f)
	}
	cand, err := x.evalTrigrams(f, c.trigrams, map[string][]uint64{})
	if err != nil {
		return nil, err
	}
	return x.testAll(f, cand)
}

// evalTrigrams returns the nodes satisfying a trigram query (not
// TrigramAll) by index lookups.
func (x *run) evalTrigrams(f *dql.Func, q *index.TrigramQuery, cache map[string][]uint64) ([]uint64, error) {
	lists, err := x.lookups(f, "trigram", q.Trigrams, cache)
	if err != nil {
		return nil, err
	}
	for _, s := range q.Sub {
		if s.Op == index.TrigramAll {
			continue // only under and (normalised away); an or never holds one
		}
		us, err := x.evalTrigrams(f, s, cache)
		if err != nil {
			return nil, err
		}
		lists = append(lists, us)
	}
	if q.Op == index.TrigramOr {
		return sortedUnion(lists...), nil
	}
	if len(lists) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, errRegexpTooWide)
	}
	out := lists[0]
	for _, l := range lists[1:] {
		out = intersect(out, l)
	}
	return out, nil
}

// scanRoot answers a function whose index cannot serve the lookup (several
// languages) from has(pred), testing each node.
func (x *run) scanRoot(f *dql.Func) ([]uint64, error) {
	cand, err := x.rd.Has(x.ctx, f.Attr)
	if err != nil {
		return nil, err
	}
	return x.testAll(f, cand)
}
