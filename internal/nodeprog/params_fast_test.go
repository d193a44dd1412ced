package nodeprog

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

// fastAll has every kind the fast path sets, an embedded struct, a field
// that only encoding/json may set, and a quoted-number field.
type fastEmbedded struct {
	Node  string `json:"node"`
	Depth int8   `json:"depth"`
}

type fastAll struct {
	fastEmbedded
	S      string   `json:"s"`
	B      bool     `json:"b"`
	PB     *bool    `json:"pb"`
	I      int      `json:"i"`
	I16    int16    `json:"i16"`
	U8     uint8    `json:"u8"`
	F      float64  `json:"f"`
	F32    float32  `json:"f32"`
	PI     *int     `json:"pi"`
	List   []string `json:"list"`
	Quoted int      `json:"q,string"`
	Depth  int      `json:"d2"`
	hidden int
}

// decodeBoth runs the fast path and encoding/json (as DecodeParams does) on
// a fresh T each; when the fast path answers, encoding/json must accept the
// input and give the same value.
func decodeBoth[T any](t *testing.T, raw []byte) (fast bool) {
	t.Helper()
	var a, b T
	if !fastDecode(raw, &a) {
		if !reflect.DeepEqual(a, *new(T)) {
			t.Fatalf("%q: the fast path declined but left %+v", raw, a)
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("%q: the fast path accepted what encoding/json rejects: %v", raw, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("%q: the fast path accepted trailing data", raw)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%q: fast %+v, encoding/json %+v", raw, a, b)
	}
	return true
}

var fastSeeds = []string{
	`{"node":"v17","limit":50}`, `{"node":"v1","edges":false}`, `{}`, ` { "node" : "a b" } `,
	`{"node":"v1","nbrs":["x"]}`, `{"Node":"v1"}`, `{"node":"v\u0031"}`, `{"node":"é"}`, `{"node":null}`,
	`{"limit":1.5}`, `{"limit":-3}`, `{"limit":1e3}`, `{"limit":99999999999999999999}`, `{"limit":01}`,
	`{"node":"x",}`, `{"node":"x"} x`, `{"with_props":true}`, `{"with_props":"true"}`, `{"nope":1}`,
	`{"node":"a","node":"b"}`, `{"s":"x","b":true,"pb":false,"i":-0,"i16":32767,"u8":255,"f":-1.5e-3,"f32":3.4e38,"pi":7}`,
	`{"i16":32768}`, `{"u8":-1}`, `{"f32":1e39}`, `{"q":"5"}`, `{"depth":3,"d2":4}`, `{"hidden":1}`,
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds {
		for _, f := range []func(*testing.T, []byte) bool{decodeBoth[getEdgesParams], decodeBoth[getNodeParams], decodeBoth[fastAll]} {
			if f(t, []byte(s)) {
				fast++
			}
		}
	}
	// The common shapes must take the fast path, or it is dead code.
	for _, s := range []string{`{"node":"v17","limit":50}`, `{"node":"v1","edges":false}`} {
		var p getEdgesParams
		var n getNodeParams
		if !fastDecode([]byte(s), &p) && !fastDecode([]byte(s), &n) {
			t.Errorf("%s did not take the fast path", s)
		}
	}
	if fast < 10 {
		t.Fatalf("only %d decodes took the fast path", fast)
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' {
			return
		}
		decodeBoth[getEdgesParams](t, raw)
		decodeBoth[getNodeParams](t, raw)
		decodeBoth[fastAll](t, raw)
	})
}
