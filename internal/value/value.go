package value

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a Value.
type Kind uint8

const (
	// Null is the zero Value: no value.
	Null Kind = iota
	String
	Int
	Float
	Bool
	Datetime
	List
)

var kindNames = [...]string{"null", "string", "int", "float", "bool", "datetime", "list"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return Null, fmt.Errorf("%w: unknown kind %q", ErrMalformed, s)
}

// Value is one typed property value. The zero Value is Null.
type Value struct {
	kind Kind
	s    string
	n    uint64 // int64 bits, float64 bits, bool (0/1), or datetime as UnixNano
	list []Value
}

// ListLenMax bounds list values (and nesting counts every element).
const ListLenMax = 1 << 16

// NestingMax bounds how deep lists nest.
const NestingMax = 8

// Errors.
var (
	ErrMalformed = errors.New("value: malformed")
	ErrType      = errors.New("value: wrong type")
)

// Of constructors.
func Str(s string) Value        { return Value{kind: String, s: s} }
func I64(i int64) Value         { return Value{kind: Int, n: uint64(i)} }
func F64(f float64) Value       { return Value{kind: Float, n: math.Float64bits(f)} }
func Boolean(b bool) Value      { return Value{kind: Bool, n: b2u(b)} }
func Time(t time.Time) Value    { return Value{kind: Datetime, n: uint64(t.UnixNano())} }
func ListOf(vs ...Value) Value  { return Value{kind: List, list: append([]Value(nil), vs...)} }
func (v Value) Kind() Kind      { return v.kind }
func (v Value) IsNull() bool    { return v.kind == Null }
func (v Value) Str() string     { return v.s }
func (v Value) Int() int64      { return int64(v.n) }
func (v Value) Float() float64  { return math.Float64frombits(v.n) }
func (v Value) Bool() bool      { return v.n != 0 }
func (v Value) Time() time.Time { return time.Unix(0, int64(v.n)).UTC() }
func (v Value) List() []Value   { return v.list }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Number reports v as a float64 when it is an int or a float.
func (v Value) Number() (float64, bool) {
	switch v.kind {
	case Int:
		return float64(v.Int()), true
	case Float:
		return v.Float(), true
	}
	return 0, false
}

// Equal reports deep equality; an int and a float are equal when numerically equal.
func Equal(a, b Value) bool {
	c, ok := Compare(a, b)
	return ok && c == 0
}

// Compare orders two values of comparable kinds: numbers with numbers, strings,
// bools (false < true), datetimes, lists lexicographically. ok is false when the
// kinds are not comparable (a string against an int, anything against null).
func Compare(a, b Value) (c int, ok bool) {
	if x, isNum := a.Number(); isNum {
		y, isNum2 := b.Number()
		if !isNum2 {
			return 0, false
		}
		if a.kind == Int && b.kind == Int {
			return cmp3(a.Int() < b.Int(), a.Int() > b.Int()), true
		}
		return cmp3(x < y, x > y), true
	}
	if a.kind != b.kind || a.kind == Null {
		return 0, false
	}
	switch a.kind {
	case String:
		return strings.Compare(a.s, b.s), true
	case Bool:
		return cmp3(a.n < b.n, a.n > b.n), true
	case Datetime:
		return cmp3(int64(a.n) < int64(b.n), int64(a.n) > int64(b.n)), true
	case List:
		for i := 0; i < len(a.list) && i < len(b.list); i++ {
			c, ok := Compare(a.list[i], b.list[i])
			if !ok || c != 0 {
				return c, ok
			}
		}
		return cmp3(len(a.list) < len(b.list), len(a.list) > len(b.list)), true
	}
	return 0, false
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

// String renders v for humans and for string predicates: strings as is,
// numbers in Go's shortest form, datetimes in RFC 3339 with nanoseconds.
func (v Value) String() string {
	switch v.kind {
	case String:
		return v.s
	case Int:
		return strconv.FormatInt(v.Int(), 10)
	case Float:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(v.Bool())
	case Datetime:
		return v.Time().Format(time.RFC3339Nano)
	case List:
		parts := make([]string, len(v.list))
		for i, e := range v.list {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "null"
}

// Append appends the canonical binary encoding of v to dst.
func Append(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.kind))
	switch v.kind {
	case String:
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	case Int, Datetime:
		dst = binary.AppendVarint(dst, int64(v.n))
	case Float:
		dst = binary.BigEndian.AppendUint64(dst, v.n)
	case Bool:
		dst = append(dst, byte(v.n))
	case List:
		dst = binary.AppendUvarint(dst, uint64(len(v.list)))
		for _, e := range v.list {
			dst = Append(dst, e)
		}
	}
	return dst
}

// Decode reads one value from b and returns it with the rest of b.
func Decode(b []byte) (Value, []byte, error) { return decode(b, 0) }

func decode(b []byte, depth int) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	k, b := Kind(b[0]), b[1:]
	switch k {
	case Null:
		return Value{}, b, nil
	case String:
		n, w := binary.Uvarint(b)
		if w <= 0 || w != uvarintLen(n) || n > uint64(len(b)-w) {
			return Value{}, nil, fmt.Errorf("%w: string length", ErrMalformed)
		}
		return Str(string(b[w : w+int(n)])), b[w+int(n):], nil
	case Int, Datetime:
		i, w := binary.Varint(b)
		if w <= 0 || w != len(binary.AppendVarint(nil, i)) {
			return Value{}, nil, fmt.Errorf("%w: varint", ErrMalformed)
		}
		return Value{kind: k, n: uint64(i)}, b[w:], nil
	case Float:
		if len(b) < 8 {
			return Value{}, nil, fmt.Errorf("%w: float", ErrMalformed)
		}
		return Value{kind: Float, n: binary.BigEndian.Uint64(b)}, b[8:], nil
	case Bool:
		if len(b) < 1 || b[0] > 1 {
			return Value{}, nil, fmt.Errorf("%w: bool", ErrMalformed)
		}
		return Boolean(b[0] == 1), b[1:], nil
	case List:
		if depth >= NestingMax {
			return Value{}, nil, fmt.Errorf("%w: lists nest deeper than %d", ErrMalformed, NestingMax)
		}
		n, w := binary.Uvarint(b)
		if w <= 0 || w != uvarintLen(n) || n > ListLenMax || n > uint64(len(b)-w) {
			return Value{}, nil, fmt.Errorf("%w: list length", ErrMalformed)
		}
		b = b[w:]
		out := make([]Value, n)
		for i := range out {
			var err error
			if out[i], b, err = decode(b, depth+1); err != nil {
				return Value{}, nil, err
			}
		}
		return Value{kind: List, list: out}, b, nil
	}
	return Value{}, nil, fmt.Errorf("%w: kind %d", ErrMalformed, k)
}

// uvarintLen is the length of the minimal encoding; decoders reject longer
// ones so that every value has exactly one encoding.
func uvarintLen(n uint64) int { return len(binary.AppendUvarint(nil, n)) }
