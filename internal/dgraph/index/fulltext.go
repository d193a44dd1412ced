package index

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/hungarian"
	"github.com/kljensen/snowball/norwegian"
	"github.com/kljensen/snowball/russian"
	"github.com/kljensen/snowball/spanish"
	"github.com/kljensen/snowball/swedish"
	"golang.org/x/text/unicode/norm"
)

// analyzer is the language-specific half of the fulltext tokenizer: a stop
// word list and a Snowball stemmer (github.com/kljensen/snowball). Dgraph's
// fulltext index is Bleve's analyzer (Unicode word segmentation, lower
// case, NFKC, stop words, Snowball stemmer of the value's language).
type analyzer struct {
	name   string
	script *unicode.RangeTable // words without a letter of it are left alone
	stop   func(string) bool
	stem   func(string, bool) string
}

// stemWord is the analyzer's stem of a word (stop words are the caller's):
// the word itself when it has no letter of the language's script, which
// spares the stemmers most of the index's work on other scripts.
func (a *analyzer) stemWord(w string) string {
	if !strings.ContainsFunc(w, func(r rune) bool { return unicode.Is(a.script, r) }) {
		return w
	}
	return a.stem(w, true)
}

// analyzers by language tag (the primary subtag, lower-cased). A language
// not listed is analysed without stop words and without stemming.
var analyzers = map[string]*analyzer{
	"en": {"english", unicode.Latin, english.IsStopWord, english.Stem},
	"es": {"spanish", unicode.Latin, spanish.IsStopWord, spanish.Stem},
	"fr": {"french", unicode.Latin, french.IsStopWord, french.Stem},
	"ru": {"russian", unicode.Cyrillic, russian.IsStopWord, russian.Stem},
	"sv": {"swedish", unicode.Latin, swedish.IsStopWord, swedish.Stem},
	"no": norwegianAnalyzer,
	"nb": norwegianAnalyzer,
	"nn": norwegianAnalyzer,
	"hu": {"hungarian", unicode.Latin, hungarian.IsStopWord, hungarian.Stem},
}

var norwegianAnalyzer = &analyzer{"norwegian", unicode.Latin, norwegian.IsStopWord, norwegian.Stem}

// indexAnalyzers are the distinct analyzers, in a fixed order, whose stems
// the fulltext index holds for every word (see fulltextIndexTokens).
var indexAnalyzers = []*analyzer{analyzers["en"], analyzers["es"], analyzers["fr"],
	analyzers["ru"], analyzers["sv"], analyzers["no"], analyzers["hu"]}

// FulltextLanguages lists the language tags with a stemmer and stop words;
// an untagged value is English.
func FulltextLanguages() []string {
	out := make([]string, 0, len(analyzers))
	for l := range analyzers {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// analyzerFor returns the analyzer of a language tag ("" is English; "en-GB"
// is "en"), nil for a language without stemmer.
func analyzerFor(lang string) *analyzer {
	if lang == "" {
		return analyzers["en"]
	}
	base, _, _ := strings.Cut(strings.ToLower(lang), "-")
	return analyzers[base]
}

// FulltextTerms analyses s as a value (or a query) in language lang: its
// words, NFKC-normalised and lower-cased, less the language's stop words,
// stemmed by the language's stemmer. Sorted and distinct. This is what
// alloftext and anyoftext compare.
func FulltextTerms(s, lang string) []string {
	a := analyzerFor(lang)
	var out []string
	for _, w := range FulltextWords(s) {
		if a == nil {
			out = append(out, w)
			continue
		}
		if a.stop(w) {
			continue
		}
		out = append(out, a.stemWord(w))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fulltextIndexTokens are the tokens a value's fulltext index entries
// carry: each word's stem in every supported language where it is not a
// stop word, and the word itself (a language without stemmer). A value's
// tokens cannot depend on its language tag here, because the index
// maintenance hands tokenizers the value alone; so the index holds a
// superset of FulltextTerms(s, lang) for every lang, and lookups check
// their candidates with FulltextTerms in the value's language.
func fulltextIndexTokens(s string) []string {
	var out []string
	for _, w := range FulltextWords(s) {
		out = append(out, wordIndexTokens(w)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stemCacheMax bounds the memo of words' index tokens (a vocabulary
// repeats: the stemmers cost microseconds a word); full, it is emptied.
const stemCacheMax = 1 << 15

var stemCache = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// wordIndexTokens are one word's index tokens: itself and its stem by each
// analyzer for which it is not a stop word. Memoised (the result depends
// on the word alone).
func wordIndexTokens(w string) []string {
	stemCache.Lock()
	ts, ok := stemCache.m[w]
	stemCache.Unlock()
	if ok {
		return ts
	}
	ts = []string{w}
	for _, a := range indexAnalyzers {
		if !a.stop(w) {
			ts = append(ts, a.stemWord(w))
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	stemCache.Lock()
	if len(stemCache.m) >= stemCacheMax {
		clear(stemCache.m)
	}
	stemCache.m[w] = ts
	stemCache.Unlock()
	return ts
}

// FulltextWords segments s into words, NFKC-normalised and lower-cased, in
// order (repeats kept): runs of letters, digits and marks, joined across a
// single apostrophe between letters ("don't") and a single '.' or ','
// between digits ("3.14"), as Unicode word segmentation (UAX #29) does;
// Han, Hiragana and Katakana characters are words on their own, as in
// Bleve's unicode tokenizer.
func FulltextWords(s string) []string {
	rs := []rune(strings.ToLower(norm.NFKC.String(s)))
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush(i)
			out = append(out, string(r))
		case wordRune(r):
			if start < 0 {
				start = i
			}
		case start >= 0 && i+1 < len(rs) && joins(rs[i-1], r, rs[i+1]):
			// inside a word: keep going
		default:
			flush(i)
		}
	}
	flush(len(rs))
	return out
}

func wordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) &&
		!unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// joins reports whether separator r between prev and next stays inside a
// word (UAX #29 MidLetter and MidNum, the common cases).
func joins(prev, r, next rune) bool {
	switch r {
	case '\'', '\u2019':
		return unicode.IsLetter(prev) && wordRune(prev) && unicode.IsLetter(next) && wordRune(next)
	case '.', ',':
		return unicode.IsDigit(prev) && unicode.IsDigit(next)
	}
	return false
}
