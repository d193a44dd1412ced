package dql

import "github.com/weft-db/weft/internal/rdf"

// Query is a parsed DQL query: blocks answering under their names, or one
// schema introspection block. GraphQL variables are already substituted and
// fragments expanded, so the tree holds only literal values.
type Query struct {
	Name   string       // the operation name of "query name(...) {"; "" when anonymous
	Blocks []*Block     // in text order
	Schema *SchemaQuery // schema {...}; then Blocks is empty
}

// SchemaQuery is schema {...} or schema(pred: [...]) {...} or
// schema(type: [...]) {...}.
type SchemaQuery struct {
	Pos    Pos
	Preds  []string // schema(pred: ...)
	Types  []string // schema(type: ...)
	Fields []string // the requested fields: type, index, reverse, tokenizer, list, count, upsert, lang, ...
}

// Block is a query block: name(func: ...) @directives { fields }.
type Block struct {
	Pos  Pos
	Name string // the result key; "var" blocks are not returned, "shortest" blocks find paths
	Var  string // "v as name(...)": a uid variable holding the block's result
	// Func is the root function (func: ...). It is nil for shortest blocks
	// and for aggregation blocks name() whose fields only aggregate or
	// compute over variables.
	Func         *Func
	Shortest     *Shortest // only on blocks named shortest
	IgnoreReflex bool      // @ignorereflex
	Recurse      *Recurse  // @recurse
	Selection
}

// Selection is what root blocks and predicate fields share: pagination,
// ordering, directives and sub-fields.
type Selection struct {
	Page      Page
	Order     []Order // in priority order; at most one orders by a value variable
	Filter    *Filter // @filter(...)
	Cascade   *Cascade
	Normalize bool        // @normalize
	GroupBy   []GroupAttr // @groupby(...); nil without it
	Fields    []*Field
}

// Page holds first, offset and after; nil when not given. First may be
// negative (the last -First results).
type Page struct {
	First  *int64
	Offset *int64
	After  *uint64
}

// Order is one orderasc or orderdesc argument: a predicate (with at most
// one language) or a value variable val(v).
type Order struct {
	Pos   Pos
	Attr  string
	Langs []string
	Var   string // set when ordering by val(Var); then Attr is ""
	Desc  bool
}

// Cascade is @cascade (Fields empty: every field is required) or
// @cascade(a, b).
type Cascade struct {
	Fields []string
}

// Recurse is @recurse(depth: n, loop: bool); Depth 0 means not given.
type Recurse struct {
	Depth uint64
	Loop  bool
}

// GroupAttr is one predicate of @groupby(alias: pred@lang).
type GroupAttr struct {
	Attr  string
	Alias string
	Langs []string
}

// Shortest holds the arguments of a shortest block. Nil pointers are
// arguments not given.
type Shortest struct {
	From, To        UIDRef
	NumPaths        *int64
	Depth           *int64
	MinWeight       *float64
	MaxWeight       *float64
	MaxFrontierSize *int64
}

// UIDRef is a node given by uid (0x1, uid(0x1)) or by a uid variable
// (uid(v)): exactly one of UID and Var is set.
type UIDRef struct {
	UID uint64
	Var string
}

// FieldKind says what a Field is.
type FieldKind uint8

const (
	// FieldPred is a predicate: name, ~name (reverse), <iri>, uid,
	// dgraph.type, with optional languages, arguments, directives and
	// sub-fields.
	FieldPred FieldKind = iota
	// FieldCount is count(pred), with optional languages, filter and
	// arguments inside the parentheses.
	FieldCount
	// FieldCountUID is count(uid): the number of nodes at this level.
	FieldCountUID
	// FieldVal is val(v): the value of a value variable for each node.
	FieldVal
	// FieldAgg is min, max, sum or avg of val(v) (ValVar), or of a
	// predicate (Attr) inside a @groupby block.
	FieldAgg
	// FieldMath is math(expr).
	FieldMath
	// FieldExpand is expand(_all_), expand(Type, ...) or expand(val(v)).
	FieldExpand
	// FieldCheckpwd is checkpwd(pred, "password").
	FieldCheckpwd
)

var fieldKindNames = [...]string{"pred", "count", "count(uid)", "val", "aggregate", "math", "expand", "checkpwd"}

func (k FieldKind) String() string {
	if int(k) < len(fieldKindNames) {
		return fieldKindNames[k]
	}
	return "FieldKind(?)"
}

