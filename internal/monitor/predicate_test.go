package monitor

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// §V, Fig. 3: ¬P ≡ (x1 = 1 ∧ y1 = 1) ∨ z2 = 1, typed semilinear, in both formats.
const fig3JSON = `{"servers": 3, "predicates": [{"name": "fig3", "type": "semilinear", "clauses": [
  {"id": 0, "vars": [{"server": 1, "key": "x", "value": 1}, {"server": 1, "key": "y", "value": "1"}]},
  {"id": 1, "vars": [{"server": 2, "key": "z", "value": 1}]}]}]}`

const fig3YAML = `
servers: 3
predicates:
  - name: fig3
    type: semilinear
    clauses:
      - id: 0
        vars:
          - {server: 1, key: x, value: 1}
          - {server: 1, key: y, value: "1"}
      - id: 1
        vars:
          - server: 2
            key: z
            value: 1.0
`

func TestParseFigure3(t *testing.T) {
	want := []Predicate{{Name: "fig3", Type: Semilinear, Clauses: []Clause{
		{ID: "0", Literals: []Literal{{Server: 1, Key: "x", Value: "1"}, {Server: 1, Key: "y", Value: "1"}}},
		{ID: "1", Literals: []Literal{{Server: 2, Key: "z", Value: "1"}}},
	}}}
	for name, parse := range map[string]func() (*Spec, error){
		"json": func() (*Spec, error) { return ParseJSON([]byte(fig3JSON)) },
		"yaml": func() (*Spec, error) { return ParseYAML([]byte(fig3YAML)) },
	} {
		s, err := parse()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Servers != 3 || !reflect.DeepEqual(s.Predicates, want) {
			t.Fatalf("%s: parsed %+v", name, s.Predicates)
		}
		if got := s.Keys(0, 1); !reflect.DeepEqual(got, []string{"x", "y"}) {
			t.Fatalf("%s: keys on server 1: %v", name, got)
		}
		if got := s.ServersOf(0); !reflect.DeepEqual(got, []int{1, 2}) {
			t.Fatalf("%s: servers: %v", name, got)
		}
	}
}

