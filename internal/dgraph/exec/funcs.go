package exec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/value"
)

// compiled is a function prepared once per query: its literals converted,
// its regexp compiled, its node set gathered.
type compiled struct {
	f     *dql.Func
	args  []value.Value // literal arguments, converted to the predicate's type when it has one
	set   map[uint64]bool
	re    *regexp.Regexp
	terms []string
	// trigrams is regexp's trigram query (candidates at the root).
	trigrams *index.TrigramQuery
	// text is alloftext/anyoftext's query text; textTerms caches its
	// analysis per language (the value's: stems differ by language).
	text      string
	textTerms map[string][]string
	// fuzzy and dist are match's string and distance; grams the string's
	// trigrams (a value must share one, as with Dgraph's index lookup).
	fuzzy string
	dist  int
	grams []string
}

// unsupportedFuncs name the functions this executor does not evaluate, and why.
var unsupportedFuncs = map[string]string{
	"ngram":      "needs an ngram index, which Weft does not maintain",
	"near":       "geo functions are not supported",
	"within":     "geo functions are not supported",
	"contains":   "geo functions are not supported",
	"intersects": "geo functions are not supported",
	"similar_to": "vector search is not supported",
	"checkpwd":   "checkpwd is only a field, checkpwd(pred, \"password\")",
}

// compile prepares f, once per query.
func (x *run) compile(f *dql.Func) (*compiled, error) {
	if c, ok := x.funcs[f]; ok {
		return c, nil
	}
	if why, ok := unsupportedFuncs[f.Name]; ok {
		return nil, fmt.Errorf("%w: %s: %s", ErrUnsupported, f.Name, why)
	}
	c := &compiled{f: f}
	if err := x.needIndex(f); err != nil {
		return nil, err
	}
	switch f.Name {
	case "uid", "uid_in":
		c.set = map[uint64]bool{}
		for _, u := range f.UIDs {
			c.set[u] = true
		}
		for _, v := range f.Vars {
			for _, u := range x.varUIDs(v) {
				c.set[u] = true
			}
		}
		if f.Name == "uid_in" {
			for _, a := range f.Args {
				if a.Kind != dql.ArgValue {
					continue
				}
				u, err := dgraph.ParseUID(a.Value)
				if err != nil {
					return nil, fmt.Errorf("%w: uid_in: %v", ErrInvalid, err)
				}
				c.set[u] = true
			}
		}
	case "regexp":
		if len(f.Args) != 1 || f.Args[0].Kind != dql.ArgRegex {
			return nil, fmt.Errorf("%w: regexp needs /pattern/flags", ErrInvalid)
		}
		pat := f.Args[0].Value
		if strings.Contains(f.Args[0].Flags, "i") {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("%w: regexp: %v", ErrInvalid, err)
		}
		c.re = re
		if c.trigrams, err = index.RegexpTrigrams(pat); err != nil {
			return nil, fmt.Errorf("%w: regexp: %v", ErrInvalid, err)
		}
	case "alloftext", "anyoftext":
		var parts []string
		for _, a := range f.Args {
			if a.Kind != dql.ArgValue {
				return nil, fmt.Errorf("%w: %s takes a text", ErrInvalid, f.Name)
			}
			parts = append(parts, a.Value)
		}
		c.text, c.textTerms = strings.Join(parts, " "), map[string][]string{}
	case "match":
		if err := compileMatch(c); err != nil {
			return nil, err
		}
	case "allofterms", "anyofterms":
		for _, a := range f.Args {
			c.terms = append(c.terms, index.TermTokens(a.Value)...)
		}
		slices.Sort(c.terms)
		c.terms = slices.Compact(c.terms)
	case "eq", "le", "lt", "ge", "gt", "between":
		for _, a := range f.Args {
			switch a.Kind {
			case dql.ArgValue:
			case dql.ArgValVar:
				c.args = append(c.args, x.varValues(a.Value)...)
				continue
			default:
				return nil, fmt.Errorf("%w: %s takes literal values", ErrInvalid, f.Name)
			}
			v, err := x.literal(f, a.Value)
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, v)
		}
	case "has", "type":
	default:
		return nil, fmt.Errorf("%w: function %s", ErrUnsupported, f.Name)
	}
	x.funcs[f] = c
	return c, nil
}