// Field is one entry inside a block's or a predicate's braces.
type Field struct {
	Pos      Pos
	Kind     FieldKind
	Alias    string   // "alias: ..."
	Var      string   // "v as ...": a variable defined by this field
	Attr     string   // FieldPred, FieldCount, FieldCheckpwd; FieldAgg under @groupby
	Langs    []string // name@en:fr, name@., name@*
	Agg      string   // FieldAgg: min, max, sum or avg
	ValVar   string   // FieldVal, FieldAgg of val(v), FieldExpand of val(v)
	Math     *Math    // FieldMath
	Expand   []string // FieldExpand: "_all_" or type names; empty with ValVar
	Password string   // FieldCheckpwd
	// Facets is @facets, @facets() or @facets(keys...); nil without it.
	Facets *Facets
	// FacetsFilter is @facets(filter), which keeps only edges whose facets
	// pass it.
	FacetsFilter *Filter
	Selection
}

// Facets is @facets (All), @facets() (nothing) or @facets(a, alias: b,
// v as c, orderdesc: d).
type Facets struct {
	All   bool
	Keys  []FacetKey // in text order, each key once
	Order []FacetOrder
}

// FacetKey is one requested facet.
type FacetKey struct {
	Key   string
	Alias string
	Var   string // a value variable holding the facet per node
}

// FacetOrder orders edges by a facet.
type FacetOrder struct {
	Key  string
	Desc bool
}

// FilterOp says what a Filter node is.
type FilterOp uint8

const (
	FilterFunc FilterOp = iota // a function
	FilterAnd                  // all Children (two or more)
	FilterOr                   // any of Children (two or more)
	FilterNot                  // not Children[0]
)

// Filter is a boolean tree of functions: @filter, @facets(filter) and
// mutation conditions @if. AND and OR chains are flattened.
type Filter struct {
	Op       FilterOp
	Func     *Func // FilterFunc
	Children []*Filter
}

// ArgKind says what a function argument is.
type ArgKind uint8

const (
	ArgValue  ArgKind = iota // a literal: "text", 42, 2006-01-02, true (Value holds the text)
	ArgValVar                // val(v) (Value holds v)
	ArgRegex                 // /pattern/flags (Value is the pattern, Flags the flags)
	ArgGeo                   // a geo coordinate list or a vector, [[1,2],[3,4]] (Value holds it)
)

// Arg is one function argument after the attribute. Dgraph reads every
// literal as text and converts it by the predicate's type, so quoted and
// bare literals are the same ArgValue.
type Arg struct {
	Kind  ArgKind
	Value string
	Flags string
}

// Func is a function of a root (func: ...), of a filter or of a condition.
type Func struct {
	Pos  Pos
	Name string // lower case: eq, le, lt, ge, gt, between, has, type, uid, uid_in, allofterms, ...
	// Attr is the predicate (a facet key in facet filters); "" for uid and
	// type, and when the attribute is a variable (ValVar, LenVar).
	Attr   string
	Lang   string // eq(name@en, ...): at most one language
	Count  bool   // eq(count(pred), n)
	ValVar string // eq(val(v), ...): compare a value variable
	LenVar string // eq(len(v), n): the size of a uid variable (conditions only)
	Args   []Arg
	// UIDs and Vars are the node set of uid(...) and of uid_in's second
	// argument: literal uids and uid variables.
	UIDs []uint64
	Vars []string
}

// Math is a node of a math(...) expression tree: a leaf (Var or Const)
// or an operation (Op with Args).
type Math struct {
	Pos Pos
	// Op is a binary operator (+ - * / % dot < > <= >= == !=), "neg" for
	// unary minus, or a function: floor ceil ln exp sqrt since (one
	// argument), pow logbase min max (two), cond (three). "" for leaves.
	Op    string
	Var   string // a value variable leaf
	Const *Const // a constant leaf
	Args  []*Math
}

// Const is a numeric constant of a math expression.
type Const struct {
	IsFloat bool
	Int     int64
	Float   float64
}

// Upsert is a parsed mutation request: a { set {...} delete {...} } block
// (Query nil, one mutation) or an upsert { query {...} mutation ... } block.
type Upsert struct {
	Query     *Query
	Mutations []*Mutation
}

// Mutation is one mutation of a request: N-Quads to set and to delete,
// applied when Cond (an @if condition; nil means always) holds. Quads may
// refer to the query's variables as uid(v) and val(v).
type Mutation struct {
	Pos    Pos
	Cond   *Filter
	Set    []rdf.NQuad
	Delete []rdf.NQuad
}
