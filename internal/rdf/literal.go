package rdf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/value"
)

// Errors. Every error of this package wraps one of them.
var (
	// ErrSyntax is malformed N-Quads text.
	ErrSyntax = errors.New("rdf: syntax error")
	// ErrValue is a literal or facet value its datatype does not accept.
	ErrValue = errors.New("rdf: invalid value")
	// ErrRange is a well-formed value that value.Value cannot hold (a
	// datetime outside 1677-09-21 .. 2262-04-11, Weft's nanosecond range).
	ErrRange = errors.New("rdf: value out of range")
)

// Datatype is the declared type of a literal: what ^^<...> names.
type Datatype uint8

const (
	// TypeDefault is an untyped literal: a string the engine converts to
	// the predicate's schema type (Dgraph's default type).
	TypeDefault Datatype = iota
	TypeString
	TypeInt
	TypeFloat
	TypeBool
	TypeDatetime
	// TypeGeo is GeoJSON text (<geo:geojson>); Value is the JSON, compacted.
	TypeGeo
	// TypePassword is a clear-text password (<xs:password>); the engine hashes it.
	TypePassword
	// TypeBinary is base64 text (<xs:base64Binary>); Value keeps the text.
	TypeBinary
	// TypeVector is a float32 vector (<xs:[]float32>); Value is a list of floats.
	TypeVector
)

var datatypeInfo = [...]struct{ name, iri string }{
	TypeDefault:  {"default", ""},
	TypeString:   {"string", "xs:string"},
	TypeInt:      {"int", "xs:int"},
	TypeFloat:    {"float", "xs:float"},
	TypeBool:     {"bool", "xs:boolean"},
	TypeDatetime: {"datetime", "xs:dateTime"},
	TypeGeo:      {"geo", "geo:geojson"},
	TypePassword: {"password", "xs:password"},
	TypeBinary:   {"binary", "xs:base64Binary"},
	TypeVector:   {"vector", "xs:[]float32"},
}

func (t Datatype) String() string {
	if int(t) < len(datatypeInfo) {
		return datatypeInfo[t].name
	}
	return "Datatype(" + strconv.Itoa(int(t)) + ")"
}

// IRI is the short datatype IRI String renders (xs:int, geo:geojson, ...);
// "" for TypeDefault.
func (t Datatype) IRI() string {
	if int(t) < len(datatypeInfo) {
		return datatypeInfo[t].iri
	}
	return ""
}

const xsd = "http://www.w3.org/2001/XMLSchema#"

// datatypes maps every datatype IRI Dgraph accepts (chunker's typeMap) to
// its Datatype. gYear, gYearMonth and date are datetimes.
var datatypes = map[string]Datatype{
	"xs:password": TypePassword, "xs:string": TypeString,
	"xs:date": TypeDatetime, "xs:dateTime": TypeDatetime,
	"xs:int": TypeInt, "xs:integer": TypeInt, "xs:positiveInteger": TypeInt,
	"xs:boolean": TypeBool, "xs:double": TypeFloat, "xs:float": TypeFloat,
	"xs:base64Binary": TypeBinary, "geo:geojson": TypeGeo, "xs:[]float32": TypeVector,
	xsd + "string": TypeString, xsd + "dateTime": TypeDatetime, xsd + "date": TypeDatetime,
	xsd + "int": TypeInt, xsd + "positiveInteger": TypeInt, xsd + "integer": TypeInt,
	xsd + "boolean": TypeBool, xsd + "double": TypeFloat, xsd + "float": TypeFloat,
	xsd + "gYear": TypeDatetime, xsd + "gYearMonth": TypeDatetime,
}

// LookupDatatype maps a datatype IRI (without the angle brackets) to its
// Datatype.
func LookupDatatype(iri string) (Datatype, bool) {
	t, ok := datatypes[iri]
	return t, ok
}

// ParseValue converts a literal's lexical form to the value of datatype t,
// with Dgraph's rules: ints in base 10, floats finite, bools as
// strconv.ParseBool, datetimes as ParseDatetime, GeoJSON with ' read as ",
// passwords of at least 6 characters. Errors wrap ErrValue or ErrRange.
func ParseValue(lex string, t Datatype) (value.Value, error) {
	if lex == "" && t != TypeDefault && t != TypeString {
		return value.Value{}, fmt.Errorf("%w: empty %s", ErrValue, t)
	}
	switch t {
	case TypeDefault, TypeString:
		return value.Str(lex), nil
	case TypeInt:
		i, err := strconv.ParseInt(lex, 10, 64)
		if err != nil {
			return value.Value{}, numError(lex, t, err)
		}
		return value.I64(i), nil
	case TypeFloat:
		f, err := strconv.ParseFloat(lex, 64)
		if err != nil {
			return value.Value{}, numError(lex, t, err)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return value.Value{}, fmt.Errorf("%w: float %q is not finite", ErrValue, lex)
		}
		return value.F64(f), nil
	case TypeBool:
		b, err := strconv.ParseBool(lex)
		if err != nil {
			return value.Value{}, fmt.Errorf("%w: bool %q", ErrValue, lex)
		}
		return value.Boolean(b), nil
	case TypeDatetime:
		tm, err := ParseDatetime(lex)
		if err != nil {
			return value.Value{}, err
		}
		return value.Time(tm), nil
	case TypeGeo:
		return parseGeo(lex)
	case TypePassword:
		if len([]rune(lex)) < 6 {
			return value.Value{}, fmt.Errorf("%w: password shorter than 6 characters", ErrValue)
		}
		return value.Str(lex), nil
	case TypeBinary:
		if _, err := base64.StdEncoding.DecodeString(lex); err != nil {
			return value.Value{}, fmt.Errorf("%w: base64: %v", ErrValue, err)
		}
		return value.Str(lex), nil
	case TypeVector:
		return parseVector(lex)
	}
	return value.Value{}, fmt.Errorf("%w: unknown datatype %d", ErrValue, t)
}

