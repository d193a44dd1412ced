// Package exec executes DQL, Dgraph's query language, over the Dgraph
// model of package dgraph: query blocks answer Dgraph's JSON ("data"
// object), and upsert blocks turn into the mutations dgraph.Graph.Mutate
// applies. It parses with package dql and reads through a dgraph.Reader.
//
// # Reads and transactions
//
// Every vertex a query reads goes through one dgraph.Reader, which reads
// at one snapshot: a query sees one consistent state.
// dgraph.SnapshotReader reads an engine at a snapshot and, when asked,
// records each read's txn.Read (vertex and version) so that a
// transaction's queries (an upsert's query, the reads of an interactive
// transaction) are validated at commit: the commit fails if anything the
// query saw has changed, which is what makes Weft's Dgraph face strictly
// serializable where Dgraph offers snapshot isolation. Index lookups (eq, ranges, terms, has, type) go through the
// same reader (dgraph.Reads, a view of the Graph over a reader), so index
// vertices are in the read set too and two upserts of one key conflict.
//
// # Execution model
//
// Blocks run in an order where each follows the blocks defining the
// variables it uses (dql rejects cycles); the answer lists them in text
// order, var blocks left out. A block runs level by level:
//
//  1. the root function gives a sorted uid list, from the indexes
//     (uid, eq, type, le/lt/ge/gt/between, has, allofterms/anyofterms,
//     alloftext/anyoftext from fulltext, regexp and match from trigram,
//     their candidates then tested); functions no index serves
//     (eq(count(p), n), eq(val(v), x), regexp without a trigram index)
//     start from has(p) or the variable's nodes and test each node;
//  2. @filter, then orderasc/orderdesc, after, offset and first;
//  3. the level's nodes are read as ONE batch (fetch): with vertex
//     placement a bounded pool of Config.ReadsParallelMax goroutines
//     reads whole vertices (values, facets, edges, counts) through the
//     reader, each node once per query; with predicate placement
//     (placed.go) each predicate the level's fields name is one batched
//     read of that predicate's vertices of all the level's nodes — one
//     engine request per (predicate, shard) — and what needs whole nodes
//     (expand, @recurse, filters) reads the node vertices' lists of
//     predicates first;
//  4. every field is computed for all nodes of the level at once; a
//     uid-valued field gathers the children of all parents, filters them
//     once, orders and paginates them per parent, and its sub-selection is
//     the next level, read as the next batch.
//
// So a query's reads grow with its levels, not its results: one batch per
// level (per uid-valued field). fetch is the seam between the placements:
// nothing above it changes. dgraph.SnapshotReader.Calls counts engine
// requests (a GetVertex is one, a batched read one per shard it asks):
// about one per node a level reads with vertex placement, one per
// predicate and shard per level with predicate placement. With predicate
// placement a query records only the predicates it read, so a write to
// another predicate of a node it read does not conflict with it.
//
// A node's object is built once per level and shared by all its parents
// (edge facets are added per parent on a copy). Objects left empty are
// omitted, as Dgraph does; a block and a [uid] or reverse edge are JSON
// lists, a predicate of type uid (not a list) is one object, as Dgraph ≥
// 1.1 prints it; a uid predicate asked for without braces prints nothing;
// a list predicate is an array; datetimes are RFC 3339 strings; floats
// print in their shortest form (Dgraph's older releases printed six
// decimals).
//
// # Supported
//
// Root functions uid (literals, uid and value variables), eq, le, lt, ge,
// gt, between, has (also has(~p)), type, allofterms, anyofterms,
// alloftext, anyoftext, regexp, match, eq(count(p), n), comparisons of
// val(v); the same in @filter with AND, OR, NOT, plus uid_in; comparisons
// against val(v) (each of its values); GraphQL variables (dql substitutes
// them).
//
// Text search, as Dgraph: alloftext/anyoftext(p, "text") need a fulltext
// index (at the root and in filters; else dgraph.ErrNoIndex with Dgraph's
// "Attribute p is not indexed with type fulltext") and compare the stems
// of the text and of the value, both analysed in the value's language
// (p@fr: French; untagged: English; see index.FulltextTerms); text of
// stop words only matches nothing. regexp(p, /re/flags) at the root with
// a trigram index reads the candidates of the regexp's trigram query and
// tests them; a regexp giving no trigram is refused there with Dgraph's
// "regular expression is too wide-ranging and can't be executed
// efficiently" (ErrInvalid); in filters any regexp works. match(p, "s", d)
// needs a trigram index: a value matches when it shares a trigram with s
// (the candidates Dgraph's index lookup gives) and is within Levenshtein
// distance d of s, in runes. A function on p@. (the untagged value, else
// any language's) scans has(p) instead of reading the index.
//
// Fields: nested and reverse (~p) predicates, aliases, uid, languages
// (p@en, p@en:fr, p@., p@*); first (negative: the last), offset, after,
// several orderasc/orderdesc by predicate or val(v), at every level (a
// missing value sorts last for the first key, as the greatest for later
// ones, as Dgraph does); count(p) (with a filter), count(uid); checkpwd.
//
// Variables: uid variables (blocks, fields, uid; they hold what @cascade
// kept), value variables (values, counts, facets, math, aggregates), val(v)
// (summed along paths when v is defined below, as Dgraph propagates
// values), min/max/sum/avg of val(v) over a whole variable (blocks without
// func; the sum of nothing is 0) or below each node, math() with Dgraph's
// operators and functions (arithmetic in floats, as Dgraph).
//
// Directives: @cascade (all or listed fields; the all-fields form applies
// to every level below), @normalize, @facets (all, listed, aliased, as
// variables, ordered, and @facets(filter)), @recurse(depth, loop) (without
// loop an edge is walked once, as in Dgraph: a node reached again by
// another edge shows again), @groupby at the root and on edges (counts and
// aggregates per group; groups by size, then value; variables keyed by a
// uid group), @ignorereflex (children that are their own ancestors on the
// answer's paths are dropped, after the answer is built); expand(_all_)
// from dgraph.type and the schema's types, expand(T, ...).
//
// Also: shortest paths (numpaths k-shortest loopless paths, weights from a
// facet, depth, minweight, maxweight); schema {} queries; upsert blocks
// with @if conditions on len(v), uid(v) and val(v) in set and delete quads
// (from RDF or from JSON, which dgraph.ParseJSON turns into the same
// quads).
//
// # Not supported (a clear error wrapping ErrUnsupported)
//
// ngram (no ngram index is maintained), geo functions, similar_to,
// expand(val(v)); the RDF response format is the endpoints' business and
// not produced here.
//
// # Costs
//
// regexp works without a trigram index (a has-set scan at the root, where
// Dgraph refuses it), and term and text functions in filters test the
// nodes' values rather than the index. At the root, alloftext reads one
// token vertex per stem (16 buckets each) and anyoftext the same, then
// tests each candidate's value; a regexp reads its query's trigrams; match
// reads every trigram of its string, so a long string reads many.
// has(~p) at the root reads every node having p (reverse predicates keep
// no has-set). Ordering reads every candidate of a level (no index-ordered
// scan), so orderasc with first on a large root set costs the whole set.
// Shortest paths read one node at a time (best-first search). A level
// asking only uid and count(uid) reads nothing.
//
// # Limits
//
// Config bounds a query: the nodes it reads (NodesMax), the edges read with
// one node (EdgesMax: more fails rather than answer from a truncated list),
// @recurse and path depth, paths per shortest block; and the reads in
// flight (ReadsParallelMax). The context cancels a query between batches.
//
// # Concurrency
//
// An Executor is safe for concurrent use; each query has its own state,
// and only its batch reads run concurrently (dgraph.ReadVertices through
// the query's Reader, which must then be safe for concurrent use, as a
// dgraph.SnapshotReader is).
package exec
