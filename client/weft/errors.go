package weft

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weft-db/weft/internal/wire/apicode"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Code is the stable code of a server error (docs/api.md lists them). It
// is the server's own type (one table for both sides): its Retryable method
// says whether retrying may succeed.
type Code = apicode.Code

// The codes.
const (
	CodeAborted          = apicode.CodeAborted
	CodeSnapshotTooOld   = apicode.CodeSnapshotTooOld
	CodeInvalidArgument  = apicode.CodeInvalidArgument
	CodeTooLarge         = apicode.CodeTooLarge
	CodeNotFound         = apicode.CodeNotFound
	CodeUnknownProgram   = apicode.CodeUnknownProgram
	CodeAlreadyExists    = apicode.CodeAlreadyExists
	CodeOverloaded       = apicode.CodeOverloaded
	CodeUnavailable      = apicode.CodeUnavailable
	CodeDeadlineExceeded = apicode.CodeDeadlineExceeded
	CodeCancelled        = apicode.CodeCancelled
	CodeInternal         = apicode.CodeInternal
)

// Error is an error answered by the server (or a transport failure, as
// CodeUnavailable).
type Error struct {
	Code    Code
	Message string
	// Retryable reports whether retrying the whole transaction, after a
	// pause, may succeed.
	Retryable bool
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "weft: " + string(e.Code)
	}
	return e.Message
}

// Is lets errors.Is match on the code alone: errors.Is(err, weft.ErrAborted).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels to match with errors.Is.
var (
	ErrAborted         = sentinel(CodeAborted)
	ErrSnapshotTooOld  = sentinel(CodeSnapshotTooOld)
	ErrInvalidArgument = sentinel(CodeInvalidArgument)
	ErrTooLarge        = sentinel(CodeTooLarge)
	ErrNotFound        = sentinel(CodeNotFound)
	ErrUnknownProgram  = sentinel(CodeUnknownProgram)
	ErrAlreadyExists   = sentinel(CodeAlreadyExists)
	ErrOverloaded      = sentinel(CodeOverloaded)
	ErrUnavailable     = sentinel(CodeUnavailable)
	ErrInternal        = sentinel(CodeInternal)

	// ErrTxDone is returned by a Tx used after Commit.
	ErrTxDone = errors.New("weft: transaction already committed")

	// ErrUnknownOutcome wraps the error of a commit that may have been
	// applied: its request was sent, then the connection broke, the
	// gatekeeper closed (possibly after making it durable) or the deadline
	// passed. The error also matches its cause (ErrUnavailable,
	// context.DeadlineExceeded, …). It is not retryable: Update returns it,
	// and the caller must read to learn whether the transaction committed
	// (or make it idempotent, e.g. with client-chosen handles). A commit
	// that failed before its request was sent is not wrapped.
	ErrUnknownOutcome = errors.New("weft: commit outcome unknown")
)

// sentinel is the error matching every answer with code c.
func sentinel(c Code) *Error { return &Error{Code: c, Retryable: c.Retryable()} }

// unknownOutcome is a commit error that matches both ErrUnknownOutcome and
// its cause; its message is the cause's, as the server or gRPC said it.
type unknownOutcome struct{ err error }

func (e *unknownOutcome) Error() string { return e.err.Error() }

func (e *unknownOutcome) Unwrap() []error { return []error{ErrUnknownOutcome, e.err} }

// IsRetryable reports whether err is a server error worth retrying the whole
// transaction for (after a pause): ABORTED, SNAPSHOT_TOO_OLD or OVERLOADED.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}

// transportCodes classifies gRPC statuses that carry no Weft error detail
// (the server was not reached, a proxy answered, or gRPC itself refused:
// RESOURCE_EXHAUSTED without a detail is a message over the size bound, not
// OVERLOADED). Every other entry is a code whose own gRPC code it is
// (Code.GRPC), the more general one where two share it; a test checks this.
var transportCodes = map[codes.Code]Code{
	codes.Unavailable:       CodeUnavailable,
	codes.ResourceExhausted: CodeTooLarge,
	codes.InvalidArgument:   CodeInvalidArgument,
	codes.NotFound:          CodeNotFound,
	codes.AlreadyExists:     CodeAlreadyExists,
	codes.Aborted:           CodeAborted,
}

// fromPB is the client's error for a server's Error detail.
func fromPB(e *pb.Error) *Error {
	return &Error{Code: apicode.FromPB(e.GetCode()), Message: e.GetMessage(), Retryable: e.GetRetryable()}
}

// fromRPC turns an RPC error into the client's errors: an *Error for server
// answers, the context's error when the call's context ended.
func fromRPC(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ou *outcomeUnknown
	if errors.As(err, &ou) {
		return &unknownOutcome{err: fromRPC(ctx, ou.err)}
	}
	st, ok := status.FromError(err)
	if !ok {
		return &Error{Code: CodeUnavailable, Message: "weft: " + err.Error()}
	}
	for _, d := range st.Details() {
		if e, ok := d.(*pb.Error); ok {
			return fromPB(e)
		}
	}
	switch st.Code() {
	case codes.DeadlineExceeded, codes.Canceled:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if st.Code() == codes.Canceled {
			return context.Canceled
		}
		return context.DeadlineExceeded
	}
	code, ok := transportCodes[st.Code()]
	if !ok {
		code = CodeInternal
	}
	return &Error{Code: code, Message: "weft: " + st.Message(), Retryable: code.Retryable()}
}