func numError(lex string, t Datatype, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%w: %s %q", ErrRange, t, lex)
	}
	return fmt.Errorf("%w: %s %q", ErrValue, t, lex)
}

// FormatValue renders v as the lexical form of datatype t, the inverse of
// ParseValue.
func FormatValue(v value.Value, t Datatype) string {
	switch v.Kind() {
	case value.Int:
		return strconv.FormatInt(v.Int(), 10)
	case value.Float:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case value.Bool:
		return strconv.FormatBool(v.Bool())
	case value.Datetime:
		return v.Time().Format(time.RFC3339Nano)
	case value.List:
		parts := make([]string, len(v.List()))
		for i, e := range v.List() {
			parts[i] = FormatValue(e, TypeFloat)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return v.Str()
}

// Datetime range value.Value holds (nanoseconds since 1970 in an int64).
var (
	datetimeMin = time.Unix(0, math.MinInt64)
	datetimeMax = time.Unix(0, math.MaxInt64)
)

// ParseDatetime parses the datetime forms Dgraph accepts: 2006, 2006-01,
// 2006-01-02, and 2006-01-02T15:04:05 with optional fractional seconds and an
// optional zone (Z or ±07:00); no zone means UTC. Errors wrap ErrValue, or
// ErrRange for a datetime value.Value cannot hold.
func ParseDatetime(s string) (time.Time, error) {
	var layout string
	switch {
	case len(s) == 4:
		layout = "2006"
	case len(s) == 7:
		layout = "2006-01"
	case len(s) == 10:
		layout = "2006-01-02"
	case len(s) >= 19 && s[10] == 'T' && (s[len(s)-1] == 'Z' || s[len(s)-6] == '+' || s[len(s)-6] == '-'):
		layout = time.RFC3339
	case len(s) >= 19 && s[10] == 'T':
		layout = "2006-01-02T15:04:05"
	default:
		return time.Time{}, fmt.Errorf("%w: datetime %q", ErrValue, s)
	}
	t, err := time.Parse(layout, s)
	if err != nil || !allDigits(s[:4]) {
		return time.Time{}, fmt.Errorf("%w: datetime %q", ErrValue, s)
	}
	if t.Before(datetimeMin) || t.After(datetimeMax) {
		return time.Time{}, fmt.Errorf("%w: datetime %q outside %d..%d", ErrRange, s,
			datetimeMin.Year(), datetimeMax.Year())
	}
	return t, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var geoTypes = map[string]bool{
	"Point": true, "MultiPoint": true, "LineString": true, "MultiLineString": true,
	"Polygon": true, "MultiPolygon": true, "GeometryCollection": true,
}

// parseGeo checks that lex is a GeoJSON geometry (Dgraph lets ' stand for ")
// and keeps it as compact JSON text.
func parseGeo(lex string) (value.Value, error) {
	text := []byte(strings.ReplaceAll(lex, "'", `"`))
	var g struct {
		Type        string            `json:"type"`
		Coordinates []json.RawMessage `json:"coordinates"`
		Geometries  []json.RawMessage `json:"geometries"`
	}
	if err := json.Unmarshal(text, &g); err != nil {
		return value.Value{}, fmt.Errorf("%w: geojson: %v", ErrValue, err)
	}
	switch {
	case !geoTypes[g.Type]:
		return value.Value{}, fmt.Errorf("%w: geojson type %q is not a geometry", ErrValue, g.Type)
	case g.Type == "GeometryCollection" && g.Geometries == nil:
		return value.Value{}, fmt.Errorf("%w: geojson GeometryCollection without geometries", ErrValue)
	case g.Type != "GeometryCollection" && len(g.Coordinates) == 0:
		return value.Value{}, fmt.Errorf("%w: geojson %s without coordinates", ErrValue, g.Type)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, text); err != nil {
		return value.Value{}, fmt.Errorf("%w: geojson: %v", ErrValue, err)
	}
	return value.Str(out.String()), nil
}

// parseVector reads "[1.5, 2, 3e-1]" (commas and/or spaces between numbers).
func parseVector(lex string) (value.Value, error) {
	s := strings.TrimSpace(lex)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return value.Value{}, fmt.Errorf("%w: vector %q is not [n, ...]", ErrValue, lex)
	}
	fields := strings.FieldsFunc(s[1:len(s)-1], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 || len(fields) > value.ListLenMax {
		return value.Value{}, fmt.Errorf("%w: vector of %d elements (1..%d)", ErrValue, len(fields), value.ListLenMax)
	}
	out := make([]value.Value, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 32)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return value.Value{}, fmt.Errorf("%w: vector element %q", ErrValue, f)
		}
		out[i] = value.F64(x)
	}
	return value.ListOf(out...), nil
}
