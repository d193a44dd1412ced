package index

import (
	"strings"
	"testing"
	"time"
)

func TestTokenEncodingsOrder(t *testing.T) {
	ints := []int64{-1 << 63, -5, -1, 0, 1, 7, 1 << 62}
	for i := 1; i < len(ints); i++ {
		if intToken(ints[i-1]) >= intToken(ints[i]) {
			t.Errorf("int tokens %d %d out of order", ints[i-1], ints[i])
		}
		if v, ok := parseIntToken(intToken(ints[i])); !ok || v != ints[i] {
			t.Errorf("int token round trip %d: %d", ints[i], v)
		}
	}
	floats := []float64{-1e300, -2.5, -1e-300, 0, 1e-300, 1, 3.25, 1e300}
	for i := 1; i < len(floats); i++ {
		if floatToken(floats[i-1]) >= floatToken(floats[i]) {
			t.Errorf("float tokens %g %g out of order", floats[i-1], floats[i])
		}
		if v, ok := parseFloatToken(floatToken(floats[i])); !ok || v != floats[i] {
			t.Errorf("float token round trip %g: %g", floats[i], v)
		}
	}
	if floatToken(-0.0) != floatToken(0) {
		t.Error("-0 and 0 differ")
	}
	lo, hi, ok := tokenizers["year"].span("1999")
	if !ok || lo.Time() != time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) || hi.Time().Year() != 1999 || hi.Time().Month() != 12 {
		t.Errorf("year span %v %v", lo, hi)
	}
}

func TestTokenName(t *testing.T) {
	long := strings.Repeat("é", 200)
	n := TokenName(long)
	if !HashedToken(n) || TokenName(long+"x") == n || len(n) > TokenLenMax || HashedToken("short") {
		t.Errorf("token name %q", n)
	}
}
