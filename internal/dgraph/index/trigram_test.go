package index

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTrigramTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"ab", nil},
		{"abc", []string{"abc"}},
		{"Abcd", []string{"Abc", "bcd"}},
		{"aaaa", []string{"aaa"}},
		{"héllo", []string{"hél", "llo", "éll"}},
		{"東京タワー", []string{"タワー", "京タワ", "東京タ"}},
	} {
		if got := TrigramTokens(c.in); !slices.Equal(got, c.want) {
			t.Errorf("TrigramTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRegexpTrigrams(t *testing.T) {
	for _, c := range []struct{ re, want string }{
		{`abc`, `("abc")`},
		{`abcd`, `("abc" "bcd")`},
		{`ab`, `+`},
		{`.*`, `+`},
		{`a.c`, `+`},
		{`^Steven`, `("Ste" "eve" "tev" "ven")`},
		{`abc|xyz`, `("abc"|"xyz")`},
		{`abc|x`, `+`},
		{`a(bc)d`, `("abc" "bcd")`},
		{`(abc)+`, `("abc")`},
		{`(abc)*`, `+`},
		{`x(abc)?y`, `+`},
		{`ab[cd]`, `("abc"|"abd")`},
		{`abc.*def`, `("abc" "def")`},
		{`a[0-9]bc`, `+`},
		{`(?i)ab`, `+`},
		{`(?i)abc`, `("ABC"|"ABc"|"AbC"|"Abc"|"aBC"|"aBc"|"abC"|"abc")`},
		{`(?i)k`, `+`},
		{`hom+es`, `("hom" "mes")`},
		{`colou?r`, `(("col" "lor" "olo")|("col" "lou" "olo" "our"))`},
		{`(ab|cd)+ef`, `(("abe" "bef")|("cde" "def"))`},
	} {
		q, err := RegexpTrigrams(c.re)
		if err != nil {
			t.Fatalf("%s: %v", c.re, err)
		}
		if got := q.String(); got != c.want {
			t.Errorf("RegexpTrigrams(%s) = %s, want %s", c.re, got, c.want)
		}
	}
	if _, err := RegexpTrigrams(`a(`); err == nil {
		t.Error("a bad regexp was accepted")
	}
}

// TestRegexpTrigramsSound checks the property the index relies on: a
// string a regexp matches satisfies the regexp's trigram query. Random
// regexps built from literals, classes, groups, alternations and
// repetitions, over a small alphabet so that matches are common.
func TestRegexpTrigramsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("abcAB.é")
	randStr := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	var gen func(depth int) string
	gen = func(depth int) string {
		k := rng.IntN(9)
		if depth > 2 {
			k = rng.IntN(2)
		}
		switch k {
		case 0, 1:
			return regexp.QuoteMeta(randStr(1 + rng.IntN(4)))
		case 2:
			return "[" + randStr(1+rng.IntN(3)) + "]"
		case 3:
			return "(" + gen(depth+1) + ")" + []string{"+", "*", "?", "{2}", "{1,3}", ""}[rng.IntN(6)]
		case 4:
			return gen(depth+1) + "|" + gen(depth+1)
		case 5:
			return "."
		default:
			return gen(depth+1) + gen(depth+1)
		}
	}
	checked, narrow := 0, 0
	for range 3000 {
		pat := gen(0)
		if rng.IntN(4) == 0 {
			pat = "(?i)" + pat
		}
		re := regexp.MustCompile(pat)
		q, err := RegexpTrigrams(pat)
		if err != nil {
			t.Fatalf("%s: %v", pat, err)
		}
		if q.Op != TrigramAll {
			narrow++
		}
		for range 30 {
			s := randStr(rng.IntN(12))
			if !re.MatchString(s) {
				continue
			}
			checked++
			have := map[string]bool{}
			for _, g := range TrigramTokens(s) {
				have[g] = true
			}
			if !q.Match(have) {
				t.Fatalf("%q matches %s but not its trigram query %s", s, pat, q)
			}
		}
	}
	if checked < 1000 || narrow < 300 {
		t.Fatalf("the test checks too little: %d matches, %d regexps with trigrams", checked, narrow)
	}
}

// FuzzRegexpTrigrams checks RegexpTrigrams on any pattern: it fails
// exactly when Go's regexp does, and a string the regexp matches
// satisfies the trigram query.
//
//	go test ./internal/dgraph/index -run '^$' -fuzz FuzzRegexpTrigrams -fuzztime 60s
func FuzzRegexpTrigrams(f *testing.F) {
	for _, s := range [][2]string{{`abc`, `xabcx`}, {`(?i)kings?`, `KING`}, {`ho(m+)es`, `hommmes`},
		{`(ab|cd)+ef`, `abcdef`}, {`colou?r`, `colour`}, {`a[bc]{2,3}d`, `abcbd`}, {`^Ste(v|ph)en$`, `Stephen`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 48 || len(s) > 64 {
			return
		}
		re, err := regexp.Compile(pat)
		q, qerr := RegexpTrigrams(pat)
		if (err == nil) != (qerr == nil) {
			t.Fatalf("%q: regexp error %v, trigram error %v", pat, err, qerr)
		}
		if err != nil || !re.MatchString(s) {
			return
		}
		have := map[string]bool{}
		for _, g := range TrigramTokens(s) {
			have[g] = true
		}
		if !q.Match(have) {
			t.Fatalf("%q matches %q but not its trigram query %s", s, pat, q)
		}
	})
}
