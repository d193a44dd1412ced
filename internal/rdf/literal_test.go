package rdf

import (
	"errors"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/value"
)

func TestParseDatetime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // RFC 3339 in UTC; "" for an error
		err  error
	}{
		{"2006", "2006-01-01T00:00:00Z", nil},
		{"2006-05", "2006-05-01T00:00:00Z", nil},
		{"2006-05-07", "2006-05-07T00:00:00Z", nil},
		{"2006-01-02T15:04:05", "2006-01-02T15:04:05Z", nil},
		{"2006-01-02T15:04:05.123456789", "2006-01-02T15:04:05.123456789Z", nil},
		{"2006-01-02T15:04:05Z", "2006-01-02T15:04:05Z", nil},
		{"2006-01-02T15:04:05-07:00", "2006-01-02T22:04:05Z", nil},
		{"2006-01-02T15:04:05.5+01:00", "2006-01-02T14:04:05.5Z", nil},
		{"1678-01-01", "1678-01-01T00:00:00Z", nil},
		{"1677-01-01", "", ErrRange},
		{"2263", "", ErrRange},
		{"0000-01-01T00:00:00Z", "", ErrRange},
		{"", "", ErrValue},
		{"06", "", ErrValue},
		{"+006", "", ErrValue},
		{"2006-1-2", "", ErrValue},
		{"2006-02-30", "", ErrValue},
		{"2006-01-02 15:04:05", "", ErrValue},
		{"2006-01-02T25:04:05", "", ErrValue},
		{"2006-01-02T15:04", "", ErrValue},
		{"yesterday!", "", ErrValue},
	} {
		got, err := ParseDatetime(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ParseDatetime(%q) = %v, %v; want %v", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.UTC().Format(time.RFC3339Nano) != tc.want {
			t.Errorf("ParseDatetime(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestParseValueFormatValue checks that FormatValue inverts ParseValue for
// every datatype.
func TestParseValueFormatValue(t *testing.T) {
	for _, tc := range []struct {
		lex string
		dt  Datatype
		out string
	}{
		{"x y", TypeDefault, "x y"},
		{"", TypeString, ""},
		{"-42", TypeInt, "-42"},
		{"007", TypeInt, "7"},
		{"0.1", TypeFloat, "0.1"},
		{"1e21", TypeFloat, "1e+21"},
		{"T", TypeBool, "true"},
		{"1986", TypeDatetime, "1986-01-01T00:00:00Z"},
		{`{"type":"Point","coordinates":[1,2]}`, TypeGeo, `{"type":"Point","coordinates":[1,2]}`},
		{`{'type': 'MultiPolygon', 'coordinates': [[[[0,0],[1,0],[0,1],[0,0]]]]}`, TypeGeo,
			`{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[0,1],[0,0]]]]}`},
		{`{"type":"GeometryCollection","geometries":[]}`, TypeGeo, `{"type":"GeometryCollection","geometries":[]}`},
		{"hunter22", TypePassword, "hunter22"},
		{"", TypeDefault, ""},
		{"AAEC", TypeBinary, "AAEC"},
		{" [0.5 0.25,1] ", TypeVector, "[0.5, 0.25, 1]"},
	} {
		v, err := ParseValue(tc.lex, tc.dt)
		if err != nil {
			t.Errorf("ParseValue(%q, %v): %v", tc.lex, tc.dt, err)
			continue
		}
		got := FormatValue(v, tc.dt)
		if got != tc.out {
			t.Errorf("FormatValue(ParseValue(%q, %v)) = %q; want %q", tc.lex, tc.dt, got, tc.out)
		}
		back, err := ParseValue(got, tc.dt)
		if err != nil || !valueIdentical(back, v) {
			t.Errorf("ParseValue(%q, %v) = %v, %v; want %v", got, tc.dt, back, err, v)
		}
	}
}

func TestLookupDatatype(t *testing.T) {
	for iri, want := range map[string]Datatype{
		"xs:int": TypeInt, "xs:dateTime": TypeDatetime, "geo:geojson": TypeGeo,
		"http://www.w3.org/2001/XMLSchema#gYear": TypeDatetime, "xs:[]float32": TypeVector,
	} {
		if got, ok := LookupDatatype(iri); !ok || got != want {
			t.Errorf("LookupDatatype(%q) = %v, %v; want %v", iri, got, ok, want)
		}
	}
	if _, ok := LookupDatatype("xs:long"); ok {
		t.Error("xs:long is not a Dgraph datatype")
	}
	// Every datatype but the default renders an IRI that maps back to it.
	for dt := TypeString; dt <= TypeVector; dt++ {
		if got, ok := LookupDatatype(dt.IRI()); !ok || got != dt {
			t.Errorf("LookupDatatype(%q) = %v, %v; want %v", dt.IRI(), got, ok, dt)
		}
	}
}

func TestFacetValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want value.Value
		err  error
	}{
		{"", value.Str(""), nil},
		{"12", value.I64(12), nil},
		{"-12", value.I64(-12), nil},
		{"0x10", value.I64(16), nil},
		{"1_000", value.I64(1000), nil},
		{"2006", value.I64(2006), nil}, // an int before a datetime, as in Dgraph
		{"1.5", value.F64(1.5), nil},
		{"1e3", value.F64(1000), nil},
		{"true", value.Boolean(true), nil},
		{"false", value.Boolean(false), nil},
		{"2006-01-02", value.Time(time.Date(2006, 1, 2, 0, 0, 0, 0, time.UTC)), nil},
		{"2006-01-02T15:04:05", value.Time(time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)), nil},
		{"99999999999999999999", value.Value{}, ErrRange},
		{"1e999", value.Value{}, ErrRange},
		{"0214-01-01", value.Value{}, ErrRange},
		{"NaN", value.Value{}, ErrValue},
		{"Inf", value.Value{}, ErrValue},
		{"True", value.Value{}, ErrValue},
		{"hello", value.Value{}, ErrValue},
	} {
		got, err := FacetValue(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("FacetValue(%q) = %v, %v; want %v", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !valueIdentical(got, tc.want) {
			t.Errorf("FacetValue(%q) = %v (%v), %v; want %v (%v)", tc.in, got, got.Kind(), err, tc.want, tc.want.Kind())
		}
		// The rendering types back to the same kind.
		back, err := FacetValue(formatFacetValue(got))
		if got.Kind() == value.String {
			continue // strings render quoted; the parser unquotes them
		}
		if err != nil || !valueIdentical(back, got) {
			t.Errorf("FacetValue(formatFacetValue(%v)) = %v, %v", got, back, err)
		}
	}
}
