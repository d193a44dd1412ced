package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
)

const textSchema = `
title: string @index(fulltext, trigram) @lang .
name: string @index(exact, term) @lang .
`

const textData = `
<0x1> <title> "The Running Man" .
<0x1> <title> "La chanteuse"@fr .
<0x2> <title> "Runners of the North" .
<0x3> <title> "Steven Spielberg runs" .
<0x4> <title> "Stephen King" .
<0x5> <title> "Des hommes qui courent"@fr .
<0x5> <name> "Five" .
`

// manyTrigrams has more distinct trigrams, and words, than a root looks up.
var manyTrigrams = func() string {
	var b strings.Builder
	for i := range 150 {
		fmt.Fprintf(&b, "%d ", i*7)
	}
	return b.String()
}()

// TestTextFunctions checks alloftext, anyoftext, regexp and match through
// the indexes at the root, and the same functions in filters, with and
// without language tags (hand-checked answers).
func TestTextFunctions(t *testing.T) {
	f := newFixture(t, textSchema, textData)
	for _, c := range []struct{ name, q, want string }{
		{"alloftext stems", `{ q(func: alloftext(title, "running")) { uid } }`, `{"q":[{"uid":"0x1"},{"uid":"0x3"}]}`},
		{"alloftext all", `{ q(func: alloftext(title, "runs MAN")) { uid } }`, `{"q":[{"uid":"0x1"}]}`},
		{"anyoftext", `{ q(func: anyoftext(title, "north kings")) { uid } }`, `{"q":[{"uid":"0x2"},{"uid":"0x4"}]}`},
		{"stop words only", `{ q(func: alloftext(title, "the of")) { uid } }`, `{"q":[]}`},
		{"alloftext french", `{ q(func: alloftext(title@fr, "chanteuses")) { uid } }`, `{"q":[{"uid":"0x1"}]}`},
		{"french not untagged", `{ q(func: alloftext(title, "chanteuse")) { uid } }`, `{"q":[]}`},
		{"filter alloftext", `{ q(func: has(title)) @filter(alloftext(title, "runner")) { uid } }`, `{"q":[{"uid":"0x2"}]}`},
		{"filter french", `{ q(func: uid(0x1, 0x5)) @filter(anyoftext(title@fr, "homme")) { uid } }`, `{"q":[{"uid":"0x5"}]}`},
		{"filter not", `{ q(func: has(title)) @filter(NOT anyoftext(title, "run")) { uid } }`, `{"q":[{"uid":"0x2"},{"uid":"0x4"},{"uid":"0x5"}]}`},
		{"regexp root", `{ q(func: regexp(title, /Ste(v|ph)en/)) { uid } }`, `{"q":[{"uid":"0x3"},{"uid":"0x4"}]}`},
		{"regexp root i", `{ q(func: regexp(title, /RUNNING/i)) { uid } }`, `{"q":[{"uid":"0x1"}]}`},
		{"regexp root lang", `{ q(func: regexp(title@fr, /hom+es/)) { uid } }`, `{"q":[{"uid":"0x5"}]}`},
		{"regexp filter wide", `{ q(func: has(title)) @filter(regexp(title, /^S/)) { uid } }`, `{"q":[{"uid":"0x3"},{"uid":"0x4"}]}`},
		{"match root", `{ q(func: match(title, "Stephen Kimg", 1)) { uid } }`, `{"q":[{"uid":"0x4"}]}`},
		{"match distance", `{ q(func: match(title, "Steven King", 2)) { uid } }`, `{"q":[{"uid":"0x4"}]}`},
		{"match too far", `{ q(func: match(title, "Steven King", 1)) { uid } }`, `{"q":[]}`},
		{"match filter", `{ q(func: has(title)) @filter(match(title, "Stepen King", 1)) { uid } }`, `{"q":[{"uid":"0x4"}]}`},
		{"any language", `{ q(func: anyoftext(title@., "homme runner")) { uid } }`, `{"q":[{"uid":"0x2"},{"uid":"0x5"}]}`},
		{"regexp folded phrase", `{ q(func: regexp(title, /(?i)the running man/)) { uid } }`, `{"q":[{"uid":"0x1"}]}`},
		{"match many trigrams", `{ q(func: match(title, "Stephen King ` + manyTrigrams + `", 1000)) { uid } }`,
			`{"q":[{"uid":"0x1"},{"uid":"0x3"},{"uid":"0x4"}]}`}, // a shared trigram, any distance
		{"alloftext long text", `{ q(func: alloftext(title, "running ` + manyTrigrams + `")) { uid } }`, `{"q":[]}`},
		{"anyoftext long text", `{ q(func: anyoftext(title, "running ` + manyTrigrams + `")) { uid } }`,
			`{"q":[{"uid":"0x1"},{"uid":"0x3"}]}`},
		{"match exact", `{ q(func: match(title@fr, "La chanteuse", 0)) { uid } }`, `{"q":[{"uid":"0x1"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) { f.expect(t, c.q, nil, c.want) })
	}
}

func TestTextFunctionErrors(t *testing.T) {
	f := newFixture(t, textSchema, textData)
	for _, c := range []struct {
		q    string
		want error
		text string
	}{
		{`{ q(func: regexp(title, /S.*n/)) { uid } }`, ErrInvalid, "too wide-ranging"},
		{`{ q(func: regexp(title, /(?i)ab/)) { uid } }`, ErrInvalid, "too wide-ranging"},
		{`{ q(func: alloftext(name, "five")) { uid } }`, dgraph.ErrNoIndex, "not indexed with type fulltext"},
		{`{ q(func: has(name)) @filter(anyoftext(name, "five")) { uid } }`, dgraph.ErrNoIndex, "fulltext"},
		{`{ q(func: has(name)) @filter(match(name, "five", 1)) { uid } }`, dgraph.ErrNoIndex, "trigram"},
		{`{ q(func: match(title, "five", -1)) { uid } }`, nil, "distance"},
		{`{ q(func: match(title, "five", x)) { uid } }`, nil, "distance"},
	} {
		_, err := f.e.Query(context.Background(), f.reader(t, false), c.q, nil)
		if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: error %v, want %v with %q", c.q, err, c.want, c.text)
		}
	}
}

// TestTextIndexesOnAlter checks that indexes added by an alter to a
// predicate with data answer the functions, and that dropping them makes
// the functions refuse again.
func TestTextIndexesOnAlter(t *testing.T) {
	f := newFixture(t, "title: string @lang .\n", textData)
	q := `{ a(func: anyoftext(title, "runner kings")) { uid } r(func: regexp(title, /Ste(v|ph)en/)) { uid } }`
	if _, err := f.e.Query(context.Background(), f.reader(t, false), q, nil); !errors.Is(err, dgraph.ErrNoIndex) {
		t.Fatalf("before the alter: %v", err)
	}
	if _, err := f.g.Alter(context.Background(), "title: string @index(fulltext, trigram) @lang ."); err != nil {
		t.Fatal(err)
	}
	f.expect(t, q, nil, `{"a":[{"uid":"0x2"},{"uid":"0x4"}],"r":[{"uid":"0x3"},{"uid":"0x4"}]}`)
	f.mutate(t, `<0x6> <title> "King of kings" .`)
	f.expect(t, q, nil, `{"a":[{"uid":"0x2"},{"uid":"0x4"},{"uid":"0x6"}],"r":[{"uid":"0x3"},{"uid":"0x4"}]}`)
	if _, err := f.g.Alter(context.Background(), "title: string @lang ."); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Query(context.Background(), f.reader(t, false), `{ a(func: anyoftext(title, "king")) { uid } }`, nil); !errors.Is(err, dgraph.ErrNoIndex) {
		t.Errorf("fulltext after the drop: %v", err)
	}
	res, err := f.e.Query(context.Background(), f.reader(t, false), `{ a(func: match(title, "King", 1)) { uid } }`, nil)
	if !errors.Is(err, dgraph.ErrNoIndex) {
		var out any
		if res != nil {
			_ = json.Unmarshal(res.Data, &out)
		}
		t.Errorf("match after the drop: %v %v", err, out)
	}
}

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 5, 3},
		{"flaw", "lawn", 5, 2},
		{"", "abc", 5, 3},
		{"abc", "", 5, 3},
		{"héllo", "hello", 5, 1},
		{"Stephen King", "Steven King", 5, 2},
		{"same", "same", 0, 0},
		{"kitten", "sitting", 2, 3}, // beyond the limit: limit+1
		{"a", "abcdef", 3, 4},
	} {
		if got := levenshtein([]rune(c.a), []rune(c.b), c.limit); got != c.want {
			t.Errorf("levenshtein(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
