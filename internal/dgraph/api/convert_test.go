package api

import (
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/rdf"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

func TestConvertNQuad(t *testing.T) {
	for _, tc := range []struct {
		in   *pb.NQuad
		want string // rdf.NQuad.String()
	}{
		{&pb.NQuad{Subject: "_:a", Predicate: "name", ObjectValue: &pb.Value{Val: &pb.Value_StrVal{StrVal: "Ann"}}}, `_:a <name> "Ann"^^<xs:string> .`},
		{&pb.NQuad{Subject: "0x1f", Predicate: "age", ObjectValue: &pb.Value{Val: &pb.Value_IntVal{IntVal: 7}}}, `<0x1f> <age> "7"^^<xs:int> .`},
		{&pb.NQuad{Subject: "uid(v)", Predicate: "friend", ObjectId: "_:b"}, `uid(v) <friend> _:b .`},
		{&pb.NQuad{Subject: "m.0abc", Predicate: "name", Lang: "en", ObjectValue: &pb.Value{Val: &pb.Value_DefaultVal{DefaultVal: "x"}}}, `<m.0abc> <name> "x"@en .`},
		{&pb.NQuad{Subject: "0x1", Predicate: starAll, ObjectValue: &pb.Value{Val: &pb.Value_DefaultVal{DefaultVal: starAll}}}, `<0x1> * * .`},
	} {
		got, err := convertNQuad(tc.in)
		if err != nil {
			t.Errorf("%v: %v", tc.in, err)
			continue
		}
		if s := got.String(); s != tc.want {
			t.Errorf("%v: got %s, want %s", tc.in, s, tc.want)
		}
	}
	_, err := convertNQuad(&pb.NQuad{Subject: "_:a", Predicate: "p"})
	if !errors.Is(err, dgraph.ErrInvalid) {
		t.Errorf("no object: %v, want ErrInvalid", err)
	}
	_, err = convertNQuad(&pb.NQuad{Subject: "_:a", Predicate: "p", ObjectValue: &pb.Value{Val: &pb.Value_GeoVal{GeoVal: []byte{1}}}})
	if !errors.Is(err, dgraph.ErrUnsupported) {
		t.Errorf("geo: %v, want ErrUnsupported", err)
	}
}

// JSON objects without "uid" get blank nodes that stay distinct across the
// mutations of one request.
func TestConvertMutationJSONBlanksPerMutation(t *testing.T) {
	var got []string
	for i := 0; i < 2; i++ {
		m, err := convertMutation(&pb.Mutation{SetJson: []byte(`{"name": "n"}`), Cond: "@if(eq(len(v), 0))"}, i)
		if err != nil {
			t.Fatal(err)
		}
		if m.Cond == nil || len(m.Set) != 1 || m.Set[0].Subject.Kind != rdf.Blank {
			t.Fatalf("mutation %d: %+v", i, m)
		}
		got = append(got, m.Set[0].Subject.Name)
	}
	if got[0] == got[1] {
		t.Fatalf("blank nodes %v collide", got)
	}
	if _, err := convertMutation(&pb.Mutation{SetNquads: []byte(`_:a <name> "unterminated .`)}, 0); err == nil {
		t.Fatal("bad N-Quads accepted")
	}
}

func TestLooksLikeMutation(t *testing.T) {
	for text, want := range map[string]bool{
		`{ set { _:a <n> "x" . } }`:          true,
		"{\n  delete {\n <0x1> * * .\n }\n}": true,
		`{set{ _:a <n> "x" . }}`:             true,
		`upsert { query { v as var(func: has(n)) } mutation { set { uid(v) <n> "y" . } } }`: true,
		`{ q(func: has(n)) { n } }`:                        false,
		`query q($a: string) { q(func: eq(n, $a)) { n } }`: false,
		`{ set(func: has(n)) { n } }`:                      false,
		``:                                                 false,
	} {
		if got := looksLikeMutation(text); got != want {
			t.Errorf("looksLikeMutation(%q) = %v, want %v", text, got, want)
		}
	}
}

// FuzzVerifyToken: no token text makes verification panic or succeed
// without the secret's signature.
func FuzzVerifyToken(f *testing.F) {
	a := &acl{enabled: true, secret: testSecret, now: (&clock{}).now}
	tok, err := a.sign(claims{UserID: "u", Exp: 1 << 40, Kind: kindAccess})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tok)
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := a.verify(s, kindAccess)
		// Only the seed's content is signed: anything accepted carries it.
		if err == nil && (c.UserID != "u" || c.Exp != 1<<40 || c.Kind != kindAccess) {
			t.Fatalf("accepted %q with claims %+v", s, c)
		}
	})
}

// FuzzConvertMutation: wire mutations never panic the conversion.
func FuzzConvertMutation(f *testing.F) {
	f.Add([]byte(`{"name":"x","friend":{"uid":"_:b"}}`), []byte(`_:a <name> "x" .`), "@if(eq(len(v), 0))")
	f.Add([]byte(`[]`), []byte(`<0x1> * * .`), "")
	f.Fuzz(func(t *testing.T, js, nq []byte, cond string) {
		_, _ = convertMutation(&pb.Mutation{SetJson: js, DelNquads: nq, Cond: cond}, 1)
	})
}
