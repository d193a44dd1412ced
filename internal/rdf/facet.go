package rdf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/value"
)

// FacetValue types an unquoted facet value the way Dgraph does: an integer
// (strconv.ParseInt base 0, so 0x10 and 1_000 count), else a float, else
// true/false, else a datetime (ParseDatetime). An empty text is the empty
// string. A number too large for its type is ErrRange; text none of the types
// accept is ErrValue. Quoted strings are the parser's business, not this.
func FacetValue(text string) (value.Value, error) {
	if text == "" {
		return value.Str(""), nil
	}
	if mayBeNumber(text) {
		i, err := strconv.ParseInt(text, 0, 64)
		if err == nil {
			return value.I64(i), nil
		}
		if errors.Is(err, strconv.ErrRange) && allDigits(strings.TrimLeft(text, "+-")) {
			return value.Value{}, fmt.Errorf("%w: facet integer %q", ErrRange, text)
		}
		f, err := strconv.ParseFloat(text, 64)
		if err == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return value.Value{}, fmt.Errorf("%w: facet float %q is not finite", ErrValue, text)
			}
			return value.F64(f), nil
		}
		if errors.Is(err, strconv.ErrRange) {
			return value.Value{}, fmt.Errorf("%w: facet float %q", ErrRange, text)
		}
	}
	if text == "true" || text == "false" {
		return value.Boolean(text == "true"), nil
	}
	t, err := ParseDatetime(text)
	if err == nil {
		return value.Time(t), nil
	}
	if errors.Is(err, ErrRange) {
		return value.Value{}, err
	}
	return value.Value{}, fmt.Errorf("%w: facet value %q is no int, float, bool or datetime (quote strings)", ErrValue, text)
}

// mayBeNumber rules out, without strconv's error allocations, texts that
// neither ParseInt nor ParseFloat accepts: those starting with a letter
// other than i or n (inf, nan), and dates (four digits then '-').
func mayBeNumber(s string) bool {
	c := s[0]
	if isLetter(c) && c|0x20 != 'i' && c|0x20 != 'n' {
		return false
	}
	return !(len(s) > 4 && s[4] == '-' && allDigits(s[:4]))
}

// formatFacetValue renders a facet value so that the parser types it back
// to the same kind: strings quoted, floats always with a '.' or an exponent.
func formatFacetValue(v value.Value) string {
	switch v.Kind() {
	case value.Int:
		return strconv.FormatInt(v.Int(), 10)
	case value.Float:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case value.Bool:
		return strconv.FormatBool(v.Bool())
	case value.Datetime:
		return v.Time().Format(time.RFC3339Nano)
	}
	var b strings.Builder
	writeQuoted(&b, v.Str())
	return b.String()
}
