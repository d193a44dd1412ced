package rdf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/value"
)

func iri(s string) Term    { return Term{Kind: IRI, Name: s} }
func blank(s string) Term  { return Term{Kind: Blank, Name: s} }
func uidT(u uint64) Term   { return Term{Kind: UID, UID: u} }
func uidVar(s string) Term { return Term{Kind: UIDVar, Name: s} }
func valVar(s string) Term { return Term{Kind: ValVar, Name: s} }
func str(s string) Term    { return Term{Kind: Literal, Value: value.Str(s)} }

var star = Term{Kind: Wildcard}

func typed(v value.Value, dt Datatype) Term { return Term{Kind: Literal, Value: v, Datatype: dt} }

func date(s string) value.Value {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return value.Time(t)
}

// TestParseLineConstructs covers every construct of Dgraph's N-Quads: each
// line parses to the expected quad, and the quad renders to a line that
// parses back to it.
func TestParseLineConstructs(t *testing.T) {
	q := func(s Term, p string, o Term) NQuad { return NQuad{Subject: s, Predicate: p, Object: o} }
	withLang := func(nq NQuad, l string) NQuad { nq.Lang = l; return nq }
	withLabel := func(nq NQuad, l Term) NQuad { nq.Label = l; return nq }
	withFacets := func(nq NQuad, fs ...Facet) NQuad { nq.Facets = fs; return nq }
	vec := value.ListOf(value.F64(1.5), value.F64(2), value.F64(-3))
	for _, tc := range []struct {
		name, line string
		want       NQuad
	}{
		{"iris", `<a> <b> <c> .`, q(iri("a"), "b", iri("c"))},
		{"no spaces", `<a><b><c>.`, q(iri("a"), "b", iri("c"))},
		{"tabs as in the film data", "<m.0a>\t<name>\t\"Jail Breakers\"@en\t.", withLang(q(iri("m.0a"), "name", str("Jail Breakers")), "en")},
		{"crlf", "<a> <b> <c> .\r", q(iri("a"), "b", iri("c"))},
		{"full iris", `<http://x.org/a#b> <http://www.w3.org/2000/01/rdf-schema#domain> <film> .`,
			q(iri("http://x.org/a#b"), "http://www.w3.org/2000/01/rdf-schema#domain", iri("film"))},
		{"iri escape", `<a\u0020b> <p> <x\U0001F600> .`, q(iri("a b"), "p", iri("x😀"))},
		{"at sign in object iri", `<a> <b> <c@en> .`, q(iri("a"), "b", iri("c@en"))},
		{"blank nodes", `_:alice <friend> _:bob .`, q(blank("alice"), "friend", blank("bob"))},
		{"blank with dots, final dot", `_:a.b <p> _:c.`, q(blank("a.b"), "p", blank("c"))},
		{"blank unicode", `_:ünï <p> "x" .`, q(blank("ünï"), "p", str("x"))},
		{"blank in brackets", `<_:x> <p> <_:y> .`, q(blank("x"), "p", blank("y"))},
		{"blank in brackets, no label syntax", `<_:x.> <p> <_:-y> .`, q(blank("x."), "p", blank("-y"))},
		{"label in brackets stays an iri", `<a> <p> <b> <_:g> .`, withLabel(q(iri("a"), "p", iri("b")), iri("_:g"))},
		{"hex uids", `<0x1f> <friend> <0x20> .`, q(uidT(31), "friend", uidT(32))},
		{"decimal uid", `<31> <p> "x" .`, q(uidT(31), "p", str("x"))},
		{"bare uid subject", `0x1f <p> "x" .`, q(uidT(31), "p", str("x"))},
		{"uid vars", `uid(v) <friend> uid(w) .`, q(uidVar("v"), "friend", uidVar("w"))},
		{"uid var spaces", `uid( v ) <p> val( x ) .`, q(uidVar("v"), "p", valVar("x"))},
		{"wildcard object", `<0x1> <name> * .`, q(uidT(1), "name", star)},
		{"wildcard predicate", `<0x1> * * .`, q(uidT(1), Star, star)},
		{"wildcard with lang", `<0x1> <name@en> * .`, withLang(q(uidT(1), "name", star), "en")},
		{"val var with lang", `uid(u) <name@en> val(n) .`, withLang(q(uidVar("u"), "name", valVar("n")), "en")},
		{"lang", `<a> <name> "Alice"@en .`, withLang(q(iri("a"), "name", str("Alice")), "en")},
		{"lang subtag", `<a> <name> "x"@zh-Hant .`, withLang(q(iri("a"), "name", str("x")), "zh-Hant")},
		{"predicate lang", `<a> <name@en> "x" .`, withLang(q(iri("a"), "name", str("x")), "en")},
		{"literal lang wins", `<a> <name@en> "x"@fr .`, withLang(q(iri("a"), "name", str("x")), "fr")},
		{"predicate lang typed", `<a> <n@en> "5"^^<xs:int> .`, withLang(q(iri("a"), "n", typed(value.I64(5), TypeInt)), "en")},
		{"empty literal", `<a> <b> "" .`, q(iri("a"), "b", str(""))},
		{"escapes", `<a> <b> "q\"b\\n\nt\tr\rf\fb\b\'\u00e9\U0001F600\x41" .`,
			q(iri("a"), "b", str("q\"b\\n\nt\tr\rf\fb\b'é😀A"))},
		{"xs:string", `<a> <b> ""^^<xs:string> .`, q(iri("a"), "b", typed(value.Str(""), TypeString))},
		{"xs:int", `<a> <age> "42"^^<xs:int> .`, q(iri("a"), "age", typed(value.I64(42), TypeInt))},
		{"xs:integer negative", `<a> <b> "-7"^^<xs:integer> .`, q(iri("a"), "b", typed(value.I64(-7), TypeInt))},
		{"xsd int", `<a> <b> "7"^^<http://www.w3.org/2001/XMLSchema#int> .`, q(iri("a"), "b", typed(value.I64(7), TypeInt))},
		{"xs:positiveInteger", `<a> <b> "7"^^<xs:positiveInteger> .`, q(iri("a"), "b", typed(value.I64(7), TypeInt))},
		{"xs:float", `<a> <b> "1.5"^^<xs:float> .`, q(iri("a"), "b", typed(value.F64(1.5), TypeFloat))},
		{"xs:double exp", `<a> <b> "1e3"^^<xs:double> .`, q(iri("a"), "b", typed(value.F64(1000), TypeFloat))},
		{"xs:boolean", `<a> <b> "true"^^<xs:boolean> .`, q(iri("a"), "b", typed(value.Boolean(true), TypeBool))},
		{"xs:boolean 0", `<a> <b> "0"^^<xs:boolean> .`, q(iri("a"), "b", typed(value.Boolean(false), TypeBool))},
		{"xs:dateTime", `<a> <b> "2006-01-02T15:04:05Z"^^<xs:dateTime> .`,
			q(iri("a"), "b", typed(date("2006-01-02T15:04:05Z"), TypeDatetime))},
		{"xs:dateTime zone frac", `<a> <b> "2006-01-02T15:04:05.5+02:00"^^<xs:dateTime> .`,
			q(iri("a"), "b", typed(date("2006-01-02T13:04:05.5Z"), TypeDatetime))},
		{"xs:dateTime no zone", `<a> <b> "2006-01-02T15:04:05"^^<xs:dateTime> .`,
			q(iri("a"), "b", typed(date("2006-01-02T15:04:05Z"), TypeDatetime))},
		{"xsd date", `<a> <b> "1976-06-19"^^<http://www.w3.org/2001/XMLSchema#date> .`,
			q(iri("a"), "b", typed(date("1976-06-19T00:00:00Z"), TypeDatetime))},
		{"xsd gYear", `<a> <b> "1986"^^<http://www.w3.org/2001/XMLSchema#gYear> .`,
			q(iri("a"), "b", typed(date("1986-01-01T00:00:00Z"), TypeDatetime))},
		{"xsd gYearMonth", `<a> <b> "1986-05"^^<http://www.w3.org/2001/XMLSchema#gYearMonth> .`,
			q(iri("a"), "b", typed(date("1986-05-01T00:00:00Z"), TypeDatetime))},
		{"geojson", `<a> <loc> "{'type':'Point','coordinates':[-122.4, 37.7]}"^^<geo:geojson> .`,
			q(iri("a"), "loc", typed(value.Str(`{"type":"Point","coordinates":[-122.4,37.7]}`), TypeGeo))},
		{"password", `<a> <pw> "secret1"^^<xs:password> .`, q(iri("a"), "pw", typed(value.Str("secret1"), TypePassword))},
		{"base64", `<a> <b> "aGVsbG8="^^<xs:base64Binary> .`, q(iri("a"), "b", typed(value.Str("aGVsbG8="), TypeBinary))},
		{"vector", `<a> <v> "[1.5, 2, -3]"^^<xs:[]float32> .`, q(iri("a"), "v", typed(vec, TypeVector))},
		{"dgraph.type", `_:a <dgraph.type> "Person" .`, q(blank("a"), PredType, str("Person"))},
		{"label iri", `<a> <b> <c> <g> .`, withLabel(q(iri("a"), "b", iri("c")), iri("g"))},
		{"label blank", `<a> <b> "x" _:g .`, withLabel(q(iri("a"), "b", str("x")), blank("g"))},
		{"label namespace", `<a> <b> <c> <0x2> .`, withLabel(q(iri("a"), "b", iri("c")), iri("0x2"))},
		{"facets typed", `<a> <b> <c> (since=2006-01-02T15:04:05, w=0.5, close=true, n=12, note="hi, there", empty=, hex=0x10, d=2006-01-02, neg=-3) .`,
			withFacets(q(iri("a"), "b", iri("c")),
				Facet{"close", value.Boolean(true)}, Facet{"d", date("2006-01-02T00:00:00Z")},
				Facet{"empty", value.Str("")}, Facet{"hex", value.I64(16)}, Facet{"n", value.I64(12)},
				Facet{"neg", value.I64(-3)}, Facet{"note", value.Str("hi, there")},
				Facet{"since", date("2006-01-02T15:04:05Z")}, Facet{"w", value.F64(0.5)})},
		{"facets spaced", `<a> <b> "x"@en ( k = "v" , j=1 ) .`,
			withFacets(withLang(q(iri("a"), "b", str("x")), "en"), Facet{"j", value.I64(1)}, Facet{"k", value.Str("v")})},
		{"facets after label", `<a> <b> <c> <g> (k=1) .`,
			withFacets(withLabel(q(iri("a"), "b", iri("c")), iri("g")), Facet{"k", value.I64(1)})},
		{"facet quoted escapes", `<a> <b> <c> (k="a\"b") .`, withFacets(q(iri("a"), "b", iri("c")), Facet{"k", value.Str(`a"b`)})},
		{"comment after dot", `<a> <b> <c> . # why`, q(iri("a"), "b", iri("c"))},
		{"trailing spaces", "  <a> <b> <c> .  \t", q(iri("a"), "b", iri("c"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ParseLine(tc.line)
			if err != nil || !ok {
				t.Fatalf("ParseLine(%q) = ok %v, err %v", tc.line, ok, err)
			}
			if !got.Equal(tc.want) {
				t.Fatalf("ParseLine(%q)\n got %s\nwant %s", tc.line, got, tc.want)
			}
			back, ok, err := ParseLine(got.String())
			if err != nil || !ok || !back.Equal(got) {
				t.Fatalf("round trip of %q: %q -> ok %v err %v %s", tc.line, got.String(), ok, err, back)
			}
		})
	}
}

func TestParseLineSkips(t *testing.T) {
	for _, line := range []string{"", "   ", "\t", "# comment", "   # indented <a> <b> <c> .", "\r"} {
		nq, ok, err := ParseLine(line)
		if err != nil || ok {
			t.Errorf("ParseLine(%q) = %v, ok %v, err %v; want a skip", line, nq, ok, err)
		}
	}
}

// TestParseLineErrors covers every error: the message names the problem and
// the column points at it.
func TestParseLineErrors(t *testing.T) {
	for _, tc := range []struct {
		line string
		col  int
		kind error
		msg  string
	}{
		{`<a> <b>`, 8, ErrSyntax, "expected an object"},
		{`<a> <b> <c>`, 12, ErrSyntax, "expected '.'"},
		{`<a> <b> <c> <d> <e> .`, 17, ErrSyntax, "expected '.', a label or facets"},
		{`<a> <b> <c> . <d>`, 15, ErrSyntax, "after '.'"},
		{`<a <b> <c> .`, 3, ErrSyntax, "not allowed in an IRI"},
		{`<a> <b> <c d> .`, 11, ErrSyntax, "not allowed in an IRI"},
		{`<a> <b> <c`, 9, ErrSyntax, "unterminated IRI"},
		{`<> <b> <c> .`, 1, ErrSyntax, "empty IRI"},
		{`<a\n> <b> <c> .`, 3, ErrSyntax, `only \u and \U`},
		{`<a\u12> <b> <c> .`, 3, ErrSyntax, "hex digits"},
		{`<-> <b> <c> .`, 1, ErrSyntax, "no letter or digit"},
		{`<a> <-> <c> .`, 5, ErrSyntax, "no letter or digit"},
		{`_a <b> <c> .`, 1, ErrSyntax, "expected _:"},
		{`_: <b> <c> .`, 3, ErrSyntax, "cannot start with"},
		{`_:_ <b> <c> .`, 1, ErrSyntax, "no letter or digit"},
		{`"s" <b> <c> .`, 1, ErrSyntax, "expected a subject"},
		{`* <b> * .`, 1, ErrSyntax, "subject cannot be *"},
		{`<0x0> <b> <c> .`, 1, ErrSyntax, "uid 0"},
		{`0xZZ <b> <c> .`, 1, ErrSyntax, "bad uid"},
		{`0 <b> <c> .`, 1, ErrSyntax, "uid 0"},
		{`<a> _:b <c> .`, 5, ErrSyntax, "expected a predicate"},
		{`<a> <name@> "x" .`, 5, ErrSyntax, "bad language"},
		{`<a> <a@b@en> "x" .`, 5, ErrSyntax, "has an '@'"},
		{`<a> <@en> "x" .`, 5, ErrSyntax, "has an '@'"},
		{`<a> <name@en> <c> .`, 15, ErrSyntax, "language @en on a iri object"},
		{`<a> <name@en> uid(v) .`, 15, ErrSyntax, "language @en on a uid-var object"},
		{`<a> * <c> .`, 7, ErrSyntax, "* predicate needs a * object"},
		{`<a> <dgraph.type> <Person> .`, 19, ErrSyntax, "type name literal"},
		{`<a> <b> "x .`, 9, ErrSyntax, "unterminated literal"},
		{`<a> <b> "x\q" .`, 11, ErrSyntax, `invalid escape \q`},
		{`<a> <b> "x\" .`, 9, ErrSyntax, "unterminated literal"},
		{`<a> <b> "\u12" .`, 10, ErrSyntax, "hex digits"},
		{`<a> <b> "\uD800" .`, 10, ErrSyntax, "not a Unicode scalar value"},
		{`<a> <b> "\U00110000" .`, 10, ErrSyntax, "not a Unicode scalar value"},
		{`<a> <b> "\xff" .`, 10, ErrSyntax, "not an ASCII escape"},
		{`<a> <b> "\` + "\xff" + `" .`, 11, ErrSyntax, "invalid UTF-8"},
		{`<a> <b> "x"@ .`, 12, ErrSyntax, "bad language tag"},
		{`<a> <b> "x"@en- .`, 12, ErrSyntax, "bad language tag"},
		{`<a> <b> "x"@1a .`, 12, ErrSyntax, "bad language tag"},
		{`<a> <b> "x"@en^^<xs:string> .`, 15, ErrSyntax, "expected '.'"},
		{`<a> <b> "x"^^xs:int .`, 14, ErrSyntax, "expected <datatype>"},
		{`<a> <b> "x"^^<xs:foo> .`, 14, ErrSyntax, "unknown datatype <xs:foo>"},
		{`<a> <b> "x"^^<xs:int> .`, 9, ErrValue, `int "x"`},
		{`<a> <b> "1.5"^^<xs:int> .`, 9, ErrValue, "int"},
		{`<a> <b> ""^^<xs:int> .`, 9, ErrValue, "empty int"},
		{`<a> <b> "99999999999999999999"^^<xs:int> .`, 9, ErrRange, "int"},
		{`<a> <b> "NaN"^^<xs:float> .`, 9, ErrValue, "not finite"},
		{`<a> <b> "1e999"^^<xs:double> .`, 9, ErrRange, "float"},
		{`<a> <b> "yes"^^<xs:boolean> .`, 9, ErrValue, "bool"},
		{`<a> <b> "2006-13-01"^^<xs:date> .`, 9, ErrValue, "datetime"},
		{`<a> <b> "0214-02-28"^^<xs:date> .`, 9, ErrRange, "outside"},
		{`<a> <b> "abc"^^<xs:password> .`, 9, ErrValue, "password"},
		{`<a> <b> "!!"^^<xs:base64Binary> .`, 9, ErrValue, "base64"},
		{`<a> <b> "{'type':'Blob'}"^^<geo:geojson> .`, 9, ErrValue, "not a geometry"},
		{`<a> <b> "{'type':'Point'}"^^<geo:geojson> .`, 9, ErrValue, "without coordinates"},
		{`<a> <b> "[1, x]"^^<xs:[]float32> .`, 9, ErrValue, "vector element"},
		{`<a> <b> "[]"^^<xs:[]float32> .`, 9, ErrValue, "vector of 0"},
		{`<a> <b> 42 .`, 9, ErrSyntax, "expected an object"},
		{`<a> <b> value(x) .`, 12, ErrSyntax, "expected '(' after val"},
		{`<a> <b> u .`, 9, ErrSyntax, "expected uid(...)"},
		{`<a> <b> <\U0001F600> .`, 9, ErrSyntax, "no letter or digit"},
		{`uid(v <b> <c> .`, 7, ErrSyntax, "expected ')'"},
		{`uid() <b> <c> .`, 5, ErrSyntax, "empty variable name"},
		{`uid v <b> <c> .`, 5, ErrSyntax, "expected '('"},
		{`<a> <b> <c> (k=v) .`, 16, ErrValue, "no int, float, bool or datetime"},
		{`<a> <b> <c> (k=1, k=2) .`, 13, ErrSyntax, `facet key "k" repeated`},
		{`<a> <b> <c> () .`, 14, ErrSyntax, "expected a facet key"},
		{`<a> <b> <c> (k=1,) .`, 18, ErrSyntax, "expected a facet key"},
		{`<a> <b> <c> (=1) .`, 14, ErrSyntax, "expected a facet key"},
		{`<a> <b> <c> (k 1) .`, 16, ErrSyntax, "expected '='"},
		{`<a> <b> <c> (k=1 .`, 18, ErrSyntax, "expected ',' or ')'"},
		{`<a> <b> <c> (k=1`, 13, ErrSyntax, "unterminated facets"},
		{`<a> <b> <c> (k="x) .`, 16, ErrSyntax, "unterminated literal"},
		{`<a> <b> <c> (k=99999999999999999999) .`, 16, ErrRange, "facet integer"},
		{`<a> <b> <c> (k=NaN) .`, 16, ErrValue, "not finite"},
		{`<a> <b> <c> (k=1) <g> .`, 19, ErrSyntax, "expected '.'"},
		{`<a> <日本> "x .`, 10, ErrSyntax, "unterminated literal"},
		{"<a> <b> \"\xff\" .", 10, ErrSyntax, "invalid UTF-8"},
	} {
		_, ok, err := ParseLine(tc.line)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("ParseLine(%q) = ok %v, err %v; want an *Error", tc.line, ok, err)
			continue
		}
		if pe.Line != 1 || pe.Col != tc.col || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseLine(%q) error %q (col %d); want col %d, %v, containing %q",
				tc.line, err, pe.Col, tc.col, tc.kind, tc.msg)
		}
		if !strings.HasPrefix(err.Error(), "rdf: line 1 col ") {
			t.Errorf("error %q lacks the position prefix", err)
		}
	}
}

