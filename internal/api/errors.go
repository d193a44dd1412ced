package api

import (
	"context"
	"errors"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/wire/apicode"
)

// sentinels maps error values to codes (internal/wire/apicode holds the
// codes and their statuses), most specific first (ErrAborted and
// txn.ErrAborted are the same value; ErrUnknownProgram before nothing).
var sentinels = []struct {
	err  error
	code apicode.Code
}{
	{engine.ErrSnapshotTooOld, apicode.CodeSnapshotTooOld},
	{engine.ErrAborted, apicode.CodeAborted},
	{engine.ErrOverloaded, apicode.CodeOverloaded},
	{engine.ErrClosed, apicode.CodeUnavailable},
	{store.ErrFailed, apicode.CodeUnavailable}, // a commit's outcome unknown; the engine stopped
	{engine.ErrUnknownProgram, apicode.CodeUnknownProgram},
	{txn.ErrTooLarge, apicode.CodeTooLarge},
	{txn.ErrNotFound, apicode.CodeNotFound},
	{txn.ErrExists, apicode.CodeAlreadyExists},
	{txn.ErrInvalid, apicode.CodeInvalidArgument},
	{engine.ErrBadRequest, apicode.CodeInvalidArgument},
	{value.ErrMalformed, apicode.CodeInvalidArgument},
	{value.ErrType, apicode.CodeInvalidArgument},
	{context.DeadlineExceeded, apicode.CodeDeadlineExceeded},
	{context.Canceled, apicode.CodeCancelled},
}

// CodeOf classifies an error from the engine or from request checking.
// Unclassified errors are INTERNAL.
func CodeOf(err error) apicode.Code {
	if err == nil {
		return apicode.CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return apicode.CodeInternal
}

// Error is a request error produced by the front end itself (malformed input,
// a body over its limit), already classified.
type Error struct {
	Code    apicode.Code
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(msg string) error { return &Error{Code: apicode.CodeInvalidArgument, Message: msg} }
