package index

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrigramTokens is the trigram tokenizer: every substring of three runes of
// s, as stored (no case folding), sorted and distinct. A value shorter than
// three runes has none.
func TrigramTokens(s string) []string {
	if utf8.RuneCountInString(s) < 3 {
		return nil
	}
	rs := []rune(s)
	out := make([]string, 0, len(rs)-2)
	for i := 0; i+3 <= len(rs); i++ {
		out = append(out, string(rs[i:i+3]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TrigramOp is the kind of a TrigramQuery node.
type TrigramOp int

const (
	// TrigramAll matches every value: the regexp gives no trigram.
	TrigramAll TrigramOp = iota
	// TrigramAnd needs every trigram and every sub-query.
	TrigramAnd
	// TrigramOr needs one trigram or one sub-query.
	TrigramOr
)

// TrigramQuery is a boolean query over trigrams that every string a regexp
// matches (somewhere inside it) satisfies: the candidates an index lookup
// gives, to be checked with the regexp itself (Russ Cox's "Regular
// Expression Matching with a Trigram Index", as Dgraph uses it).
type TrigramQuery struct {
	Op       TrigramOp
	Trigrams []string
	Sub      []*TrigramQuery
}

var trigramAll = &TrigramQuery{Op: TrigramAll}

// String renders the query for tests and errors: "+" for all, and/or as
// (a b) and (a|b).
func (q *TrigramQuery) String() string {
	if q.Op == TrigramAll {
		return "+"
	}
	var parts []string
	for _, t := range q.Trigrams {
		parts = append(parts, strconvQuote(t))
	}
	for _, s := range q.Sub {
		parts = append(parts, s.String())
	}
	sep := " "
	if q.Op == TrigramOr {
		sep = "|"
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func strconvQuote(s string) string { return "\"" + s + "\"" }

// Match reports whether a value with trigram set have satisfies q (the
// index's view of the value; tests use it as an oracle).
func (q *TrigramQuery) Match(have map[string]bool) bool {
	switch q.Op {
	case TrigramAll:
		return true
	case TrigramAnd:
		for _, t := range q.Trigrams {
			if !have[t] {
				return false
			}
		}
		for _, s := range q.Sub {
			if !s.Match(have) {
				return false
			}
		}
		return true
	}
	for _, t := range q.Trigrams {
		if have[t] {
			return true
		}
	}
	for _, s := range q.Sub {
		if s.Match(have) {
			return true
		}
	}
	return false
}

func and(qs ...*TrigramQuery) *TrigramQuery {
	out := &TrigramQuery{Op: TrigramAnd}
	for _, q := range qs {
		switch q.Op {
		case TrigramAll:
		case TrigramAnd:
			out.Trigrams = append(out.Trigrams, q.Trigrams...)
			out.Sub = append(out.Sub, q.Sub...)
		default:
			out.Sub = append(out.Sub, q)
		}
	}
	return normalize(out)
}

func or(qs ...*TrigramQuery) *TrigramQuery {
	out := &TrigramQuery{Op: TrigramOr}
	for _, q := range qs {
		switch q.Op {
		case TrigramAll:
			return trigramAll
		case TrigramOr:
			out.Trigrams = append(out.Trigrams, q.Trigrams...)
			out.Sub = append(out.Sub, q.Sub...)
		default:
			if q.Op == TrigramAnd && len(q.Sub) == 0 && len(q.Trigrams) == 1 {
				out.Trigrams = append(out.Trigrams, q.Trigrams[0])
				continue
			}
			out.Sub = append(out.Sub, q)
		}
	}
	return normalize(out)
}

func normalize(q *TrigramQuery) *TrigramQuery {
	slices.Sort(q.Trigrams)
	q.Trigrams = slices.Compact(q.Trigrams)
	if len(q.Trigrams) == 0 && len(q.Sub) == 0 {
		return trigramAll // an empty or: nothing known, match all
	}
	if len(q.Trigrams) == 0 && len(q.Sub) == 1 {
		return q.Sub[0]
	}
	if len(q.Trigrams) == 1 && len(q.Sub) == 0 {
		q.Op = TrigramAnd // one trigram: and and or agree; and flattens
	}
	return q
}

// exactSetMax bounds the strings an exact set tracks (case variants of a
// (?i) literal, small classes, alternations) before it is turned into a
// query; exactRunesMax bounds a class expanded into single characters.
const (
	exactSetMax   = 64
	exactRunesMax = 8
)

// RegexpTrigrams returns the trigram query of a regexp (Go syntax, with
// "(?i)" for Dgraph's i flag): TrigramAll when the regexp gives no
// trigram, which Dgraph refuses at the root as too wide-ranging.
func RegexpTrigrams(pattern string) (*TrigramQuery, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return analyzeRegexp(re.Simplify()).query(), nil
}

// regexpInfo is what the analysis knows of a sub-expression: the query
// every match satisfies and, when small, the exact set of strings it
// matches (exact == nil: unknown or too many), else the sets every match
// starts (prefix) and ends (suffix) with, so that a concatenation gets
// the trigrams across its parts' boundaries (x+ in "ho(m+)es" still gives
// "hom" and "mes").
type regexpInfo struct {
	q              *TrigramQuery
	exact          []string
	prefix, suffix []string
}

// query is the info's whole query: its exact set's, with q.
func (i regexpInfo) query() *TrigramQuery {
	if i.exact == nil {
		return i.q
	}
	return and(i.q, exactQuery(i.exact))
}

func (i regexpInfo) pre() []string {
	if i.exact != nil {
		return i.exact
	}
	return i.prefix
}

func (i regexpInfo) suf() []string {
	if i.exact != nil {
		return i.exact
	}
	return i.suffix
}

// exactQuery is the query of a string set: one of the strings' trigrams;
// a string shorter than three runes makes it match all.
func exactQuery(set []string) *TrigramQuery {
	var alts []*TrigramQuery
	for _, s := range set {
		ts := TrigramTokens(s)
		if len(ts) == 0 {
			return trigramAll
		}
		alts = append(alts, and(&TrigramQuery{Op: TrigramAnd, Trigrams: ts}))
	}
	return or(alts...)
}

// product is every a+b, or nil when either is nil or there would be more
// than exactSetMax.
func product(x, y []string) []string {
	if x == nil || y == nil || len(x)*len(y) > exactSetMax {
		return nil
	}
	out := make([]string, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			out = append(out, a+b)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func analyzeRegexp(re *syntax.Regexp) regexpInfo {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return regexpInfo{q: trigramAll, exact: []string{""}}
	case syntax.OpLiteral:
		return literalInfo(re)
	case syntax.OpCharClass:
		return classInfo(re)
	case syntax.OpCapture:
		return analyzeRegexp(re.Sub[0])
	case syntax.OpPlus:
		return repeatInfo(analyzeRegexp(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return repeatInfo(analyzeRegexp(re.Sub[0]))
		}
	case syntax.OpQuest:
		if in := analyzeRegexp(re.Sub[0]); in.exact != nil && in.q.Op == TrigramAll && len(in.exact) < exactSetMax {
			set := append(slices.Clone(in.exact), "")
			slices.Sort(set)
			return regexpInfo{q: trigramAll, exact: slices.Compact(set)}
		}
	case syntax.OpConcat:
		return concatInfo(re.Sub)
	case syntax.OpAlternate:
		return alternateInfo(re.Sub)
	}
	// Star, quest, any char: no constraint.
	return regexpInfo{q: trigramAll}
}

// repeatInfo is one or more repetitions of x: x's query, starting with x's
// prefix and ending with its suffix.
func repeatInfo(x regexpInfo) regexpInfo {
	return regexpInfo{q: x.query(), prefix: x.pre(), suffix: x.suf()}
}

// literalInfo is a literal's exact set: itself, or its case variants under
// (?i) while they stay few (else the runs of few variants, as a query).
func literalInfo(re *syntax.Regexp) regexpInfo {
	if re.Flags&syntax.FoldCase == 0 {
		return regexpInfo{q: trigramAll, exact: []string{string(re.Rune)}}
	}
	info := regexpInfo{q: trigramAll, exact: []string{""}}
	for _, r := range re.Rune {
		info = concat2(info, regexpInfo{q: trigramAll, exact: foldVariants(r)})
	}
	return info
}

func foldVariants(r rune) []string {
	out := []string{string(r)}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, string(f))
	}
	slices.Sort(out)
	return out
}

// classInfo is a small class's exact set (its single characters).
func classInfo(re *syntax.Regexp) regexpInfo {
	var set []string
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		if int(hi-lo)+1+len(set) > exactRunesMax {
			return regexpInfo{q: trigramAll}
		}
		for r := lo; r <= hi; r++ {
			set = append(set, string(r))
		}
	}
	if len(set) == 0 {
		return regexpInfo{q: trigramAll}
	}
	return regexpInfo{q: trigramAll, exact: set}
}

func concatInfo(subs []*syntax.Regexp) regexpInfo {
	info := regexpInfo{q: trigramAll, exact: []string{""}}
	for _, s := range subs {
		info = concat2(info, analyzeRegexp(s))
	}
	return info
}

// concat2 is the info of x followed by y: the cross product of their exact
// sets while it stays small; otherwise both queries and the one of the
// strings across the boundary (x's suffixes, y's prefixes).
func concat2(x, y regexpInfo) regexpInfo {
	if x.exact != nil && y.exact != nil {
		if set := product(x.exact, y.exact); set != nil {
			return regexpInfo{q: and(x.q, y.q), exact: set}
		}
	}
	out := regexpInfo{q: and(x.query(), y.query())}
	if across := product(x.suf(), y.pre()); across != nil {
		out.q = and(out.q, exactQuery(across))
	}
	out.prefix = x.prefix
	if x.exact != nil {
		out.prefix = x.exact
		if p := product(x.exact, y.pre()); p != nil {
			out.prefix = p
		}
	}
	out.suffix = y.suffix
	if y.exact != nil {
		out.suffix = y.exact
		if s := product(x.suf(), y.exact); s != nil {
			out.suffix = s
		}
	}
	return out
}

// alternateInfo is one of the subs: the union of their exact sets when
// all have one, else the or of their queries (and the unions of their
// prefixes and suffixes when all have them).
func alternateInfo(subs []*syntax.Regexp) regexpInfo {
	infos := make([]regexpInfo, len(subs))
	var set, pre, suf []string
	exact, hasPre, hasSuf := true, true, true
	for i, s := range subs {
		in := analyzeRegexp(s)
		infos[i] = in
		exact = exact && in.exact != nil && in.q.Op == TrigramAll
		hasPre, hasSuf = hasPre && in.pre() != nil, hasSuf && in.suf() != nil
		set = append(set, in.exact...)
		pre, suf = append(pre, in.pre()...), append(suf, in.suf()...)
	}
	if exact && len(set) <= exactSetMax {
		slices.Sort(set)
		return regexpInfo{q: trigramAll, exact: slices.Compact(set)}
	}
	qs := make([]*TrigramQuery, len(infos))
	for i, in := range infos {
		qs[i] = in.query()
	}
	out := regexpInfo{q: or(qs...)}
	if hasPre && len(pre) <= exactSetMax {
		slices.Sort(pre)
		out.prefix = slices.Compact(pre)
	}
	if hasSuf && len(suf) <= exactSetMax {
		slices.Sort(suf)
		out.suffix = slices.Compact(suf)
	}
	return out
}
