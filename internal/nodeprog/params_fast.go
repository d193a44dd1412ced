package nodeprog

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// A fast path for DecodeParams. Most program runs pass a small flat object
// ({"node":"v17","limit":50}); encoding/json's reflection-driven decoder
// costs more than the read such a program does. fastDecode handles exactly
// the inputs whose meaning is obvious — an object of keys that equal a
// field's json tag, with ASCII strings without escapes, integers, numbers,
// booleans — and reports false for anything else (nested values, escapes,
// null, unknown or case-folded keys, out-of-range numbers), so that
// encoding/json decodes it and gives its usual errors. The two paths give
// the same result wherever the fast one answers (FuzzFastDecode).

// fastField is a struct field the fast path can set: its index path
// (through embedded structs) and its kind.
type fastField struct {
	index []int
	kind  reflect.Kind
	ptr   bool // *T of a simple kind
	bits  int  // integer and float sizes
}

var fastFields sync.Map // reflect.Type → map[string]*fastField (nil entry: ambiguous)

// fieldsOf returns the settable simple fields of struct type t by json name.
func fieldsOf(t reflect.Type) map[string]*fastField {
	if m, ok := fastFields.Load(t); ok {
		return m.(map[string]*fastField)
	}
	m := map[string]*fastField{}
	depth := map[string]int{}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
				walk(f.Type, idx)
				continue
			}
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ff := simpleField(f.Type, idx)
			if d, seen := depth[name]; seen {
				if d == len(idx) {
					m[name] = nil // ambiguous at one depth: encoding/json decides
				}
				continue // a shallower field with that name wins
			}
			depth[name] = len(idx)
			m[name] = ff // nil when not simple
		}
	}
	walk(t, nil)
	fastFields.Store(t, m)
	return m
}

func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(opts, "string") {
		return "", false // quoted numbers: encoding/json's business
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func simpleField(t reflect.Type, idx []int) *fastField {
	ff := &fastField{index: idx}
	if t.Kind() == reflect.Pointer {
		ff.ptr, t = true, t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool:
		ff.kind = t.Kind()
		return ff
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		ff.kind, ff.bits = t.Kind(), t.Bits()
		return ff
	}
	return nil
}

// fastDecode decodes raw (trimmed, starting with '{') into dst, a pointer
// to a zero struct. When it returns false dst is zero again, for
// encoding/json to decode.
func fastDecode(raw []byte, dst any) bool {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	if !fastDecodeInto(raw, v.Elem()) {
		v.Elem().SetZero()
		return false
	}
	return true
}

func fastDecodeInto(raw []byte, v reflect.Value) bool {
	fields := fieldsOf(v.Type())
	s := scanner{b: raw}
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.byte(':') {
			return false
		}
		ff := fields[key]
		if ff == nil || !s.value(v.FieldByIndex(ff.index), ff) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte('}') && s.end()
	}
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() bool { s.space(); return s.i == len(s.b) }

// str reads a string of printable ASCII without escapes.
func (s *scanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := string(s.b[start:s.i])
			s.i++
			return out, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", false
		}
		s.i++
	}
	return "", false
}

// token reads a bare literal (number, true, false).
func (s *scanner) token() []byte {
	s.space()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		s.i++
	}
	return s.b[start:s.i]
}

func (s *scanner) value(f reflect.Value, ff *fastField) bool {
	if ff.ptr {
		p := reflect.New(f.Type().Elem())
		if !s.value(p.Elem(), &fastField{kind: ff.kind, bits: ff.bits}) {
			return false
		}
		f.Set(p)
		return true
	}
	switch ff.kind {
	case reflect.String:
		str, ok := s.str()
		if ok {
			f.SetString(str)
		}
		return ok
	case reflect.Bool:
		switch string(s.token()) {
		case "true":
			f.SetBool(true)
		case "false":
			f.SetBool(false)
		default:
			return false
		}
		return true
	case reflect.Float32, reflect.Float64:
		t := s.token()
		if !jsonNumber(t) {
			return false
		}
		x, err := strconv.ParseFloat(string(t), ff.bits)
		if err != nil {
			return false
		}
		f.SetFloat(x)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		t := s.token()
		if !digits(t) {
			return false
		}
		x, err := strconv.ParseUint(string(t), 10, ff.bits)
		if err != nil {
			return false
		}
		f.SetUint(x)
		return true
	default: // signed integers
		t := s.token()
		if len(t) > 0 && t[0] == '-' && !digits(t[1:]) || len(t) > 0 && t[0] != '-' && !digits(t) {
			return false
		}
		x, err := strconv.ParseInt(string(t), 10, ff.bits)
		if err != nil {
			return false
		}
		f.SetInt(x)
		return true
	}
}

// digits: a JSON integer without sign (no leading zeros but "0").
func digits(t []byte) bool {
	if len(t) == 0 || (t[0] == '0' && len(t) > 1) {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsonNumber checks the JSON number grammar: -?int(.digits)?([eE][+-]?digits)?
func jsonNumber(t []byte) bool {
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	start := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if !digits(t[start:i]) {
		return false
	}
	if i < len(t) && t[i] == '.' {
		i++
		n := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		n := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	return i == len(t)
}
