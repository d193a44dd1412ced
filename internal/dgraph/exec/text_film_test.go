package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/index"
)

// filmTextSchema is the film schema with fulltext and trigram indexes on
// name.
func filmTextSchema(tb testing.TB, sch string) string {
	tb.Helper()
	out := strings.Replace(sch, "name: string @index(term)", "name: string @index(term, fulltext, trigram)", 1)
	if out == sch {
		tb.Fatalf("unexpected film schema %q", sch)
	}
	return out
}

// loadFilmText loads the first n film lines with fulltext and trigram
// indexes on name.
func loadFilmText(tb testing.TB, placement string, n int) (*fixture, []byte) {
	tb.Helper()
	data, sch := filmLines(tb, n)
	f := newFixtureIn(tb, placement, filmTextSchema(tb, sch), "")
	cfg := dgraph.DefaultLoadConfig()
	cfg.Loaders = 1 // file order: a repeated value's last one wins, as in the oracle
	start := time.Now()
	st, err := f.g.LoadRDF(context.Background(), bytes.NewReader(data), "film", cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("loaded %d quads (%d skipped) in %v", st.Quads, st.Skipped, time.Since(start).Round(time.Millisecond))
	return f, data
}

// xidsOf runs q and returns the xids of block q's nodes, sorted.
func xidsOf(t *testing.T, f *fixture, q string) []string {
	t.Helper()
	res := f.query(t, q, nil)
	var got struct{ Q []struct{ XID string } }
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range got.Q {
		out = append(out, r.XID)
	}
	slices.Sort(out)
	return out
}

// TestFilmText checks alloftext, anyoftext and regexp on the film data's
// English names against answers computed from the raw N-Quads by a scan,
// for words and substrings picked across the data set.
func TestFilmText(t *testing.T) { inPlacements(t, testFilmText) }

func testFilmText(t *testing.T, placement string) {
	lines := 20000
	if testing.Short() || slowBuild {
		lines = 4000
	}
	f, data := loadFilmText(keepOpen{t}, placement, lines)
	o := newOracle(t, data)
	var xs []string
	for x := range o.nameEn {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	if len(xs) < 100 {
		t.Fatalf("only %d English names", len(xs))
	}
	scan := func(ok func(name string) bool) []string {
		var out []string
		for _, x := range xs {
			if ok(o.nameEn[x]) {
				out = append(out, x)
			}
		}
		return out
	}
	check := func(q string, want []string) {
		t.Helper()
		if got := xidsOf(t, f, q); !slices.Equal(got, want) {
			t.Errorf("%s:\ngot  %d %.300v\nwant %d %.300v", q, len(got), got, len(want), want)
		}
	}
	nonEmpty := 0
	for i := 0; i < len(xs); i += len(xs) / 20 {
		name := o.nameEn[xs[i]]
		words := index.FulltextWords(name)
		if len(words) == 0 {
			continue
		}
		// alloftext: the name's first and last words; anyoftext: a word of
		// this name and of the next one.
		text := words[0] + " " + words[len(words)-1]
		want := scan(func(n string) bool { return oracleText(true, n, text, "en") })
		check(fmt.Sprintf(`{ q(func: alloftext(name@en, %q)) { xid } }`, text), want)
		if len(want) > 0 {
			nonEmpty++
		}
		other := index.FulltextWords(o.nameEn[xs[(i+7)%len(xs)]])
		if len(other) > 0 {
			text := words[len(words)/2] + " " + other[0]
			check(fmt.Sprintf(`{ q(func: anyoftext(name@en, %q)) { xid } }`, text),
				scan(func(n string) bool { return oracleText(false, n, text, "en") }))
		}
		// regexp: five characters of the name, as written and folded.
		rs := []rune(name)
		if len(rs) >= 5 {
			lit := regexp.QuoteMeta(string(rs[len(rs)/2-2 : len(rs)/2+3]))
			for _, flags := range []string{"", "i"} {
				pat := lit
				if flags == "i" {
					pat = "(?i)" + lit
				}
				re := regexp.MustCompile(pat)
				want := scan(re.MatchString)
				if len(want) == 0 {
					t.Errorf("regexp %s finds nothing, not even %s", pat, xs[i])
				}
				check(fmt.Sprintf(`{ q(func: regexp(name@en, /%s/%s)) { xid } }`, strings.ReplaceAll(lit, "/", `\/`), flags), want)
			}
		}
	}
	if nonEmpty < 10 {
		t.Errorf("only %d alloftext queries found a film: the test checks too little", nonEmpty)
	}
}