func TestSpecValidateErrors(t *testing.T) {
	lit := func(server int, key, value string) Literal { return Literal{Server: server, Key: key, Value: value} }
	one := func(ls ...Literal) []Clause { return []Clause{{Literals: ls}} }
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"no servers", Spec{Predicates: []Predicate{{Name: "p", Type: Conjunctive, Clauses: one(lit(0, "x", "1"))}}}, "servers 0"},
		{"no predicates", Spec{Servers: 1}, "0 predicates"},
		{"unnamed", Spec{Servers: 1, Predicates: []Predicate{{Type: Conjunctive, Clauses: one(lit(0, "x", "1"))}}}, "no name"},
		{"duplicate", Spec{Servers: 1, Predicates: []Predicate{
			{Name: "p", Type: Conjunctive, Clauses: one(lit(0, "x", "1"))},
			{Name: "p", Type: Conjunctive, Clauses: one(lit(0, "x", "1"))}}}, "both named"},
		{"type", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: 9, Clauses: one(lit(0, "x", "1"))}}}, "unknown type"},
		{"no clauses", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Semilinear}}}, "0 clauses"},
		{"empty clause", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Semilinear, Clauses: []Clause{{}}}}}, "0 literals"},
		{"server range", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Conjunctive, Clauses: one(lit(1, "x", "1"))}}}, "server 1 not in"},
		{"empty key", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Conjunctive, Clauses: one(lit(0, "", "1"))}}}, "empty key"},
		{"contradiction", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Conjunctive,
			Clauses: one(lit(0, "x", "1"), lit(0, "x", "2"))}}}, "can never hold"},
		{"eq and ne", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Conjunctive,
			Clauses: one(lit(0, "x", "1"), Literal{Server: 0, Key: "x", Op: Ne, Value: "1"})}}}, "contradicts"},
		{"conjunctive with two clauses", Spec{Servers: 1, Predicates: []Predicate{{Name: "p", Type: Conjunctive,
			Clauses: []Clause{{Literals: []Literal{lit(0, "x", "1")}}, {Literals: []Literal{lit(0, "y", "1")}}}}}}, "typed conjunctive"},
		{"linear, servers differ", Spec{Servers: 2, Predicates: []Predicate{{Name: "p", Type: Linear,
			Clauses: []Clause{{Literals: []Literal{lit(0, "x", "1"), lit(1, "x", "1")}}, {Literals: []Literal{lit(0, "y", "1")}}}}}}, "names the same servers"},
		{"linear, not a product", Spec{Servers: 2, Predicates: []Predicate{{Name: "p", Type: Linear, Clauses: []Clause{
			{Literals: []Literal{lit(0, "x", "1"), lit(1, "x", "1")}},
			{Literals: []Literal{lit(0, "x", "2"), lit(1, "x", "2")}}}}}}, "not all the 4 combinations"},
	} {
		err := tc.spec.Validate()
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want ErrSpec mentioning %q", tc.name, err, tc.want)
		}
	}
	product := Spec{Servers: 2, Predicates: []Predicate{{Name: "p", Type: Linear, Clauses: []Clause{
		{Literals: []Literal{lit(0, "x", "1"), lit(1, "x", "1")}}, {Literals: []Literal{lit(0, "x", "2"), lit(1, "x", "1")}},
		{Literals: []Literal{lit(1, "x", "2"), lit(0, "x", "1")}}, {Literals: []Literal{lit(0, "x", "2"), lit(1, "x", "2")}}}}}}
	if err := product.Validate(); err != nil {
		t.Errorf("(x0=1 ∨ x0=2) ∧ (x1=1 ∨ x1=2) written out: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	ok := `{"servers": 1, "predicates": [{"name": "p", "type": "conjunctive", "clauses": [{"vars": [%s]}]}]}`
	for name, doc := range map[string]string{
		"unknown field":  `{"servers": 1, "predicate": []}`,
		"missing server": strings.Replace(ok, "%s", `{"key": "x", "value": 1}`, 1),
		"missing key":    strings.Replace(ok, "%s", `{"server": 0, "value": 1}`, 1),
		"missing value":  strings.Replace(ok, "%s", `{"server": 0, "key": "x"}`, 1),
		"null value":     strings.Replace(ok, "%s", `{"server": 0, "key": "x", "value": null}`, 1),
		"object value":   strings.Replace(ok, "%s", `{"server": 0, "key": "x", "value": {}}`, 1),
		"bad op":         strings.Replace(ok, "%s", `{"server": 0, "key": "x", "op": "lt", "value": 1}`, 1),
		"bad type":       strings.Replace(strings.Replace(ok, "%s", `{"server": 0, "key": "x", "value": 1}`, 1), "conjunctive", "cubic", 1),
		"trailing":       strings.Replace(ok, "%s", `{"server": 0, "key": "x", "value": 1}`, 1) + "{}",
	} {
		if _, err := ParseJSON([]byte(doc)); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: ParseJSON = %v, want ErrSpec", name, err)
		}
	}
	for name, doc := range map[string]string{
		"two documents":   fig3YAML + "\n---\nservers: 1\n",
		"non-string keys": "servers: 1\npredicates:\n  - {1: 2}\n",
		"empty":           "",
		"not yaml":        "servers: [1\n",
	} {
		if _, err := ParseYAML([]byte(doc)); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: ParseYAML = %v, want ErrSpec", name, err)
		}
	}
}

// MarshalJSON writes what ParseJSON reads back unchanged.
func TestSpecJSONRoundTrip(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := genSpec(rng, 1+rng.IntN(4))
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseJSON(b)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, b, err)
		}
		if back.Servers != s.Servers || !reflect.DeepEqual(back.Predicates, s.Predicates) {
			t.Fatalf("seed %d: %s came back as %+v", seed, b, back.Predicates)
		}
	}
}

// FuzzParseSpec: neither parser panics; errors wrap ErrSpec; what they accept
// is valid and survives MarshalJSON and ParseJSON unchanged.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(fig3JSON), false)
	f.Add([]byte(fig3YAML), true)
	f.Fuzz(func(t *testing.T, data []byte, isYAML bool) {
		parse := ParseJSON
		if isYAML {
			parse = ParseYAML
		}
		s, err := parse(data)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("error %v does not wrap ErrSpec", err)
			}
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseJSON(b)
		if err != nil || back.Servers != s.Servers || !reflect.DeepEqual(back.Predicates, s.Predicates) {
			t.Fatalf("%q parsed, but its JSON %s does not round-trip: %v", data, b, err)
		}
	})
}
