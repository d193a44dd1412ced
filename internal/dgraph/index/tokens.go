package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/value"
)

// Tokenizer is one index kind the Dgraph mapping maintains.
type Tokenizer struct {
	name     string
	scalar   schema.Scalar
	sortable bool // tokens order values: Range can use the index
	// lossy: a token stands for more than one value (hash, year, ...), so
	// Eq checks the candidates' values.
	lossy bool
	// tokens returns the sorted, distinct tokens of one value of the
	// predicate's type.
	tokens func(v value.Value) []string
	// span is the closed interval of values a token stands for (sortable
	// tokenizers only); ok is false when the token does not parse.
	span func(token string) (lo, hi value.Value, ok bool)
}

// tokenizers maintained by this version. Others of the schema language
// (ngram, geo, bigfloat, hnsw) are accepted in the schema but not
// maintained: lookups on them answer dgraph.ErrNoIndex.
var tokenizers = map[string]*Tokenizer{
	"exact": {name: "exact", scalar: schema.String, sortable: true,
		tokens: func(v value.Value) []string { return []string{v.Str()} },
		span: func(t string) (value.Value, value.Value, bool) {
			if HashedToken(t) {
				return value.Value{}, value.Value{}, false
			}
			return value.Str(t), value.Str(t), true
		}},
	"hash": {name: "hash", scalar: schema.String, lossy: true,
		tokens: func(v value.Value) []string { return []string{hashToken(v.Str())} }},
	"term": {name: "term", scalar: schema.String, tokens: func(v value.Value) []string { return TermTokens(v.Str()) }},
	// fulltext: stems in every supported language (fulltextIndexTokens);
	// lossy, callers check candidates with FulltextTerms.
	"fulltext": {name: "fulltext", scalar: schema.String, lossy: true,
		tokens: func(v value.Value) []string { return fulltextIndexTokens(v.Str()) }},
	// trigram: lossy, regexp and match check candidates with the value.
	"trigram": {name: "trigram", scalar: schema.String, lossy: true,
		tokens: func(v value.Value) []string { return TrigramTokens(v.Str()) }},
	"int": {name: "int", scalar: schema.Int, sortable: true,
		tokens: func(v value.Value) []string { return []string{intToken(v.Int())} },
		span: func(t string) (value.Value, value.Value, bool) {
			i, ok := parseIntToken(t)
			return value.I64(i), value.I64(i), ok
		}},
	"float": {name: "float", scalar: schema.Float, sortable: true,
		tokens: func(v value.Value) []string { return []string{floatToken(v.Float())} },
		span: func(t string) (value.Value, value.Value, bool) {
			f, ok := parseFloatToken(t)
			return value.F64(f), value.F64(f), ok
		}},
	"bool": {name: "bool", scalar: schema.Bool,
		tokens: func(v value.Value) []string { return []string{strconv.FormatBool(v.Bool())} }},
	"year":  timeTokenizer("year", "2006"),
	"month": timeTokenizer("month", "2006-01"),
	"day":   timeTokenizer("day", "2006-01-02"),
	"hour":  timeTokenizer("hour", "2006-01-02T15"),
}

// timeTokenizer indexes a datetime by its UTC year, month, day or hour.
func timeTokenizer(name, layout string) *Tokenizer {
	return &Tokenizer{name: name, scalar: schema.Datetime, sortable: true, lossy: true,
		tokens: func(v value.Value) []string { return []string{v.Time().Format(layout)} },
		span: func(t string) (value.Value, value.Value, bool) {
			start, err := time.Parse(layout, t)
			if err != nil {
				return value.Value{}, value.Value{}, false
			}
			var end time.Time
			switch name {
			case "year":
				end = start.AddDate(1, 0, 0)
			case "month":
				end = start.AddDate(0, 1, 0)
			case "day":
				end = start.AddDate(0, 0, 1)
			default:
				end = start.Add(time.Hour)
			}
			return value.Time(start), value.Time(end.Add(-1)), true
		}}
}

