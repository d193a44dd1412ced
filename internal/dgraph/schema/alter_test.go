package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestApplyDiff pins, for each kind of alter, the resulting schema and the
// work the diff asks of the engine.
func TestApplyDiff(t *testing.T) {
	base := `
		name: string @index(exact, term) @lang .
		friend: [uid] @reverse .
		age: int @index(int) .
		pw: password .
		v: float32vector @index(hnsw(metric: "cosine")) .
		type Person { name friend }`
	for _, tc := range []struct {
		name, alter string
		diff        string // Diff.String()
	}{
		{"restating changes nothing", `name: string @lang @index(term, exact) . type Person { name friend }`, ``},
		{"add and drop tokenizers", `name: string @index(hash, term) @lang .`,
			"change name: string @index(exact, term) @lang . -> name: string @index(hash, term) @lang . [build index hash; drop index exact]\n"},
		{"restating without index drops it", `name: string @lang .`,
			"change name: string @index(exact, term) @lang . -> name: string @lang . [drop index exact, term]\n"},
		{"toggle lang only", `name: string @index(exact, term) .`,
			"change name: string @index(exact, term) @lang . -> name: string @index(exact, term) .\n"},
		{"reverse and count", `friend: [uid] @count .`,
			"change friend: [uid] @reverse . -> friend: [uid] @count . [drop reverse; build count]\n"},
		{"new predicate", `email: string @index(exact) @upsert .`,
			"create email: string @index(exact) @upsert . [build index exact]\n"},
		{"new uid predicate", `boss: uid @reverse @count .`,
			"create boss: uid @reverse @count . [build reverse; build count]\n"},
		{"scalar type change converts", `age: float @index(float) .`,
			"change age: int @index(int) . -> age: float @index(float) . [build index float; drop index int; convert values]\n"},
		{"single to list", `age: [int] @index(int) .`,
			"change age: int @index(int) . -> age: [int] @index(int) . [build index int; drop index int; convert values]\n"},
		{"list to single needs no data", `friend: uid @reverse .`,
			"change friend: [uid] @reverse . -> friend: uid @reverse . [build reverse; drop reverse; convert values; requires no data]\n"},
		{"uid to scalar needs no data", `friend: string .`,
			"change friend: [uid] @reverse . -> friend: string . [drop reverse; convert values; requires no data]\n"},
		{"hnsw option change rebuilds", `v: float32vector @index(hnsw(metric: "euclidean")) .`,
			"change v: float32vector @index(hnsw(metric: \"cosine\")) . -> v: float32vector @index(hnsw(metric: \"euclidean\")) . " +
				"[build index hnsw(metric: \"euclidean\"); drop index hnsw(metric: \"cosine\")]\n"},
		{"upsert is metadata", `age: int @index(int) @upsert .`,
			"change age: int @index(int) . -> age: int @index(int) @upsert .\n"},
		{"new type", `type Pet { name }`, "create type Pet [name]\n"},
		{"type replaced whole", `type Person { name <~friend> }`, "change type Person [name friend] -> [name ~friend]\n"},
		{"type with a predicate of the same alter", "nick: string .\ntype Person { name nick }",
			"create nick: string .\nchange type Person [name friend] -> [name nick]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := mustParse(t, base)
			u := mustParse(t, tc.alter)
			s, d, err := old.Apply(u)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != tc.diff {
				t.Errorf("diff =\n%s\nwant\n%s", got, tc.diff)
			}
			if d.Empty() != (tc.diff == "") {
				t.Errorf("Empty() = %v", d.Empty())
			}
			// The new schema is the old one with u's definitions in place.
			for _, p := range u.Predicates() {
				if got, _ := s.Predicate(p.Name); !got.Equal(p) {
					t.Errorf("after alter %s = %s; want %s", p.Name, got, p)
				}
			}
			for _, p := range old.Predicates() {
				if _, in := u.Predicate(p.Name); !in {
					if got, _ := s.Predicate(p.Name); !got.Equal(p) {
						t.Errorf("untouched %s became %s", p.Name, got)
					}
				}
			}
			if !old.Equal(mustParse(t, base)) {
				t.Error("Apply modified the old schema")
			}
			// Applying the same alter again changes nothing.
			if _, d2, err := s.Apply(u); err != nil || !d2.Empty() {
				t.Errorf("second apply: %v, %s", err, d2)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	old := mustParse(t, "dgraph.type: [string] @index(exact) .\npw: password .\nname: string .\ntype dgraph.graphql { dgraph.type }")
	for _, tc := range []struct{ alter, want string }{
		{`pw: string .`, "line 1 col 1: predicate pw cannot change type from password to string"},
		{`name: password .`, "predicate name cannot change type from string to password"},
		{`dgraph.type: string .`, "predicate dgraph.type is reserved"},
		{`dgraph.xid: string .`, "predicate dgraph.xid is reserved"},
		{`type dgraph.graphql { name }`, "type dgraph.graphql is reserved"},
		{"\ntype Person { name email }", "line 2 col 1: schema does not contain a matching predicate for field email in type Person"},
		{`type Person { <~parent> }`, "matching predicate for field ~parent in type Person"},
	} {
		_, _, err := old.Apply(mustParse(t, tc.alter))
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Apply(%q) = %v; want %q", tc.alter, err, tc.want)
		}
	}
	// Restating a reserved definition unchanged is allowed, as in Dgraph.
	if _, d, err := old.Apply(mustParse(t, `dgraph.type: [string] @index(exact) .`)); err != nil || !d.Empty() {
		t.Errorf("restating dgraph.type: %v, %s", err, d)
	}
}

func TestDrop(t *testing.T) {
	s := Initial()
	s, _, err := s.Apply(mustParse(t, "name: string @index(term) .\nfriend: [uid] @reverse @count .\ntype P { name friend }"))
	if err != nil {
		t.Fatal(err)
	}
	s2, d, err := s.DropPredicate("friend")
	if err != nil || d.String() != "drop friend: [uid] @reverse @count . [drop reverse; drop count]\n" {
		t.Fatalf("DropPredicate: %v\n%s", err, d)
	}
	if _, ok := s2.Predicate("friend"); ok {
		t.Error("friend still defined")
	}
	if ty, _ := s2.Type("P"); strings.Join(ty.Fields, " ") != "name friend" {
		t.Errorf("type P lost a field: %v", ty.Fields)
	}
	if _, ok := s.Predicate("friend"); !ok {
		t.Error("DropPredicate modified the old schema")
	}
	if s3, d, err := s2.DropPredicate("friend"); err != nil || !d.Empty() || s3 != s2 {
		t.Errorf("dropping an absent predicate: %v %s", err, d)
	}
	s4, d, err := s2.DropType("P")
	if err != nil || d.String() != "drop type P\n" {
		t.Fatalf("DropType: %v %s", err, d)
	}
	if _, ok := s4.Type("P"); ok {
		t.Error("type P still defined")
	}
	if _, _, err := s4.DropPredicate("dgraph.type"); err == nil {
		t.Error("dropped dgraph.type")
	}
	if _, _, err := s4.DropType("dgraph.graphql"); err == nil {
		t.Error("dropped a reserved type")
	}
	if got := s4.String(); got != "dgraph.type: [string] @index(exact) .\nname: string @index(term) .\n" {
		t.Errorf("final schema %q", got)
	}
}

func TestAccessorsCopy(t *testing.T) {
	s := mustParse(t, "name: string @index(exact, term) .\ntype P { name }")
	p, _ := s.Predicate("name")
	p.Index[0].Name = "mutated"
	ps := s.Predicates()
	ps[0].Index[1].Name = "mutated"
	ty, _ := s.Type("P")
	ty.Fields[0] = "mutated"
	if got := s.String(); got != "name: string @index(exact, term) .\n\ntype P {\n\tname\n}\n" {
		t.Errorf("accessor results alias the schema: %q", got)
	}
}

func TestTokenizersAndScalars(t *testing.T) {
	for s, want := range map[Scalar]string{
		String: "exact fulltext hash ngram term trigram", Int: "int", Float: "float", BigFloat: "bigfloat",
		Bool: "bool", Geo: "geo", Datetime: "day hour month year", Float32Vector: "hnsw", UID: "", Default: "", Password: "",
	} {
		if got := strings.Join(Tokenizers(s), " "); got != want {
			t.Errorf("Tokenizers(%v) = %q; want %q", s, got, want)
		}
		if back, ok := ParseScalar(strings.ToUpper(s.String())); !ok || back != s {
			t.Errorf("ParseScalar(%q) = %v, %v", s, back, ok)
		}
	}
	if _, ok := ParseScalar("varchar"); ok {
		t.Error("varchar is not a type")
	}
}
