package value

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// JSON form. Strings, bools and lists map to JSON directly; ints to JSON
// integers; floats to JSON numbers that always carry a '.' or an exponent (so
// 3.0 stays a float on a round trip); datetimes to {"$datetime": "RFC 3339"}.
// Non-finite floats have no JSON form and are rejected by MarshalJSON.

// MarshalJSON implements json.Marshaler.
func (v Value) MarshalJSON() ([]byte, error) { return AppendJSON(nil, v) }

// AppendJSON appends the JSON form of v.
func AppendJSON(dst []byte, v Value) ([]byte, error) {
	switch v.kind {
	case Null:
		return append(dst, "null"...), nil
	case String:
		b, err := json.Marshal(v.s)
		return append(dst, b...), err
	case Int:
		return fmt.Appendf(dst, "%d", v.Int()), nil
	case Float:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%w: %v has no JSON form", ErrType, f)
		}
		b, _ := json.Marshal(f)
		if !bytes.ContainsAny(b, ".eE") {
			b = append(b, ".0"...)
		}
		return append(dst, b...), nil
	case Bool:
		if v.Bool() {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case Datetime:
		return fmt.Appendf(dst, `{"$datetime":%q}`, v.Time().Format(time.RFC3339Nano)), nil
	case List:
		dst = append(dst, '[')
		for i, e := range v.list {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendJSON(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	return nil, fmt.Errorf("%w: kind %d", ErrMalformed, v.kind)
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Value) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out, err := FromJSON(raw, 0)
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// FromJSON converts a value decoded by encoding/json with UseNumber.
func FromJSON(raw any, depth int) (Value, error) {
	switch x := raw.(type) {
	case nil:
		return Value{}, nil
	case string:
		return Str(x), nil
	case bool:
		return Boolean(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil && !bytes.ContainsAny([]byte(x), ".eE") {
			return I64(i), nil
		}
		f, err := x.Float64()
		if err != nil {
			return Value{}, fmt.Errorf("%w: number %s", ErrMalformed, x)
		}
		return F64(f), nil
	case float64: // decoded without UseNumber
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return I64(int64(x)), nil
		}
		return F64(x), nil
	case []any:
		if depth >= NestingMax {
			return Value{}, fmt.Errorf("%w: lists nest deeper than %d", ErrMalformed, NestingMax)
		}
		if len(x) > ListLenMax {
			return Value{}, fmt.Errorf("%w: list longer than %d", ErrMalformed, ListLenMax)
		}
		out := make([]Value, len(x))
		for i, e := range x {
			var err error
			if out[i], err = FromJSON(e, depth+1); err != nil {
				return Value{}, err
			}
		}
		return Value{kind: List, list: out}, nil
	case map[string]any:
		if s, ok := x["$datetime"].(string); ok && len(x) == 1 {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return Value{}, fmt.Errorf("%w: datetime %q: %v", ErrMalformed, s, err)
			}
			return Time(t), nil
		}
		return Value{}, fmt.Errorf("%w: objects are not property values (a datetime is {\"$datetime\": \"RFC 3339\"})", ErrMalformed)
	}
	return Value{}, fmt.Errorf("%w: unsupported JSON %T", ErrMalformed, raw)
}
