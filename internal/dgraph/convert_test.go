package dgraph

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

func TestConvert(t *testing.T) {
	lit := func(s string) rdf.Term { return rdf.Term{Kind: rdf.Literal, Value: value.Str(s)} }
	typed := func(v value.Value, dt rdf.Datatype) rdf.Term {
		return rdf.Term{Kind: rdf.Literal, Value: v, Datatype: dt}
	}
	day := time.Date(2006, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   rdf.Term
		to   schema.Scalar
		want value.Value
		err  bool
	}{
		{lit("42"), schema.Int, value.I64(42), false},
		{lit(" 42"), schema.Int, value.Value{}, true},
		{lit("4.5"), schema.Int, value.Value{}, true},
		{lit("4.5"), schema.Float, value.F64(4.5), false},
		{lit("NaN"), schema.Float, value.Value{}, true},
		{lit("true"), schema.Bool, value.Boolean(true), false},
		{lit("2006-01-02"), schema.Datetime, value.Time(day), false},
		{lit("1200-01-01"), schema.Datetime, value.Value{}, true},
		{lit("x"), schema.Default, value.Str("x"), false},
		{lit("x"), schema.UID, value.Value{}, true},
		{typed(value.I64(3), rdf.TypeInt), schema.Default, value.I64(3), false},
		{typed(value.I64(3), rdf.TypeInt), schema.Float, value.F64(3), false},
		{typed(value.I64(3), rdf.TypeInt), schema.String, value.Str("3"), false},
		{typed(value.F64(-3.9), rdf.TypeFloat), schema.Int, value.I64(-3), false},
		{typed(value.F64(1e300), rdf.TypeFloat), schema.Int, value.Value{}, true},
		{typed(value.Boolean(true), rdf.TypeBool), schema.Int, value.I64(1), false},
		{typed(value.Time(day), rdf.TypeDatetime), schema.Int, value.I64(day.Unix()), false},
		{typed(value.I64(day.Unix()), rdf.TypeInt), schema.Datetime, value.Time(day), false},
		{typed(value.Boolean(true), rdf.TypeBool), schema.Datetime, value.Value{}, true},
		{lit(`{'type':'Point','coordinates':[1,2]}`), schema.Geo, value.Str(`{"type":"Point","coordinates":[1,2]}`), false},
		{lit("[1, 2.5]"), schema.Float32Vector, value.ListOf(value.F64(1), value.F64(2.5)), false},
		{lit("1.5"), schema.BigFloat, value.Value{}, true},
	} {
		got, err := convertLiteral(c.in, c.to)
		switch {
		case c.err && err == nil:
			t.Errorf("%v to %s: %v, want an error", c.in.Value, c.to, got)
		case c.err && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported):
			t.Errorf("%v to %s: error %v is not ErrInvalid/ErrUnsupported", c.in.Value, c.to, err)
		case !c.err && (err != nil || !sameValue(got, c.want)):
			t.Errorf("%v to %s: %v %v, want %v", c.in.Value, c.to, got, err, c.want)
		}
	}
	pw, err := convertLiteral(lit("secret1"), schema.Password)
	if err != nil || !CheckPassword(pw.Str(), "secret1") || CheckPassword(pw.Str(), "secret2") || strings.Contains(pw.Str(), "secret1") {
		t.Fatalf("password %q %v", pw.Str(), err)
	}
	if _, err := convertLiteral(lit("short"), schema.Password); !errors.Is(err, ErrInvalid) {
		t.Errorf("short password: %v", err)
	}
}

func TestNames(t *testing.T) {
	for _, u := range []uint64{1, 0x1f, 1 << 63} {
		if got, ok := UIDOfHandle(FormatUID(u)); !ok || got != u {
			t.Errorf("uid %d round trip: %d %v", u, got, ok)
		}
	}
	for _, h := range []string{"0x", "0x01f", "0X1f", "0x1F", "31", "0x1g", "0x10000000000000000"} {
		if _, ok := UIDOfHandle(h); ok {
			t.Errorf("%q read as a uid handle", h)
		}
	}
	if p, u, ok := ParseEdgeHandle(EdgeHandle("~film.genre", 0xab)); !ok || p != "~film.genre" || u != 0xab {
		t.Errorf("edge handle: %s %d %v", p, u, ok)
	}
	for k, want := range map[string][4]string{
		"name":            {"value", "name", "", ""},
		"name@en":         {"value", "name", "en", ""},
		"name@en|since":   {"facet", "name", "en", "since"},
		"|count|~friend":  {"count", "~friend", "", ""},
		"|bucket|name":    {"other", "", "", ""},
		"http://x.org/a#": {"value", "http://x.org/a#", "", ""},
	} {
		kind, p, l, f := classifyProp(k)
		got := [4]string{[]string{"value", "facet", "count", "other"}[kind], p, l, f}
		if got != want {
			t.Errorf("classify %q = %v, want %v", k, got, want)
		}
	}
	long := strings.Repeat("é", 200)
	if h := indexVertex(1<<63, "exact", strings.Repeat("p", PredLenMax)+"@"+strings.Repeat("l", LangLenMax), 15, long); txn.ValidName("h", h, txn.HandleLenMax) != nil {
		t.Errorf("longest index vertex handle is invalid (%d bytes)", len(h))
	}
	if k := FacetPropKey(ValueKey(strings.Repeat("p", PredLenMax), strings.Repeat("l", LangLenMax)), strings.Repeat("f", FacetKeyLenMax)); txn.ValidName("k", k, txn.KeyLenMax) != nil {
		t.Errorf("longest facet key is invalid (%d bytes)", len(k))
	}
	if a := xidAlias(strings.Repeat("x", 1000)); txn.ValidName("a", a, txn.HandleLenMax) != nil || a == xidAlias(strings.Repeat("x", 999)) {
		t.Errorf("long xid alias %q", a)
	}
}
