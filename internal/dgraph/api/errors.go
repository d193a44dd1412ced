package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
)

// Code is the class of an error as both faces report it: a gRPC status
// code and an HTTP "extensions.code".
type Code int

// Codes.
const (
	CodeUnknown         Code = iota // anything else (gRPC UNKNOWN, as Dgraph answers most errors)
	CodeInvalid                     // bad input (gRPC INVALID_ARGUMENT)
	CodeAborted                     // the transaction must be retried (gRPC ABORTED)
	CodeUnauthenticated             // no, a bad or an expired token; a wrong password
	CodePermission                  // a user outside "guardians" asked for an admin operation
	CodeOverloaded                  // a bounded table is full (gRPC RESOURCE_EXHAUSTED)
	CodeUnimplemented               // a Dgraph feature Weft does not have
)

// Error is what the endpoints answer: a code and Dgraph's wording where
// clients match on it ("Please retry", "Token is expired").
type Error struct {
	Code Code
	Msg  string
	Err  error // the cause, if any
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errorf(c Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: c, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Dgraph's messages, matched by clients.
const (
	msgAborted    = "Transaction has been aborted. Please retry"
	msgOverloaded = "429 Too Many Requests. Please throttle your requests"
	msgExpired    = "Token is expired"
)

// errAborted reports a conflict: pydgraph raises AbortedError on ABORTED
// and its retry helpers run the transaction again.
func errAborted(cause error) *Error {
	msg := msgAborted
	if cause != nil {
		msg = fmt.Sprintf("%s (%v)", msgAborted, cause)
	}
	return &Error{Code: CodeAborted, Msg: msg, Err: cause}
}

// classify turns an error of the layers below into an *Error.
func classify(err error) *Error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeUnknown, Msg: err.Error(), Err: err}
	case errors.Is(err, engineapi.ErrOverloaded), errors.Is(err, dgraph.ErrBusy):
		return &Error{Code: CodeOverloaded, Msg: msgOverloaded + ": " + err.Error(), Err: err}
	case dgraph.Retryable(err):
		return errAborted(err)
	case errors.As(err, new(*dql.Error)), errors.As(err, new(*rdf.Error)):
		return &Error{Code: CodeInvalid, Msg: err.Error(), Err: err}
	case errors.Is(err, dgraph.ErrUnsupported):
		return &Error{Code: CodeUnimplemented, Msg: err.Error(), Err: err}
	case errors.Is(err, dgraph.ErrInvalid), errors.Is(err, dgraph.ErrNoIndex), errors.Is(err, txn.ErrTooLarge),
		errors.Is(err, dgraph.ErrLimit), errors.Is(err, engineapi.ErrBadRequest), errors.Is(err, txn.ErrInvalid):
		return &Error{Code: CodeInvalid, Msg: err.Error(), Err: err}
	}
	return &Error{Code: CodeUnknown, Msg: err.Error(), Err: err}
}

// wrap is classify for returns: nil stays a nil error.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return classify(err)
}
