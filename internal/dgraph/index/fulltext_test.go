package index

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// porter2 pairs, typed in from the Snowball English (Porter2) definition
// and its sample vocabulary: each step (0: apostrophes, 1a: plurals, 1b:
// -ed/-ing with the at/bl/iz and double-consonant rules and short words,
// 1c: y→i, 2-4: suffix classes in R1/R2, 5: e and ll) and the exceptional
// forms.
var porter2 = [][2]string{
	// step 0 and 1a
	{"dog's", "dog"}, {"dogs'", "dog"}, {"caresses", "caress"}, {"ponies", "poni"},
	{"ties", "tie"}, {"cries", "cri"}, {"gas", "gas"}, {"gaps", "gap"}, {"kiwis", "kiwi"},
	{"cats", "cat"}, {"knacks", "knack"}, {"knots", "knot"}, {"kneels", "kneel"}, {"knees", "knee"},
	// step 1b
	{"agreed", "agre"}, {"feed", "feed"}, {"plastered", "plaster"}, {"bled", "bled"},
	{"motoring", "motor"}, {"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"},
	{"sized", "size"}, {"hopping", "hop"}, {"tanned", "tan"}, {"falling", "fall"},
	{"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"}, {"filing", "file"},
	{"kneaded", "knead"}, {"kneading", "knead"}, {"kneeled", "kneel"}, {"kneeling", "kneel"},
	{"knitted", "knit"}, {"knitting", "knit"}, {"knocked", "knock"}, {"knocking", "knock"},
	{"running", "run"}, {"consigned", "consign"}, {"consigning", "consign"},
	// step 1c
	{"happy", "happi"}, {"sky", "sky"}, {"cry", "cri"}, {"by", "by"}, {"say", "say"},
	// steps 2 to 4
	{"consignment", "consign"}, {"consistency", "consist"}, {"consistent", "consist"},
	{"consistently", "consist"}, {"consolation", "consol"}, {"consolations", "consol"},
	{"consolatory", "consolatori"}, {"consolidate", "consolid"}, {"consolidated", "consolid"},
	{"consolidating", "consolid"}, {"consolingly", "consol"}, {"consonant", "conson"},
	{"conspicuous", "conspicu"}, {"conspicuously", "conspicu"}, {"conspiracy", "conspiraci"},
	{"conspirator", "conspir"}, {"conspirators", "conspir"}, {"constable", "constabl"},
	{"constables", "constabl"}, {"constance", "constanc"}, {"constancy", "constanc"},
	{"constant", "constant"}, {"knackeries", "knackeri"}, {"knightly", "knight"},
	{"generously", "generous"}, {"happiness", "happi"},
	// step 5
	{"console", "consol"}, {"consoled", "consol"}, {"consoles", "consol"}, {"consoling", "consol"},
	{"conspire", "conspir"}, {"conspired", "conspir"}, {"conspiring", "conspir"}, {"knave", "knave"},
	{"knaves", "knave"}, {"knife", "knife"}, {"knell", "knell"},
	// unchanged
	{"consign", "consign"}, {"consist", "consist"}, {"consisted", "consist"}, {"consisting", "consist"},
	{"consists", "consist"}, {"consort", "consort"}, {"consorted", "consort"}, {"consorting", "consort"},
	{"knack", "knack"}, {"knag", "knag"}, {"knavish", "knavish"}, {"knee", "knee"}, {"kneel", "kneel"},
	{"knelt", "knelt"}, {"knew", "knew"}, {"knick", "knick"}, {"knight", "knight"}, {"knights", "knight"},
	{"knit", "knit"}, {"knits", "knit"}, {"knob", "knob"}, {"knobs", "knob"}, {"knock", "knock"},
	{"knocker", "knocker"}, {"knockers", "knocker"}, {"knocks", "knock"}, {"knopp", "knopp"}, {"knot", "knot"},
	// exceptional forms
	{"skis", "ski"}, {"skies", "sky"}, {"dying", "die"}, {"lying", "lie"}, {"tying", "tie"},
	{"idly", "idl"}, {"gently", "gentl"}, {"ugly", "ugli"}, {"early", "earli"}, {"only", "onli"},
	{"singly", "singl"}, {"news", "news"}, {"howe", "howe"}, {"atlas", "atlas"}, {"cosmos", "cosmos"},
	{"bias", "bias"}, {"andes", "andes"}, {"inning", "inning"}, {"innings", "inning"},
	{"outing", "outing"}, {"outings", "outing"}, {"canning", "canning"}, {"cannings", "canning"},
	{"herring", "herring"}, {"herrings", "herring"}, {"earring", "earring"}, {"earrings", "earring"},
	{"proceed", "proceed"}, {"proceeding", "proceed"}, {"exceed", "exceed"}, {"exceeded", "exceed"},
	{"succeed", "succeed"}, {"succeeding", "succeed"},
}

