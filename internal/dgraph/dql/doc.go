// Package dql is the front end of DQL, Dgraph's query language: a lexer, a
// parser to an AST, and checks. It executes nothing; the executor walks the
// tree this package returns.
//
// # Entry points
//
// Parse, ParseWithVars and ParseWith read a query; ParseMutation reads the
// RDF mutation text Dgraph's /mutate and RunDQL take, a { set {...}
// delete {...} } block or an upsert block; ParseUpsert reads upsert blocks
// only; ParseCond reads the "@if(...)" text of a mutation's condition;
// DecodeVars reads a JSON variables object. Query.Validate and
// Upsert.Validate are a separate, optional step against a *schema.Schema.
// Query.String and Upsert.String render canonical text.
//
// # Grammar covered
//
//	query    := { "{" block* "}" | "query" [name] ["(" $v: type[!] [= default], ... ")"] "{" block* "}"
//	            | "schema" ["(" (pred|type) ":" name-or-[names] ")"] "{" field-name* "}"
//	            | "fragment" name "{" field* "}" }
//	block    := [v as] name "(" [func: f, orderasc|orderdesc: pred[@lang] | val(v), first: n, offset: n,
//	            after: uid; for blocks named shortest: from, to, numpaths, depth, minweight, maxweight,
//	            maxfrontiersize] ")" directive* ["{" field* "}"]
//	field    := [alias ":"] [v as] ( pred[@en:fr:.|@.|@*] ["(" args ")"] directive* ["{" field* "}"]
//	            | count(uid) | count(pred[@lang] [(args)] [@filter(...)]) | val(v)
//	            | min|max|sum|avg(val(v))  (or of a predicate under @groupby) | math(expr)
//	            | expand(_all_ | Type, ... | val(v)) [@filter(type(...))] ["{" field* "}"]
//	            | checkpwd(pred, "password") | ...fragment )
//	directive:= @filter(f) | @cascade[(pred, ...)] | @normalize | @groupby([alias:] pred[@lang], ...)
//	            | @facets | @facets() | @facets([orderasc:|orderdesc:|alias:] [v as] key, ...) | @facets(f)
//	            root only: @recurse[(depth: n, loop: bool)] | @ignorereflex
//	f        := f OR f | f AND f | NOT f | "(" f ")" | function      (NOT > AND > OR, any case)
//
// Functions: uid(0x1, 31, v, $v), eq (several values, [lists], val(v),
// count(pred), val(v) as attribute), le, lt, ge, gt, between, has, type,
// allofterms, anyofterms, alloftext, anyoftext, ngram, regexp(pred,
// /re/flags), match(pred, s, distance), uid_in(pred, 0x1 | [uids] |
// uid(v) | $v) (not at the root), near, within, contains, intersects (geo
// coordinates), similar_to(pred, k, vector); len(v) in upsert conditions
// only. Function names, directive names, AND/OR/NOT and "as" are
// case-insensitive. Names are words ([A-Za-z0-9_~.]+, joined by dashes with
// no space around: Jean-Pierre) or <iri>. Strings use Go escapes.
//
// Math (math(...)) uses Dgraph's precedence table, kept for compatible
// results: * and / bind tightest, then dot, %, -, +, then < > <= >= == !=
// (each its own level, all left associative), with unary minus above all.
// So a % b * c is a % (b * c). Functions: floor ceil ln exp sqrt since
// (one argument), pow logbase min max (two), cond (three). Leaves are value
// variables, numbers (a word starting with a digit: an int64, else a
// finite float; -5 is a constant) and $variables of type int or float.
//
// GraphQL variables are declared in the named query's header, typed int,
// float, bool, string or float32vector (type! is required and takes no
// default), and substituted while parsing wherever a literal may stand:
// function arguments and lists, uid($v) and uid_in (a uid or "[0x1,
// 0x2]"), regexp($v) ("/re/i"), first/offset/after, shortest's arguments,
// @recurse, math, facet filters, checkpwd. As in Dgraph, an empty value is
// absent, and a value for a variable the header does not declare is an
// error. The AST keeps the values, not the variables.
//
// # Checks
//
// Parsing checks what Dgraph checks before running a query, with errors of
// the form "dql: line 3 col 14: expected ...": syntax; function arity and
// argument kinds (regexp flags and syntax, match distance, geo literals);
// pagination values (integers, offset ≥ 0, uids); repeated arguments and
// directives; field rules (math needs a variable or alias, val() takes no
// variable, expand takes no alias, @groupby holds only aggregates and
// counts, blocks without func only aggregates and math); aliases clashing
// at one level and duplicate block names; and query variables: each
// defined once, every use defined, every definition used (an upsert's
// mutations and conditions count, and Options.Uses names outside uses), and
// no cycle of blocks needing each other's variables (a block may use its
// own). Validate adds the checks that need the schema (see
// Query.Validate).
//
// # Parsed but not executable here
//
// Everything above is syntax only: the package does not evaluate
// functions, tokenize terms, compile geo shapes, check that a regexp can
// use a trigram index, nor order blocks for execution (Block.Vars gives
// each block's definitions and uses; cycles are already rejected). The
// schema { } block, geo functions (near, within, contains, intersects),
// similar_to, ngram and checkpwd parse into the tree whether or not Weft's
// engine implements them.
//
// # Differences from Dgraph
//
// Stricter where Dgraph silently misbehaves: a directive or a set/delete
// op given twice is an error (Dgraph keeps the last); words are joined by
// dashes only when nothing separates them (Dgraph also joins "a - b");
// math treats only words starting with a digit as numbers (Dgraph reads a
// variable named inf as a number); an upsert's mutation N-Quads must be
// one statement per line; uid(v) in a plain mutation is an error at parse
// time. Not supported: fragments inside upsert blocks, $variables as a
// function's attribute, custom tokenizer functions (anyof/allof), the
// 2016-era syntax (me(_uid_: ...)) of Dgraph's first releases.
//
// # Invariants and limits
//
// Every successful parse renders (String) to text that parses back to an
// equal tree (Equal ignores positions) and renders to itself; builds with
// -tags invariants check it after every parse. Text is at most TextLenMax
// bytes and valid UTF-8; nesting is at most DepthMax; fragment expansion
// creates at most FragmentFieldsMax fields. No input panics (FuzzParse),
// and parsing time grows linearly with the text. Inside set and delete
// bodies only quoted literals may hold braces, as in Dgraph, so a quote in
// a comment there needs its closing quote.
//
// Concurrency: the functions are safe for concurrent use; a returned tree
// is a plain value, safe to share once no one modifies it.
package dql
