package schema

import (
	"errors"
	"testing"
)

// FuzzParseSchema: any text either fails with a positioned *Error, or parses
// to a schema whose canonical text parses back to an equal schema and
// renders to itself, and which can be applied over the initial schema or
// fails with an *Error. Seeds: testdata/fuzz/FuzzParseSchema plus these.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		"name: string @index(exact, term) @lang @upsert .",
		"friend: [uid] @reverse @count .\ntype Person {\n\tname\n\tfriend\n\t<~friend>\n}",
		`v: float32vector @index(hnsw(metric: "cosine", exponent: "4")) .`,
		"director.film        : [uid] @reverse @count .\ninitial_release_date : datetime @index(year) .",
		"email: string @index(exact) @unique @noconflict .\n# comment\nloc: geo @index(geo) .",
		"type T { a: [Person!]! }", "<http://x/y>: [int] @index(int) .", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("Parse(%q) error %v is not a positioned *Error", text, err)
			}
			return
		}
		canon := s.String()
		back, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical text of %q does not parse: %v\n%s", text, err, canon)
		}
		if !back.Equal(s) || back.String() != canon {
			t.Fatalf("canonical text of %q is not stable:\n%s\n%s", text, canon, back.String())
		}
		after, d, err := Initial().Apply(s)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Apply error %v is not an *Error", err)
			}
			return
		}
		if _, d2, err := after.Apply(s); err != nil || !d2.Empty() {
			t.Fatalf("re-applying %q: %v %s (first diff %s)", text, err, d2, d)
		}
	})
}
