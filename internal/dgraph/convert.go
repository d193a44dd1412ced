package dgraph

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/value"
)

// Conversion of mutation values to a predicate's schema type, with Dgraph's
// rules: an untyped literal is text parsed as the predicate's type (by
// rdf.ParseValue, the rules of typed literals); a typed
// literal (or a JSON number or bool) is converted when Dgraph converts it
// (int <-> float with truncation, numbers and bools <-> strings, a datetime
// to int/float as Unix seconds); anything else is ErrInvalid. A default
// predicate keeps typed values as they are and untyped ones as strings.

// convertLiteral converts a literal object to type to.
func convertLiteral(t rdf.Term, to schema.Scalar) (value.Value, error) {
	switch t.Datatype {
	case rdf.TypeGeo, rdf.TypeVector, rdf.TypePassword:
		want := map[rdf.Datatype]schema.Scalar{rdf.TypeGeo: schema.Geo, rdf.TypeVector: schema.Float32Vector,
			rdf.TypePassword: schema.Password}[t.Datatype]
		if to == want {
			if to == schema.Password {
				return HashPassword(t.Value.Str())
			}
			return t.Value, nil
		}
		if to == schema.Default && t.Datatype != rdf.TypePassword {
			return t.Value, nil
		}
		if to == schema.String && t.Datatype == rdf.TypeGeo {
			return t.Value, nil
		}
		return value.Value{}, fmt.Errorf("%w: a %s literal cannot be stored in a %s predicate", ErrInvalid, t.Datatype, to)
	case rdf.TypeDefault, rdf.TypeString, rdf.TypeBinary:
		return convertValue(value.Str(t.Value.Str()), to)
	}
	return convertValue(t.Value, to)
}

// convertValue converts v to type to (see the rules above).
func convertValue(v value.Value, to schema.Scalar) (value.Value, error) {
	bad := func(err error) (value.Value, error) {
		if err != nil {
			return value.Value{}, fmt.Errorf("%w: cannot convert %s %q to %s: %w", ErrInvalid, v.Kind(), v.String(), to, err)
		}
		return value.Value{}, fmt.Errorf("%w: cannot convert %s %q to %s", ErrInvalid, v.Kind(), v.String(), to)
	}
	if v.Kind() == value.Null || v.Kind() == value.List && to != schema.Float32Vector && to != schema.Default {
		return bad(nil)
	}
	// Text is parsed by the rules of literals (rdf.ParseValue).
	parse := func(lex string, dt rdf.Datatype) (value.Value, error) {
		out, err := rdf.ParseValue(lex, dt)
		if err != nil {
			return bad(err)
		}
		return out, nil
	}
	switch to {
	case schema.Default:
		return v, nil
	case schema.String:
		if v.Kind() == value.String {
			return v, nil
		}
		return value.Str(rdf.FormatValue(v, rdf.TypeDefault)), nil
	case schema.Int:
		switch v.Kind() {
		case value.Int:
			return v, nil
		case value.String:
			return parse(v.Str(), rdf.TypeInt)
		case value.Float:
			f := math.Trunc(v.Float())
			if f < math.MinInt64 || f >= math.MaxInt64 {
				return bad(nil)
			}
			return value.I64(int64(f)), nil
		case value.Bool:
			return value.I64(int64(b2i(v.Bool()))), nil
		case value.Datetime:
			return value.I64(v.Time().Unix()), nil
		}
	case schema.Float:
		switch v.Kind() {
		case value.Float:
			return v, nil
		case value.String:
			return parse(v.Str(), rdf.TypeFloat)
		case value.Int:
			return value.F64(float64(v.Int())), nil
		case value.Bool:
			return value.F64(float64(b2i(v.Bool()))), nil
		case value.Datetime:
			return value.F64(float64(v.Time().UnixNano()) / 1e9), nil
		}
	case schema.Bool:
		switch v.Kind() {
		case value.Bool:
			return v, nil
		case value.String:
			return parse(v.Str(), rdf.TypeBool)
		case value.Int:
			return value.Boolean(v.Int() != 0), nil
		case value.Float:
			return value.Boolean(v.Float() != 0), nil
		}
	case schema.Datetime:
		switch v.Kind() {
		case value.Datetime:
			return v, nil
		case value.String:
			return parse(v.Str(), rdf.TypeDatetime)
		case value.Int:
			if v.Int() < -9223372036 || v.Int() > 9223372036 {
				return bad(nil)
			}
			return value.Time(time.Unix(v.Int(), 0)), nil
		case value.Float:
			f := v.Float()
			if f < -9223372036 || f > 9223372036 {
				return bad(nil)
			}
			sec, frac := math.Modf(f)
			return value.Time(time.Unix(int64(sec), int64(frac*1e9))), nil
		}
	case schema.Geo, schema.Float32Vector:
		dt := rdf.TypeGeo
		if to == schema.Float32Vector {
			dt = rdf.TypeVector
			if v.Kind() == value.List {
				for _, e := range v.List() {
					if _, ok := e.Number(); !ok {
						return bad(nil)
					}
				}
				return v, nil
			}
		}
		if v.Kind() == value.String {
			return parse(v.Str(), dt)
		}
	case schema.Password:
		if v.Kind() == value.String {
			return HashPassword(v.Str())
		}
	case schema.UID:
		return value.Value{}, fmt.Errorf("%w: a literal (%q) cannot be the object of a uid predicate", ErrInvalid, v.String())
	case schema.BigFloat:
		return value.Value{}, fmt.Errorf("%w: bigfloat values", ErrUnsupported)
	}
	return bad(nil)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Passwords are stored as "pbkdf2-sha256$<iterations>$<salt>$<key>"
// (base64); Dgraph uses bcrypt, which the standard library lacks.
const (
	passwordIter   = 20000
	passwordPrefix = "pbkdf2-sha256$"
)

// HashPassword hashes a clear-text password (at least 6 characters, as in
// Dgraph) for storage.
func HashPassword(clear string) (value.Value, error) {
	if len([]rune(clear)) < 6 {
		return value.Value{}, fmt.Errorf("%w: password shorter than 6 characters", ErrInvalid)
	}
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, clear, salt, passwordIter, 32)
	if err != nil {
		return value.Value{}, err
	}
	enc := base64.RawStdEncoding
	return value.Str(fmt.Sprintf("%s%d$%s$%s", passwordPrefix, passwordIter, enc.EncodeToString(salt), enc.EncodeToString(key))), nil
}

// CheckPassword reports whether clear matches a stored password (checkpwd).
func CheckPassword(stored, clear string) bool {
	parts := strings.Split(strings.TrimPrefix(stored, passwordPrefix), "$")
	if !strings.HasPrefix(stored, passwordPrefix) || len(parts) != 3 {
		return false
	}
	iter, err := strconv.Atoi(parts[0])
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[1])
	want, err2 := enc.DecodeString(parts[2])
	if err != nil || err1 != nil || err2 != nil || iter < 1 || iter > 10_000_000 {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, clear, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
