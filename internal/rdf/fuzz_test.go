package rdf

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/value"
)

// FuzzParseLine: any input either parses to a quad that renders to a line
// parsing back to an equal quad (with valid UTF-8 strings and sorted unique
// facet keys), or fails with an *Error at line 1 and a column inside the
// line, wrapping one of the package's sentinels. Seeds: the corpus in
// testdata/fuzz/FuzzParseLine plus the lines below.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`<a> <b> <c> .`, `_:a <name> "Alice"@en .`, `<0x1f> <p> uid(v) .`, `uid(v) <p> val(x) .`,
		`<a> * * .`, `<a> <name@en> * .`, `<a> <b> "42"^^<xs:int> (k=1, s="x", d=2006-01-02) .`,
		`<a> <b> "\u00e9\t" <0x2> .`, `# comment`, ``, `<a> <b> "{'type':'Point','coordinates':[1,2]}"^^<geo:geojson> .`,
		"<g.1>\t<initial_release_date>\t\"1976-06-19\"^^<http://www.w3.org/2001/XMLSchema#date>\t.",
		`<a> <b> "[1, 2]"^^<xs:[]float32> .`, `0x1 <p> "2006"^^<xs:dateTime> .`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		nq, ok, err := ParseLine(line)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseLine(%q) error %v is not an *Error", line, err)
			}
			if pe.Line != 1 || pe.Col < 1 || pe.Col > utf8.RuneCountInString(line)+1 {
				t.Fatalf("ParseLine(%q) error at line %d col %d", line, pe.Line, pe.Col)
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrValue) && !errors.Is(err, ErrRange) {
				t.Fatalf("ParseLine(%q) error %v wraps no sentinel", line, err)
			}
			return
		}
		if !ok {
			return
		}
		checkQuad(t, line, nq)
		s := nq.String()
		back, ok, err := ParseLine(s)
		if err != nil || !ok || !back.Equal(nq) {
			t.Fatalf("ParseLine(%q) -> %q -> ok %v err %v %q", line, s, ok, err, back.String())
		}
		if back.String() != s {
			t.Fatalf("String is not stable: %q then %q", s, back.String())
		}
	})
}

func checkQuad(t *testing.T, line string, nq NQuad) {
	t.Helper()
	strs := []string{nq.Subject.Name, nq.Predicate, nq.Object.Name, nq.Lang, nq.Label.Name}
	if nq.Object.Kind == Literal && nq.Object.Value.Kind() == value.String {
		strs = append(strs, nq.Object.Value.Str())
	}
	for _, f := range nq.Facets {
		strs = append(strs, f.Key, f.Value.Str())
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			t.Fatalf("ParseLine(%q): invalid UTF-8 %q", line, s)
		}
	}
	if !slices.IsSortedFunc(nq.Facets, func(a, b Facet) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("ParseLine(%q): facets not sorted", line)
	}
	switch {
	case nq.Subject.Kind != IRI && nq.Subject.Kind != Blank && nq.Subject.Kind != UID && nq.Subject.Kind != UIDVar:
		t.Fatalf("ParseLine(%q): subject kind %v", line, nq.Subject.Kind)
	case nq.Object.Kind == None:
		t.Fatalf("ParseLine(%q): no object", line)
	case nq.Label.Kind != None && nq.Label.Kind != IRI && nq.Label.Kind != Blank:
		t.Fatalf("ParseLine(%q): label kind %v", line, nq.Label.Kind)
	case nq.Predicate == "":
		t.Fatalf("ParseLine(%q): empty predicate", line)
	}
}
