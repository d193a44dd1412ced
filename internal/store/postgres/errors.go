package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-db/weft/internal/store"
)

// ErrUnavailable means the server could not be reached or dropped the
// connection, and nothing of the Txn was written. It matches
// store.ErrOverloaded, so store.IsRetryable holds and callers back off and
// retry as they do when the commit queue is full.
var ErrUnavailable = errors.New("store/postgres: server unavailable")

// unavailableError wraps the cause of an ErrUnavailable.
type unavailableError struct{ cause error }

func (e *unavailableError) Error() string { return ErrUnavailable.Error() + ": " + e.cause.Error() }

func (e *unavailableError) Unwrap() []error {
	return []error{ErrUnavailable, store.ErrOverloaded, e.cause}
}

func unavailable(err error) error { return &unavailableError{cause: err} }

// SQLSTATE codes the store acts on.
const (
	codeSerialization = "40001" // serialization_failure: retry the transaction
	codeDeadlock      = "40P01" // deadlock_detected: retry the transaction
	codeTooLarge      = "54000" // program_limit_exceeded: an index row too large
)

// sqlState returns err's SQLSTATE, or "" if the server did not answer one.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryableState reports whether the server aborted the transaction so that
// running it again may succeed.
func retryableState(code string) bool { return code == codeSerialization || code == codeDeadlock }

// connLost reports whether err means the connection (or the server behind
// it) is gone or unusable rather than that a statement failed: no SQLSTATE
// at all, or one of the connection-exception, shutdown and too-many-clients
// classes, a canceled statement, or a completion the server cannot vouch
// for. The transaction on that connection is over, its outcome unknown if
// it was COMMIT.
func connLost(err error) bool {
	code := sqlState(err)
	switch {
	case code == "":
		return err != nil
	case strings.HasPrefix(code, "08"), // connection_exception
		strings.HasPrefix(code, "57P"), // admin/crash shutdown, cannot connect now
		code == "53300",                // too_many_connections
		code == "57014",                // query_canceled (our QueryTimeout)
		code == "40003":                // statement_completion_unknown (CockroachDB)
		return true
	}
	return false
}

// classify maps an error from a read (or a read-only validation) to the
// store's errors: a serialization failure to store.ErrConflict, a lost
// connection or timeout to ErrUnavailable, anything else wrapped as is.
func classify(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case retryableState(sqlState(err)):
		return fmt.Errorf("%w: %s: %w", store.ErrConflict, what, err)
	case connLost(err):
		return unavailable(fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("store/postgres: %s: %w", what, err)
}
