package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Schema {
	t.Helper()
	s, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return s
}

// TestParsePredicates covers every type, tokenizer and directive: each line
// parses to the expected definition, rendered canonically.
func TestParsePredicates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`name: string @index(exact, term) @lang @upsert .`, `name: string @index(exact, term) @lang @upsert .`},
		{`name: string @upsert @lang @index(term, exact) .`, `name: string @index(exact, term) @lang @upsert .`},
		{`friend: [uid] @reverse @count .`, `friend: [uid] @reverse @count .`},
		{`best: uid @reverse .`, `best: uid @reverse .`},
		{`x: default .`, `x: default .`},
		{`age: int @index(int) @upsert .`, `age: int @index(int) @upsert .`},
		{`score: float @index(float) .`, `score: float @index(float) .`},
		{`big: bigfloat @index(bigfloat) .`, `big: bigfloat @index(bigfloat) .`},
		{`ok: bool @index(bool) .`, `ok: bool @index(bool) .`},
		{`born: dateTime @index(year) .`, `born: datetime @index(year) .`},
		{`t: DATETIME @index(hour) .`, `t: datetime @index(hour) .`},
		{`d: datetime @index(month) .`, `d: datetime @index(month) .`},
		{`d: datetime @index(day) .`, `d: datetime @index(day) .`},
		{`loc: geo @index(geo) .`, `loc: geo @index(geo) .`},
		{`pw: password .`, `pw: password .`},
		{`tags: [string] @index(hash, trigram, fulltext, ngram) @count .`, `tags: [string] @index(fulltext, hash, ngram, trigram) @count .`},
		{`nums: [int] .`, `nums: [int] .`},
		{`email: string @index(exact) @unique .`, `email: string @index(exact) @upsert @unique .`},
		{`email: string @index(hash) @upsert @unique @noconflict .`, `email: string @index(hash) @upsert @unique @noconflict .`},
		{`v: float32vector @index(hnsw(metric: "euclidean", exponent: "4")) .`, `v: float32vector @index(hnsw(exponent: "4", metric: "euclidean")) .`},
		{`v: float32vector @index(hnsw) .`, `v: float32vector @index(hnsw) .`},
		{`v: float32vector @index(HNSW(metric:cosine)) .`, `v: float32vector @index(hnsw(metric: "cosine")) .`},
		{`<http://x.org/a b>: string .`, ``}, // space not allowed: see errors
		{`<http://schema.org/name>: string .`, `<http://schema.org/name>: string .`},
		{`<director.film>: [uid] .`, `director.film: [uid] .`},
		{`performance.character_note : string @lang .`, `performance.character_note: string @lang .`},
		{"a: int\n@index(int)\n.", `a: int @index(int) .`},
		{`a: int. b: string .`, "a: int .\nb: string ."},
		{`type: string .`, `<type>: string .`},
		{`n: int # comment here
			.`, `n: int .`},
		{`日本: string @index(exact) .`, `日本: string @index(exact) .`},
	} {
		if tc.want == "" {
			continue
		}
		s := mustParse(t, tc.in)
		if got := strings.TrimSpace(s.String()); got != tc.want {
			t.Errorf("Parse(%q).String() = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseTypes(t *testing.T) {
	s := mustParse(t, `
		name: string .
		friend: [uid] @reverse .
		# a type, fields one per line
		type Person {
			name
			friend
			<~friend>
		}
		type Short { name friend, ~friend }
		type Old {
			name: string
			friend: [Person!]!
		}
		type Empty {}
	`)
	for name, want := range map[string][]string{
		"Person": {"name", "friend", "~friend"}, "Short": {"name", "friend", "~friend"},
		"Old": {"name", "friend"}, "Empty": nil,
	} {
		ty, ok := s.Type(name)
		if !ok || strings.Join(ty.Fields, " ") != strings.Join(want, " ") {
			t.Errorf("type %s = %v, %v; want %v", name, ty.Fields, ok, want)
		}
	}
	want := "friend: [uid] @reverse .\nname: string .\n\ntype Empty {\n}\n\ntype Old {\n\tname\n\tfriend\n}\n\n" +
		"type Person {\n\tname\n\tfriend\n\t<~friend>\n}\n\ntype Short {\n\tname\n\tfriend\n\t<~friend>\n}\n"
	if got := s.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	if ty, _ := s.Type("Person"); ty.Pos != (Pos{Line: 5, Col: 3}) {
		t.Errorf("Person declared at %v; want 5:3", ty.Pos)
	}
}

// TestParseErrors covers every check: the message names the rule, the
// position points at the token that breaks it.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		pos  Pos
		want string
	}{
		{`name string .`, Pos{1, 6}, "expected ':' after predicate name"},
		{`name: .`, Pos{1, 7}, "expected a type"},
		{`name: strin .`, Pos{1, 7}, `unknown type "strin"`},
		{`name: [string .`, Pos{1, 15}, "expected ']' to close [string"},
		{`name: string`, Pos{1, 13}, "expected a directive or '.'"},
		{`name: string @index(exact)`, Pos{1, 27}, "expected a directive or '.'"},
		{`name: string foo .`, Pos{1, 14}, "expected a directive or '.'"},
		{`name: string @ .`, Pos{1, 16}, "expected a directive name"},
		{`name: string @foo .`, Pos{1, 15}, "unknown directive @foo"},
		{`name: string @index .`, Pos{1, 14}, "@index needs tokenizers, e.g. @index(exact, fulltext, hash, ngram, term, trigram)"},
		{`name: string @index() .`, Pos{1, 21}, "expected a tokenizer"},
		{`name: string @index(exact,) .`, Pos{1, 27}, "expected a tokenizer"},
		{`name: string @index(exact term) .`, Pos{1, 27}, "expected ',' or ')'"},
		{`name: string @index(foo) .`, Pos{1, 21}, `unknown tokenizer "foo"`},
		{`name: string @index(int) .`, Pos{1, 21}, "tokenizer int indexes int, not string"},
		{`age: int @index(exact) .`, Pos{1, 17}, "tokenizer exact indexes string, not int (for int use int)"},
		{`d: datetime @index(year, month) .`, Pos{1, 26}, "more than one sortable tokenizer (year and month)"},
		{`name: string @index(term, term) .`, Pos{1, 27}, "tokenizer term given twice"},
		{`friend: uid @index(exact) .`, Pos{1, 13}, "indexing is not allowed on uid predicate friend"},
		{`friend: [uid] @index(term) .`, Pos{1, 15}, "indexing is not allowed on uid"},
		{`x: default @index(exact) .`, Pos{1, 12}, "indexing is not allowed on default"},
		{`pw: password @index(exact) .`, Pos{1, 14}, "indexing is not allowed on password"},
		{`name: string @index(exact(a: "b")) .`, Pos{1, 26}, "tokenizer exact takes no options"},
		{`v: float32vector @index(hnsw(metric: "manhattan")) .`, Pos{1, 18}, `hnsw metric "manhattan"`},
		{`v: float32vector @index(hnsw(exponent: "x")) .`, Pos{1, 18}, "hnsw option exponent"},
		{`v: float32vector @index(hnsw(colour: "4")) .`, Pos{1, 18}, "unknown hnsw option colour"},
		{`v: float32vector @index(hnsw(metric "x")) .`, Pos{1, 37}, "expected ':' after option metric"},
		{`v: float32vector @index(hnsw(metric: "x", metric: "y")) .`, Pos{1, 43}, "option metric given twice"},
		{`name: string @reverse .`, Pos{1, 14}, "@reverse is only allowed on uid predicates, not string"},
		{`age: int @lang .`, Pos{1, 10}, "@lang is only allowed on string"},
		{`names: [string] @lang .`, Pos{1, 17}, "@lang is only allowed on string predicates (not lists)"},
		{`jobs: string @upsert .`, Pos{1, 14}, "@upsert needs an index"},
		{`jobs: string @index(term) @unique .`, Pos{1, 27}, "@unique needs an exact, hash or int index"},
		{`name: string @lang @lang .`, Pos{1, 20}, "@lang given twice"},
		{`name: string @count(x) .`, Pos{1, 20}, "@count takes no arguments"},
		{`name@en: string .`, Pos{1, 5}, "'@' is not allowed in a predicate name"},
		{`<name@en>: string .`, Pos{1, 1}, "'@' is not allowed in a predicate name"},
		{`~friend: uid .`, Pos{1, 1}, "cannot start with '~'"},
		{`uid: string .`, Pos{1, 1}, "uid is reserved"},
		{`pw: [password] .`, Pos{1, 5}, "[password] lists are not supported"},
		{`ok: [bool] .`, Pos{1, 5}, "[bool] lists are not supported"},
		{`<a b>: string .`, Pos{1, 1}, "not allowed in <name>"},
		{`<>: string .`, Pos{1, 1}, "empty name <>"},
		{`<abc: string .`, Pos{1, 1}, "not allowed in <name>"},
		{`<abc`, Pos{1, 1}, "unterminated <name>"},
		{`v: float32vector @index(hnsw(metric: "x)) .`, Pos{1, 38}, "unterminated string"},
		{`$x: int .`, Pos{1, 1}, "unexpected character '$'"},
		{". x: int .", Pos{1, 1}, "expected a predicate name or a type definition"},
		{"a: int .\nb: int .\na: string .", Pos{3, 1}, "predicate a defined twice (first at line 1)"},
		{"type T {\n}\ntype T {\n}", Pos{3, 1}, "type T defined twice (first at line 1)"},
		{`type T { name name }`, Pos{1, 15}, "field name given twice in type T"},
		{`type T { name`, Pos{1, 14}, "expected a field name or '}'"},
		{`type T name }`, Pos{1, 8}, "expected '{' after type T"},
		{`type { }`, Pos{1, 6}, "expected a type name"},
		{`type T { <a@b> }`, Pos{1, 10}, "bad field name"},
		{`type T { name: }`, Pos{1, 16}, "expected a field type"},
		{`type T { friend: [Person }`, Pos{1, 26}, "expected ']' to close [Person"},
		{"a: int .\n  b: int\n", Pos{3, 1}, "expected a directive or '.' to end predicate b, found end of input"},
		{"a: int .\n\xff", Pos{2, 1}, "invalid UTF-8"},
	} {
		_, err := Parse(tc.in)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v; want an *Error", tc.in, err)
			continue
		}
		if se.Pos != tc.pos || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %q at %v; want %v containing %q", tc.in, err, se.Pos, tc.pos, tc.want)
		}
		if !strings.HasPrefix(err.Error(), "schema: line ") {
			t.Errorf("error %q lacks the position prefix", err)
		}
	}
}