// TestPorter2 checks the English stemmer (Snowball English, the one Bleve
// and so Dgraph use) against the table, through the analyzer.
func TestPorter2(t *testing.T) {
	if len(porter2) < 100 {
		t.Fatalf("only %d pairs", len(porter2))
	}
	for _, p := range porter2 {
		if got := analyzers["en"].stemWord(p[0]); got != p[1] {
			t.Errorf("stem(%q) = %q, want %q", p[0], got, p[1])
		}
	}
}

func TestFulltextTerms(t *testing.T) {
	for _, c := range []struct {
		in, lang string
		want     []string
	}{
		{"The Lord of the Rings", "", []string{"lord", "ring"}},
		{"The Lord of the Rings", "en", []string{"lord", "ring"}},
		{"running runners RUN", "en-GB", []string{"run", "runner"}},
		{"the and of", "en", nil},                                                          // stop words only
		{"Ｒｕｎｎｉｎｇ ﬁre", "", []string{"fire", "run"}},                                       // NFKC: full width, ligature
		{"don't stop", "", []string{"don't", "stop"}},                                      // apostrophe inside a word
		{"pi is 3.14, ok", "", []string{"3.14", "ok", "pi"}},                               // a decimal stays one word
		{"東京タワー", "", []string{"タ", "ワ", "ー", "京", "東"}},                                   // ideographs one by one
		{"la chanteuse et des chanteuses chantaient", "fr", []string{"chant", "chanteux"}}, // French stop words and stems
		{"the runners", "de", []string{"runners", "the"}},                                  // no German analyzer: words as they are
		{"Café CAFÉ cafe\u0301", "xx", []string{"café"}},                                   // NFKC composes e+◌́
	} {
		got := FulltextTerms(c.in, c.lang)
		if !slices.Equal(got, c.want) {
			t.Errorf("FulltextTerms(%q, %q) = %q, want %q", c.in, c.lang, got, c.want)
		}
	}
}

// TestFulltextIndexSuperset checks what fulltext lookups rely on: a value's
// index tokens hold its terms in every language, so the index's
// candidates include every node a query in any language matches.
func TestFulltextIndexSuperset(t *testing.T) {
	words := []string{"the", "running", "Runs", "chanteuses", "les", "und", "och", "är", "книги", "книга",
		"az", "házak", "los", "niños", "don't", "Ｆｉｌｍ", "films", "3.5", "東京", "være", "og", "généreux"}
	langs := append(FulltextLanguages(), "", "de", "en-US")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var parts []string
		for range 1 + rng.IntN(6) {
			parts = append(parts, words[rng.IntN(len(words))])
		}
		s := strings.Join(parts, []string{" ", ", ", "-", "."}[rng.IntN(4)])
		idx := fulltextIndexTokens(s)
		for _, l := range langs {
			for _, term := range FulltextTerms(s, l) {
				if _, ok := slices.BinarySearch(idx, term); !ok {
					t.Fatalf("%q in %q: term %q not among the index tokens %q", s, l, term, idx)
				}
			}
		}
	}
}

// FuzzFulltext checks the analyzers on any text: no panic, and the index
// tokens hold the terms of every language (TestFulltextIndexSuperset's
// property).
//
//	go test ./internal/dgraph/index -run '^$' -fuzz FuzzFulltext -fuzztime 60s
func FuzzFulltext(f *testing.F) {
	for _, s := range []string{"The Running Man", "La chanteuse", "книги", "házak", "don't", "3.14", "東京", "ﬁ\u0301"} {
		f.Add(s)
	}
	langs := append(FulltextLanguages(), "", "de")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			return
		}
		idx := fulltextIndexTokens(s)
		for _, l := range langs {
			for _, term := range FulltextTerms(s, l) {
				if _, ok := slices.BinarySearch(idx, term); !ok {
					t.Fatalf("%q in %q: term %q not among the index tokens %q", s, l, term, idx)
				}
			}
		}
	})
}

// BenchmarkTokenizers measures the tokenizers on film-like names: the CPU
// part of an index write (term for comparison; fulltext with its stem memo
// warm, and cold).
func BenchmarkTokenizers(b *testing.B) {
	names := []string{"The Lord of the Rings: The Return of the King", "Raiders of the Lost Ark",
		"Les Parapluies de Cherbourg", "Crouching Tiger, Hidden Dragon", "東京物語", "Смерть Ивана Ильича"}
	for _, c := range []struct {
		name string
		f    func(string) []string
	}{
		{"term", TermTokens}, {"fulltext", fulltextIndexTokens},
		{"fulltext-cold", func(s string) []string { // without the stem memo
			stemCache.Lock()
			clear(stemCache.m)
			stemCache.Unlock()
			return fulltextIndexTokens(s)
		}},
		{"fulltext-en", func(s string) []string { return FulltextTerms(s, "en") }},
		{"trigram", TrigramTokens},
	} {
		b.Run(c.name, func(b *testing.B) {
			i, n := 0, 0
			for b.Loop() {
				n += len(c.f(names[i%len(names)]))
				i++
			}
			b.ReportMetric(float64(n)/float64(i), "tokens/value")
		})
	}
}
