package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrors(t *testing.T) {
	wrapped := fmt.Errorf("commit: %w", ErrTooOld)
	cases := []struct {
		name      string
		err       error
		conflict  bool
		tooOld    bool
		retryable bool
	}{
		{"conflict", ErrConflict, true, false, true},
		{"too old", ErrTooOld, true, true, true},
		{"wrapped too old", wrapped, true, true, true},
		{"overloaded", ErrOverloaded, false, false, true},
		{"closed", ErrClosed, false, false, false},
		{"too large", ErrTxnTooLarge, false, false, false},
		{"nil", nil, false, false, false},
	}
	for _, tc := range cases {
		if got := errors.Is(tc.err, ErrConflict); got != tc.conflict {
			t.Errorf("%s: Is(ErrConflict) = %v", tc.name, got)
		}
		if got := errors.Is(tc.err, ErrTooOld); got != tc.tooOld {
			t.Errorf("%s: Is(ErrTooOld) = %v", tc.name, got)
		}
		if got := IsRetryable(tc.err); got != tc.retryable {
			t.Errorf("%s: IsRetryable = %v", tc.name, got)
		}
	}
	for _, err := range []error{ErrConflict, ErrTooOld, ErrOverloaded, ErrClosed, ErrFailed, ErrTxnDone,
		ErrTxnTooLarge, ErrKeyTooLarge, ErrValueTooLarge, ErrBadRange} {
		if !strings.HasPrefix(err.Error(), "store: ") {
			t.Errorf("%q lacks the package prefix", err)
		}
	}
}

func TestChecks(t *testing.T) {
	k := func(n int) []byte { return make([]byte, n) }
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"empty key", CheckKey(nil), nil},
		{"max key", CheckKey(k(KeyLenMax)), nil},
		{"long key", CheckKey(k(KeyLenMax + 1)), ErrKeyTooLarge},
		{"max value", CheckValue(k(ValueLenMax)), nil},
		{"long value", CheckValue(k(ValueLenMax + 1)), ErrValueTooLarge},
		{"whole keyspace", CheckRange(nil, nil), nil},
		{"empty range", CheckRange([]byte("a"), []byte("a")), nil},
		{"reversed", CheckRange([]byte("b"), []byte("a")), ErrBadRange},
		{"long start", CheckRange(k(KeyLenMax+1), nil), ErrKeyTooLarge},
		{"long end", CheckRange(nil, k(KeyLenMax+1)), ErrKeyTooLarge},
		{"nil start, empty end", CheckRange(nil, []byte{}), nil},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) || (tc.want == nil) != (tc.err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if b := Brief(k(1000)); len(b) > 300 || !strings.Contains(b, "1000 bytes") {
		t.Errorf("Brief of a long key: %s", b)
	}
}