// TestRoundTrip: the canonical text parses back to an equal schema and
// renders to itself.
func TestRoundTrip(t *testing.T) {
	for _, text := range []string{
		``,
		`name: string @index(exact, term) @lang @upsert .`,
		"friend: [uid] @reverse @count .\nname: string .\ntype Person { name friend <~friend> }",
		`<http://schema.org/knows>: [uid] @reverse . type <my type> { <http://schema.org/knows> }`,
		`v: float32vector @index(hnsw(metric: "a\"b")) .`, // rejected: see below
		`e: string @index(hash) @unique @noconflict . n: [float] @index(float) @count .`,
	} {
		s, err := Parse(text)
		if err != nil {
			continue
		}
		canon := s.String()
		back, err := Parse(canon)
		if err != nil || !back.Equal(s) || back.String() != canon {
			t.Errorf("round trip of %q: %q -> %v", text, canon, err)
		}
	}
}

func filmSchema(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../testdata/film", name))
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("film schema %s not present (testdata/film is part of the checkout)", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFilmSchemas parses Dgraph's 21million and goldendata schemas.
func TestFilmSchemas(t *testing.T) {
	s := mustParse(t, filmSchema(t, "21million.schema"))
	if n := len(s.Predicates()); n != 14 {
		t.Errorf("21million: %d predicates; want 14", n)
	}
	name, _ := s.Predicate("name")
	if got := name.String(); got != "name: string @index(fulltext, hash, term, trigram) @lang ." {
		t.Errorf("name = %s", got)
	}
	for pred, want := range map[string]string{
		"director.film":        "director.film: [uid] @reverse @count .",
		"initial_release_date": "initial_release_date: datetime @index(year) .",
		"loc":                  "loc: geo @index(geo) .",
		"email":                "email: string @index(exact) @upsert .",
		"rated":                "rated: [uid] @reverse .",
	} {
		p, ok := s.Predicate(pred)
		if !ok || p.String() != want {
			t.Errorf("%s = %s; want %s", pred, p, want)
		}
	}
	back := mustParse(t, s.String())
	if !back.Equal(s) {
		t.Errorf("21million schema does not round-trip:\n%s", s)
	}
	g := mustParse(t, filmSchema(t, "goldendata.schema"))
	if got := g.String(); got != "initial_release_date: datetime @index(year) .\nname: string @index(term) @lang .\n" {
		t.Errorf("goldendata schema = %q", got)
	}
	// Altering the goldendata schema into the 21million one builds the new
	// indexes on name and nothing on initial_release_date.
	_, d, err := g.Apply(s)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Predicates[slicesIndex(d.Predicates, "name")]
	if joinTokenizers(c.IndexBuild) != "fulltext, hash, trigram" || len(c.IndexDrop) != 0 {
		t.Errorf("name change: %+v", c)
	}
	if slicesIndex(d.Predicates, "initial_release_date") >= 0 {
		t.Errorf("initial_release_date is unchanged but in the diff:\n%s", d)
	}
}

func slicesIndex(cs []PredicateChange, name string) int {
	for i, c := range cs {
		if c.Name == name {
			return i
		}
	}
	return -1
}