// Get returns the tokenizer called name, nil when this version does not
// maintain it.
func Get(name string) *Tokenizer { return tokenizers[name] }

// Name is the tokenizer's name in the schema ("exact", "term", ...).
func (t *Tokenizer) Name() string { return t.name }

// Scalar is the type of the values the tokenizer takes.
func (t *Tokenizer) Scalar() schema.Scalar { return t.scalar }

// Sortable reports whether tokens order values: Range can use the index.
func (t *Tokenizer) Sortable() bool { return t.sortable }

// Lossy reports whether a token stands for more than one value (hash,
// year, fulltext, ...), so that readers check the candidates' values.
func (t *Tokenizer) Lossy() bool { return t.lossy }

// Tokens returns the distinct sorted tokens of a stored value of the
// tokenizer's type (a list gives the union of its elements' tokens).
func (t *Tokenizer) Tokens(v value.Value) []string {
	if v.Kind() != value.List {
		return t.tokens(v)
	}
	var out []string
	for _, e := range v.List() {
		out = append(out, t.tokens(e)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Span is the closed interval of values token stands for; ok is false when
// the tokenizer is not sortable or the token does not parse.
func (t *Tokenizer) Span(token string) (lo, hi value.Value, ok bool) {
	if t.span == nil {
		return value.Value{}, value.Value{}, false
	}
	return t.span(token)
}

// TermTokens is the term tokenizer: lower-cased runs of letters, digits and
// marks; Han, Hiragana and Katakana characters are tokens on their own (as
// in Bleve's unicode segmentation, which Dgraph uses). Sorted and distinct.
func TermTokens(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			cur.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	slices.Sort(out)
	return slices.Compact(out)
}

func hashToken(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// intToken encodes an int so that byte order is numeric order.
func intToken(i int64) string {
	return fmt.Sprintf("%016x", uint64(i)^(1<<63))
}

func parseIntToken(t string) (int64, bool) {
	if len(t) != 16 {
		return 0, false
	}
	b, err := hex.DecodeString(t)
	if err != nil {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)), true
}

// floatToken encodes a float so that byte order is numeric order (-0 is 0).
func floatToken(f float64) string {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 0 {
		b ^= 1 << 63
	} else {
		b = ^b
	}
	return fmt.Sprintf("%016x", b)
}

func parseFloatToken(t string) (float64, bool) {
	if len(t) != 16 {
		return 0, false
	}
	raw, err := hex.DecodeString(t)
	if err != nil {
		return 0, false
	}
	b := binary.BigEndian.Uint64(raw)
	if b>>63 == 1 {
		b ^= 1 << 63
	} else {
		b = ^b
	}
	return math.Float64frombits(b), true
}

// TokenLenMax bounds an index token kept verbatim in a handle; longer
// tokens (and tokens with a NUL) are shortened with a hash (TokenName).
const TokenLenMax = 160

// TokenName is token as it appears in handles: verbatim when short and
// free of NUL, else a prefix, '#', and 128 bits of its SHA-256
// (HashedToken tells them apart).
func TokenName(token string) string {
	if len(token) <= TokenLenMax && strings.IndexByte(token, 0) < 0 && utf8.ValidString(token) {
		return token
	}
	cut := 96
	for cut > 0 && !utf8.RuneStart(token[cut]) {
		cut--
	}
	prefix := strings.ToValidUTF8(strings.ReplaceAll(token[:cut], "\x00", ""), "")
	sum := sha256.Sum256([]byte(token))
	return prefix + "#" + hex.EncodeToString(sum[:16])
}

// HashedToken reports whether a token name was shortened by TokenName.
func HashedToken(name string) bool {
	return len(name) > 33 && name[len(name)-33] == '#' && len(name) <= 96+33 && isHex(name[len(name)-32:])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
