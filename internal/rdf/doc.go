// Package rdf parses N-Quads the way Dgraph accepts them in mutations and
// loader files: one statement per line,
//
//	subject predicate object [label] [(facets)] .
//
// where a subject is <iri>, _:blank, uid(var) or a uid (<0x1f>, <31>, or a
// bare 0x1f); a predicate is <iri> (<name@en> carries a language, as in
// Dgraph) or the delete wildcard *; an object is <iri>, _:blank, uid(var),
// val(var), a literal "..." with an optional @lang or ^^<datatype>, or the
// delete wildcard *. A label (<iri> or _:blank) is kept: Dgraph reads a
// numeric one as the namespace (NQuad.Namespace). Facets are Dgraph's edge
// attributes, (key=value, ...), typed the way Dgraph types them (FacetValue).
// A # starts a comment at the beginning of a line or after the final '.'.
//
// The package is a pure parser: it knows nothing of schemas, uid assignment
// or storage. Literals with a datatype become value.Value at parse time; an
// untyped literal stays a string with TypeDefault, for the engine to convert
// by the predicate's schema with ParseValue. Subject and object IRIs that are
// numbers (what strconv.ParseUint(s, 0, 64) accepts, as in Dgraph) are Kind
// UID, and <_:x> is the blank node _:x, again as in Dgraph.
//
// Errors carry the line and the column (in characters, from 1), as *Error:
// "rdf: line 12 col 7: ...". They wrap ErrSyntax (malformed text), ErrValue
// (a literal its datatype rejects) or ErrRange (a value value.Value cannot
// hold: integers beyond int64, datetimes outside 1677..2262, since value
// keeps nanoseconds in an int64). A Reader reports a bad line and goes on
// with the next one.
//
// Invariants: every NQuad returned without error renders (NQuad.String) to a
// line that parses back to an equal NQuad; facets are sorted by key with
// unique keys; every string in a result is valid UTF-8. Builds with
// -tags invariants check the round trip on every parsed line.
//
// Concurrency: ParseLine, Parse, ParseValue and FacetValue are safe for
// concurrent use; a Reader is not (one goroutine per Reader). Results are
// plain values that may be shared once returned.
package rdf
