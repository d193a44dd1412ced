package value

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func genValue(depth int) *rapid.Generator[Value] {
	return rapid.Custom(func(t *rapid.T) Value {
		k := rapid.IntRange(0, 6).Draw(t, "kind")
		if depth >= 3 && k == 6 {
			k = 1
		}
		switch Kind(k) {
		case String:
			return Str(rapid.String().Draw(t, "s"))
		case Int:
			return I64(rapid.Int64().Draw(t, "i"))
		case Float:
			f := rapid.Float64().Draw(t, "f")
			if math.IsNaN(f) || math.IsInf(f, 0) {
				f = 0.5
			}
			return F64(f)
		case Bool:
			return Boolean(rapid.Bool().Draw(t, "b"))
		case Datetime:
			return Time(time.Unix(0, rapid.Int64().Draw(t, "ns")))
		case List:
			return ListOf(rapid.SliceOfN(genValue(depth+1), 0, 4).Draw(t, "l")...)
		}
		return Value{}
	})
}

func TestBinaryAndJSONRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(0).Draw(t, "v")
		got, rest, err := Decode(Append(nil, v))
		if err != nil || len(rest) != 0 || !sameValue(got, v) {
			t.Fatalf("binary: %v -> %v (%v, rest %d)", v, got, err, len(rest))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("json %s: %v", b, err)
		}
		if !sameValue(back, v) {
			t.Fatalf("json: %v -> %s -> %v", v, b, back)
		}
	})
}

// sameValue is identity of kind and content (Equal treats 1 and 1.0 as equal).
func sameValue(a, b Value) bool {
	if a.kind != b.kind || a.s != b.s || a.n != b.n || len(a.list) != len(b.list) {
		return false
	}
	for i := range a.list {
		if !sameValue(a.list[i], b.list[i]) {
			return false
		}
	}
	return true
}

func TestCompare(t *testing.T) {
	cases := []struct {
		a, b Value
		c    int
		ok   bool
	}{
		{I64(1), I64(2), -1, true},
		{I64(2), F64(1.5), 1, true},
		{F64(2), I64(2), 0, true},
		{Str("a"), Str("b"), -1, true},
		{Str("1"), I64(1), 0, false},
		{Boolean(false), Boolean(true), -1, true},
		{Value{}, Value{}, 0, false},
		{ListOf(I64(1)), ListOf(I64(1), I64(0)), -1, true},
		{Time(time.Unix(5, 0)), Time(time.Unix(4, 0)), 1, true},
	}
	for _, c := range cases {
		got, ok := Compare(c.a, c.b)
		if got != c.c || ok != c.ok {
			t.Errorf("Compare(%v, %v) = %d,%v want %d,%v", c.a, c.b, got, ok, c.c, c.ok)
		}
	}
}

func TestJSONForms(t *testing.T) {
	b, _ := json.Marshal([]Value{I64(3), F64(3), Str("x"), Time(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))})
	want := `[3,3.0,"x",{"$datetime":"2024-01-02T03:04:05Z"}]`
	if string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	for _, bad := range []string{`{"a":1}`, `{"$datetime":"yesterday"}`} {
		var v Value
		if err := json.Unmarshal([]byte(bad), &v); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", bad, err)
		}
	}
	if _, err := json.Marshal(F64(math.Inf(1))); err == nil {
		t.Error("Inf marshalled")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Append(nil, ListOf(Str("a"), I64(-3), F64(2.5))))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, rest, err := Decode(b)
		if err != nil {
			return
		}
		enc := Append(nil, v)
		if string(enc) != string(b[:len(b)-len(rest)]) {
			t.Fatalf("not canonical: %x -> %v -> %x", b, v, enc)
		}
	})
}
