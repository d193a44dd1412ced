package dql

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/dgraph/schema"
)

// FuzzParse: any text either fails with a positioned *Error inside the
// text, or parses to a query whose canonical text parses back to an equal
// query rendering to itself, and which Validate checks without panicking.
// The same text goes through ParseMutation and ParseCond under the same
// rules. Seeds: testdata/fuzz/FuzzParse, the documentation corpora and the
// texts below.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"film.dql", "docs.dql"} {
		_, texts := corpus(f, file)
		for _, text := range texts {
			f.Add(text)
		}
	}
	for _, s := range []string{
		`{ me(func: uid(0x1)) { name } }`,
		`upsert { query { q(func: eq(e, "x")) { v as uid } } mutation @if(eq(len(v), 0)) { set { _:n <e> "x" . } } }`,
		`{ set { _:a <name> "A" . } delete { <0x1> * * . } }`,
		`@if(eq(len(v), 1) AND NOT gt(len(w), 2))`,
		`query q($a: int = 1, $s: string = "[0x1]") { q(func: uid($s), first: $a) { uid } }`,
		`{ q(func: regexp(n, /a\/b[}{]/i)) { m as math(-(1 + 2) * -x % 3 dot y) } }`,
		"{\n q(func: has(a)) @filter(NOT (has(b) OR has(c)) AND has(d)) { a: v as name@en:. }\n}",
		`{ q(func: near(loc, [-1.5e3, +2], 10)) { ~friend @facets(w as weight, orderdesc: weight) { uid } } }`,
		"{ q(func: has(a)) { ...F } } fragment F { uid }",
		"schema(pred: [a, <b c>]) { type }",
	} {
		f.Add(s)
	}
	s, err := schema.Parse("name: string @index(exact, term, trigram) @lang .\nfriend: [uid] @reverse @count .\nage: int @index(int) .")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q, err := Parse(text)
		if checkFuzzErr(t, text, err) {
			checkFuzzQuery(t, q)
			_ = q.Validate(s)
		}
		u, err := ParseMutation(text)
		if checkFuzzErr(t, text, err) {
			back, err := ParseMutation(u.String())
			if err != nil || !back.Equal(u) || back.String() != u.String() {
				t.Fatalf("mutation round trip of %q: %v\n%s", text, err, u)
			}
			_ = u.Validate(s)
		}
		c, err := ParseCond(text)
		if checkFuzzErr(t, text, err) && c != nil {
			back, err := ParseCond("@if(" + c.String() + ")")
			if err != nil || !back.Equal(c) {
				t.Fatalf("condition round trip of %q: %v\n%s", text, err, c)
			}
		}
	})
}

// checkFuzzErr reports whether err is nil, failing unless an error is a
// positioned *Error inside the text.
func checkFuzzErr(t *testing.T, text string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v for %q is not an *Error", err, text)
	}
	lines := strings.Count(text, "\n") + 1
	if e.Line < 1 || e.Line > lines || e.Col < 1 {
		t.Fatalf("error %v for %q is outside the text (%d lines)", err, text, lines)
	}
	return false
}

func checkFuzzQuery(t *testing.T, q *Query) {
	t.Helper()
	text := q.String()
	back, err := Parse(text)
	if err != nil {
		t.Fatalf("canonical text does not parse: %v\n%s", err, text)
	}
	if !back.Equal(q) || back.String() != text {
		t.Fatalf("canonical text is not stable:\n%s\n%s", text, back)
	}
}