// textIndex names the index alloftext, anyoftext and match need, at the
// root and in filters, as in Dgraph (regexp needs trigram at the root only,
// and Weft scans without it).
var textIndex = map[string]string{"alloftext": "fulltext", "anyoftext": "fulltext", "match": "trigram"}

// needIndex refuses a function whose predicate lacks the index it needs,
// with Dgraph's error text.
func (x *run) needIndex(f *dql.Func) error {
	tok, ok := textIndex[f.Name]
	if !ok || f.ValVar != "" {
		return nil
	}
	if P, ok := x.predOf(f.Attr); ok && P.Indexed(tok) {
		return nil
	}
	return fmt.Errorf("%w: Attribute %s is not indexed with type %s", dgraph.ErrNoIndex, f.Attr, tok)
}

// varValues are all the values of value variable name, in uid order
// (eq(p, val(v)) compares with each).
func (x *run) varValues(name string) []value.Value {
	m := x.valVars[name]
	var out []value.Value
	for _, u := range slicesSortedUIDs(m) {
		out = append(out, elems(m[u])...)
	}
	return out
}

// literal converts a function's literal to what it is compared with: an
// int for counts, the predicate's schema type when it has one, else the
// text (converted per stored value by compareLit).
func (x *run) literal(f *dql.Func, text string) (value.Value, error) {
	to := schema.Default
	if f.Count {
		to = schema.Int
	} else if P, ok := x.predOf(f.Attr); ok && f.ValVar == "" {
		to = P.Type
	}
	switch to {
	case schema.Default, schema.UID, schema.Password, schema.Geo, schema.BigFloat, schema.Float32Vector:
		return value.Str(text), nil
	}
	v, err := dgraph.ConvertValue(value.Str(text), to)
	if err != nil {
		return value.Value{}, fmt.Errorf("%w: %s(%s, %q): %v", ErrInvalid, f.Name, f.Attr, text, err)
	}
	return v, nil
}

// compareLit compares a stored value with a literal, converting a textual
// literal to the stored value's kind when the kinds differ (a predicate
// without a schema type).
func compareLit(stored, lit value.Value) (int, bool) {
	if c, ok := value.Compare(stored, lit); ok {
		return c, true
	}
	if lit.Kind() != value.String {
		return 0, false
	}
	to, ok := map[value.Kind]schema.Scalar{value.Int: schema.Int, value.Float: schema.Float,
		value.Bool: schema.Bool, value.Datetime: schema.Datetime}[stored.Kind()]
	if !ok {
		return 0, false
	}
	cv, err := dgraph.ConvertValue(lit, to)
	if err != nil {
		return 0, false
	}
	return value.Compare(stored, cv)
}

// elems flattens a list value.
func elems(v value.Value) []value.Value {
	if v.Kind() == value.List {
		return v.List()
	}
	if v.IsNull() {
		return nil
	}
	return []value.Value{v}
}

// langValue picks pred's value in the languages asked for: none means the
// untagged value; "." the untagged one, else any language (the first in
// order); several languages are tried in turn.
func langValue(n *dgraph.Node, pred string, langs []string) (v value.Value, key string, ok bool) {
	if len(langs) == 0 {
		v, ok := n.Values[pred]
		return v, pred, ok
	}
	for _, l := range langs {
		if l == "." {
			if v, ok := n.Values[pred]; ok {
				return v, pred, true
			}
			var keys []string
			for k := range n.Values {
				if strings.HasPrefix(k, pred+"@") {
					keys = append(keys, k)
				}
			}
			if len(keys) > 0 {
				slices.Sort(keys)
				return n.Values[keys[0]], keys[0], true
			}
			continue
		}
		k := dgraph.ValueKey(pred, l)
		if v, ok := n.Values[k]; ok {
			return v, k, true
		}
	}
	return value.Value{}, "", false
}

// count is the number of pred's edges (or values) of a node: count(pred).
func count(n *dgraph.Node, pred string) int64 {
	if es, ok := n.Edges[pred]; ok {
		return int64(len(es))
	}
	if c, ok := n.Counts[pred]; ok {
		return c
	}
	return int64(len(elems(n.Values[pred])))
}

