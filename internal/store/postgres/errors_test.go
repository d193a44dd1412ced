package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-db/weft/internal/store"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	cases := []struct {
		name        string
		err         error
		conflict    bool
		unavailable bool
	}{
		{"serialization failure", pg("40001"), true, false},
		{"deadlock", pg("40P01"), true, false},
		{"connection refused", io.EOF, false, true},
		{"timeout", context.DeadlineExceeded, false, true},
		{"admin shutdown", pg("57P01"), false, true},
		{"crash shutdown", pg("57P02"), false, true},
		{"too many clients", pg("53300"), false, true},
		{"completion unknown", pg("40003"), false, true},
		{"unique violation", pg("23505"), false, false},
		{"syntax error", pg("42601"), false, false},
	}
	for _, tc := range cases {
		err := classify("op", tc.err)
		if got := errors.Is(err, store.ErrConflict); got != tc.conflict {
			t.Errorf("%s: %v matches ErrConflict = %v", tc.name, err, got)
		}
		if got := errors.Is(err, ErrUnavailable); got != tc.unavailable {
			t.Errorf("%s: %v matches ErrUnavailable = %v", tc.name, err, got)
		}
		if retry := tc.conflict || tc.unavailable; store.IsRetryable(err) != retry {
			t.Errorf("%s: IsRetryable(%v) = %v, want %v", tc.name, err, !retry, retry)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: %v does not wrap its cause", tc.name, err)
		}
	}
}
