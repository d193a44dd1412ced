// Package index is the Dgraph wing's tokenizers: how a value of an indexed
// predicate becomes the tokens package dgraph stores in its index
// vertices, and how a token is named in a handle (TokenName). Get returns
// the Tokenizer of a schema's @index name; its Tokens, Span, Sortable and
// Lossy are what index maintenance and the lookups (dgraph.Graph's Eq,
// Range, Lookup) need. The DQL executor uses the text functions directly:
// TermTokens for allofterms/anyofterms, FulltextTerms for
// alloftext/anyoftext, RegexpTrigrams and TrigramTokens for regexp and
// match.
//
// Maintained tokenizers: exact, hash, term (lower-cased letter/digit runs;
// Han, Hiragana and Katakana characters one by one), int, float, bool, year,
// month, day, hour, fulltext and trigram. Schemas may name the others
// (ngram, geo, bigfloat, hnsw); they are not maintained and lookups on them
// answer dgraph.ErrNoIndex.
//
// fulltext is Dgraph's (Bleve's) analyzer: words by Unicode segmentation
// (FulltextWords: letter/digit/mark runs joined across an apostrophe
// between letters or a '.'/',' between digits; Han, Hiragana, Katakana one
// by one), NFKC (golang.org/x/text), lower case, the language's Snowball
// stop words, the language's Snowball stemmer (github.com/kljensen/snowball:
// en, es, fr, ru, sv, no/nb/nn, hu; untagged values are English; other
// languages keep their words unstemmed, with no stop words):
// FulltextTerms(s, lang). Index maintenance hands a tokenizer the value
// alone, not its language tag, so a value's fulltext tokens are the union
// of its words' stems in every supported language plus the words
// themselves (fulltextIndexTokens); the index is lossy and readers check
// candidates with FulltextTerms in the value's language. A stemmer only
// sees words with a letter of its script (Latin; Cyrillic for Russian),
// and a bounded, mutex-guarded memo (stemCacheMax words) keeps each word's
// index tokens: the Snowball stemmers cost microseconds a word.
//
// trigram holds every substring of three runes of the value as stored
// (TrigramTokens; no case folding). RegexpTrigrams turns a regexp into a
// boolean trigram query every match satisfies (exact sets of small
// literals, classes, case variants and alternations; prefixes and suffixes
// across concatenations), the candidates regexp reads; TrigramAll means the
// regexp gives no trigram. The index is lossy: readers check candidates
// with the regexp, or match's edit distance.
//
// Changing what a tokenizer answers for a stored value changes the stored
// layout: existing indexes then need a rebuild (an alter dropping and
// adding the index).
//
// # Concurrency
//
// Everything here is a pure function of its arguments or read-only after
// init, except the fulltext stem memo, which a mutex guards: safe for
// concurrent use.
package index