// hasPred reports whether a node has a value (any language) or edge of pred.
func hasPred(n *dgraph.Node, pred string) bool {
	if len(n.Edges[pred]) > 0 {
		return true
	}
	if _, ok := n.Values[pred]; ok {
		return true
	}
	for k := range n.Values {
		if strings.HasPrefix(k, pred+"@") {
			return true
		}
	}
	return false
}

// test evaluates a compiled function on one node.
func (x *run) test(c *compiled, u uint64, n *dgraph.Node) bool {
	f := c.f
	switch f.Name {
	case "uid":
		return c.set[u]
	case "uid_in":
		for _, e := range n.Edges[f.Attr] {
			if c.set[e.UID] {
				return true
			}
		}
		return false
	case "has":
		return hasPred(n, f.Attr)
	case "type":
		for _, t := range elems(n.Values["dgraph.type"]) {
			for _, a := range f.Args {
				if t.Kind() == value.String && t.Str() == a.Value {
					return true
				}
			}
		}
		return false
	case "regexp":
		for _, v := range x.subjectValues(f, u, n) {
			if v.Kind() == value.String && c.re.MatchString(v.Str()) {
				return true
			}
		}
		return false
	case "allofterms", "anyofterms":
		return matchTerms(c, x.subjectValues(f, u, n))
	case "alloftext", "anyoftext":
		vs, lang := x.subjectValuesLang(f, u, n)
		return matchText(c, vs, lang)
	case "match":
		for _, v := range x.subjectValues(f, u, n) {
			if v.Kind() == value.String && matchFuzzy(c, v.Str()) {
				return true
			}
		}
		return false
	}
	return x.compareTest(c, u, n)
}

// compileMatch prepares match(pred, "string", distance).
func compileMatch(c *compiled) error {
	f := c.f
	if len(f.Args) != 2 || f.Args[0].Kind != dql.ArgValue || f.Args[1].Kind != dql.ArgValue {
		return fmt.Errorf("%w: match needs a string and a distance, match(pred, \"text\", 3)", ErrInvalid)
	}
	d, err := strconv.Atoi(strings.TrimSpace(f.Args[1].Value))
	if err != nil || d < 0 {
		return fmt.Errorf("%w: match: distance %q is not a non-negative integer", ErrInvalid, f.Args[1].Value)
	}
	c.fuzzy, c.dist, c.grams = f.Args[0].Value, d, index.TrigramTokens(f.Args[0].Value)
	return nil
}

// matchFuzzy is Dgraph's match on one value: the value shares a trigram
// with the string (the trigram index's candidates) and is within
// Levenshtein distance dist of it (in runes).
func matchFuzzy(c *compiled, s string) bool {
	if s == "" || len(c.grams) == 0 {
		return false
	}
	have := index.TrigramTokens(s)
	shared := slices.ContainsFunc(c.grams, func(g string) bool {
		_, ok := slices.BinarySearch(have, g)
		return ok
	})
	return shared && levenshtein([]rune(s), []rune(c.fuzzy), c.dist) <= c.dist
}