func TestParseBlockLineNumbers(t *testing.T) {
	text := "# mutation\n_:a <name> \"A\" .\n\n_:a <friend> _:b .\n_:b <age> \"x\"^^<xs:int> .\n"
	_, err := Parse(text)
	if err == nil || !strings.HasPrefix(err.Error(), "rdf: line 5 col 11: ") {
		t.Fatalf("Parse error = %v; want it at line 5 col 11", err)
	}
	nqs, err := Parse(text[:strings.LastIndex(text, "_:b")])
	if err != nil || len(nqs) != 2 || nqs[1].Object.Name != "b" {
		t.Fatalf("Parse = %v, %v", nqs, err)
	}
}

func TestNamespace(t *testing.T) {
	for _, tc := range []struct {
		line string
		ns   uint64
		ok   bool
	}{
		{`<a> <b> <c> <0x2> .`, 2, true},
		{`<a> <b> <c> <10> .`, 10, true},
		{`<a> <b> <c> <0> .`, 0, true},
		{`<a> <b> <c> <g> .`, 0, false},
		{`<a> <b> <c> _:g .`, 0, false},
		{`<a> <b> <c> .`, 0, false},
	} {
		nq, _, err := ParseLine(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		if ns, ok := nq.Namespace(); ns != tc.ns || ok != tc.ok {
			t.Errorf("%q: Namespace() = %d, %v; want %d, %v", tc.line, ns, ok, tc.ns, tc.ok)
		}
	}
}

// TestStringCanonical pins the rendering: one space between terms, uids in
// hex, short datatype IRIs, facets sorted, a language on the predicate when
// the object cannot carry it.
func TestStringCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"<a>\t<b>\t<c>\t.": `<a> <b> <c> .`,
		`<31> <b> "1"^^<http://www.w3.org/2001/XMLSchema#int> .`: `<0x1f> <b> "1"^^<xs:int> .`,
		`_:x <b> "a\u0022\u000A" .`:                              `_:x <b> "a\"\n" .`,
		`<a> <b@en> * .`:                                         `<a> <b@en> * .`,
		`<a> <b@en> "1"^^<xs:int> .`:                             `<a> <b@en> "1"^^<xs:int> .`,
		`<a> <b> <c> (z=1.0, a="s", m=2006) .`:                   `<a> <b> <c> (a="s", m=2006, z=1.0) .`,
		`<a\u0020b> <b> "x" <g> .`:                               `<a\u0020b> <b> "x" <g> .`,
		`<a> <b> "2006"^^<xs:dateTime> .`:                        `<a> <b> "2006-01-01T00:00:00Z"^^<xs:dateTime> .`,
		`<a> <b> "[1,2]"^^<xs:[]float32> .`:                      `<a> <b> "[1, 2]"^^<xs:[]float32> .`,
	} {
		nq, _, err := ParseLine(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := nq.String(); got != want {
			t.Errorf("String of %q = %q; want %q", in, got, want)
		}
	}
}
