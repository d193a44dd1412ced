// Package schema parses and alters DQL schemas, Dgraph's schema language:
//
//	name: string @index(exact, term) @lang @upsert .
//	friend: [uid] @reverse @count .
//	embedding: float32vector @index(hnsw(metric: "cosine")) .
//	type Person {
//		name
//		friend
//		<~friend>
//	}
//
// Types: default, int, float, bigfloat, string, bool, datetime (any case,
// so dateTime), geo, password, uid, float32vector, and lists [T] (not of
// password, bool or float32vector). Tokenizers: string exact, hash, term,
// fulltext, trigram, ngram; int; float; bigfloat; bool; geo; datetime year,
// month, day, hour; float32vector hnsw(options). Directives: @index, @reverse,
// @count, @lang, @upsert, @unique, @noconflict.
//
// Parse checks each definition as Dgraph does, with line:col errors
// ("schema: line 3 col 21: ..."): a known type; @index with at least one
// tokenizer, each for the predicate's type, none twice, at most one sortable
// (exact, int, float, bigfloat, year, month, day, hour); no index on uid,
// default or password; @reverse only on uid; @lang only on string, not a
// list; @upsert only with an index; @unique only with an exact, hash or int
// index (and it implies @upsert); no '@' in names; uid is reserved; no
// predicate or type defined twice. Apply checks what needs the current
// schema and computes a Diff: the indexes, reverse edges and count indexes
// to build and drop, and whether values must be converted or the predicate
// must be empty (see PredicateChange).
//
// Invariants: predicates' indexes are sorted by tokenizer name and satisfy
// the rules above; String renders a canonical text (predicates then types,
// sorted by name) that Parse reads back to an equal Schema. Builds with
// -tags invariants check them after every Parse and alter.
//
// Concurrency: a *Schema is immutable once returned (Apply and the Drop
// methods return new ones; accessors return copies), so it is safe to share
// between goroutines. Parse is safe for concurrent use.
//
// Not supported: the [0x1] namespace prefix of exported schemas (Weft keeps
// namespaces out of schema text) and custom tokenizer plugins.
package schema