// levenshtein is the edit distance of a and b, or some value above limit
// once every path exceeds limit (a row's minimum only grows).
func levenshtein(a, b []rune, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// queryTerms is the analysis of alloftext/anyoftext's text in language
// lang (cached).
func (c *compiled) queryTerms(lang string) []string {
	ts, ok := c.textTerms[lang]
	if !ok {
		ts = index.FulltextTerms(c.text, lang)
		c.textTerms[lang] = ts
	}
	return ts
}

// matchText is alloftext/anyoftext on the values of one node, analysed
// (like the query text) in the values' language lang.
func matchText(c *compiled, vs []value.Value, lang string) bool {
	want := c.queryTerms(lang)
	if len(want) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, v := range vs {
		if v.Kind() == value.String {
			for _, t := range index.FulltextTerms(v.Str(), lang) {
				have[t] = true
			}
		}
	}
	all := c.f.Name == "alloftext"
	for _, t := range want {
		if have[t] != all {
			return !all
		}
	}
	return all
}

// subjectValuesLang is subjectValues with the language of the values (""
// when untagged or not a predicate's).
func (x *run) subjectValuesLang(f *dql.Func, u uint64, n *dgraph.Node) ([]value.Value, string) {
	if f.Count || f.ValVar != "" {
		return x.subjectValues(f, u, n), ""
	}
	var langs []string
	if f.Lang != "" {
		langs = strings.Split(f.Lang, ":") // p@en:fr: the first present
	}
	v, key, _ := langValue(n, f.Attr, langs)
	lang, _ := strings.CutPrefix(key, f.Attr+"@")
	if lang == key {
		lang = ""
	}
	return elems(v), lang
}

// subjectValues are the values a function tests: the predicate's (in its
// language), a count, or a value variable's.
func (x *run) subjectValues(f *dql.Func, u uint64, n *dgraph.Node) []value.Value {
	switch {
	case f.Count:
		return []value.Value{value.I64(count(n, f.Attr))}
	case f.ValVar != "":
		if v, ok := x.valVars[f.ValVar][u]; ok {
			return elems(v)
		}
		return nil
	}
	var langs []string
	if f.Lang != "" {
		langs = []string{f.Lang}
	}
	v, _, _ := langValue(n, f.Attr, langs)
	return elems(v)
}

func matchTerms(c *compiled, vs []value.Value) bool {
	if len(c.terms) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, v := range vs {
		if v.Kind() == value.String {
			for _, t := range index.TermTokens(v.Str()) {
				have[t] = true
			}
		}
	}
	all := c.f.Name == "allofterms"
	for _, t := range c.terms {
		if have[t] != all {
			return !all
		}
	}
	return all
}

// compareTest evaluates eq, le, lt, ge, gt and between: true when some
// value of the node satisfies it (any of eq's values).
func (x *run) compareTest(c *compiled, u uint64, n *dgraph.Node) bool {
	for _, v := range x.subjectValues(c.f, u, n) {
		if compareOne(c.f.Name, v, c.args) {
			return true
		}
	}
	return false
}

func compareOne(name string, v value.Value, args []value.Value) bool {
	switch name {
	case "eq":
		for _, a := range args {
			if c, ok := compareLit(v, a); ok && c == 0 {
				return true
			}
		}
		return false
	case "between":
		if len(args) != 2 {
			return false
		}
		c1, ok1 := compareLit(v, args[0])
		c2, ok2 := compareLit(v, args[1])
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	}
	if len(args) != 1 {
		return false
	}
	c, ok := compareLit(v, args[0])
	if !ok {
		return false
	}
	switch name {
	case "le":
		return c <= 0
	case "lt":
		return c < 0
	case "ge":
		return c >= 0
	case "gt":
		return c > 0
	}
	return false
}

// needsNodes reports whether evaluating f reads node data (uid() does not).
func needsNodes(f *dql.Filter) bool {
	if f == nil {
		return false
	}
	if f.Op == dql.FilterFunc {
		return f.Func.Name != "uid"
	}
	return slices.ContainsFunc(f.Children, needsNodes)
}

// filter keeps the uids passing f, in their order.
func (x *run) filter(f *dql.Filter, uids []uint64) ([]uint64, error) {
	if f == nil || len(uids) == 0 {
		return uids, nil
	}
	if needsNodes(f) {
		if err := x.fetch(uids); err != nil {
			return nil, err
		}
	}
	out := make([]uint64, 0, len(uids))
	for _, u := range uids {
		ok, err := x.eval(f, u, x.node(u))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// eval evaluates a boolean filter tree on one node.
func (x *run) eval(f *dql.Filter, u uint64, n *dgraph.Node) (bool, error) {
	switch f.Op {
	case dql.FilterFunc:
		c, err := x.compile(f.Func)
		if err != nil {
			return false, err
		}
		return x.test(c, u, n), nil
	case dql.FilterNot:
		ok, err := x.eval(f.Children[0], u, n)
		return !ok, err
	}
	and := f.Op == dql.FilterAnd
	for _, ch := range f.Children {
		ok, err := x.eval(ch, u, n)
		if err != nil {
			return false, err
		}
		if ok != and {
			return ok, nil
		}
	}
	return and, nil
}
