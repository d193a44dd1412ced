package api

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Code is the stable code of an API error, the same in HTTP bodies, gRPC
// Error details and every client. Codes are never renamed or reused.
type Code string

// The codes. CodeOK labels successful requests in metrics only.
const (
	CodeOK               Code = "OK"
	CodeAborted          Code = "ABORTED"
	CodeSnapshotTooOld   Code = "SNAPSHOT_TOO_OLD"
	CodeInvalidArgument  Code = "INVALID_ARGUMENT"
	CodeTooLarge         Code = "TOO_LARGE"
	CodeNotFound         Code = "NOT_FOUND"
	CodeUnknownProgram   Code = "UNKNOWN_PROGRAM"
	CodeAlreadyExists    Code = "ALREADY_EXISTS"
	CodeOverloaded       Code = "OVERLOADED"
	CodeUnavailable      Code = "UNAVAILABLE"
	CodeDeadlineExceeded Code = "DEADLINE_EXCEEDED"
	CodeCancelled        Code = "CANCELLED"
	CodeInternal         Code = "INTERNAL"
	// CodeMethodNotAllowed is HTTP only: a known path asked with the wrong method.
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
)

// codeInfo is everything the faces need to know about one code.
type codeInfo struct {
	http      int
	grpc      codes.Code
	pb        pb.ErrorCode
	retryable bool
}

// codeTable is the one mapping of codes to statuses (docs/api.md repeats it).
var codeTable = map[Code]codeInfo{
	CodeAborted:          {http.StatusConflict, codes.Aborted, pb.ErrorCode_ABORTED, true},
	CodeSnapshotTooOld:   {http.StatusConflict, codes.Aborted, pb.ErrorCode_SNAPSHOT_TOO_OLD, true},
	CodeInvalidArgument:  {http.StatusBadRequest, codes.InvalidArgument, pb.ErrorCode_INVALID_ARGUMENT, false},
	CodeTooLarge:         {http.StatusRequestEntityTooLarge, codes.InvalidArgument, pb.ErrorCode_TOO_LARGE, false},
	CodeNotFound:         {http.StatusNotFound, codes.NotFound, pb.ErrorCode_NOT_FOUND, false},
	CodeUnknownProgram:   {http.StatusNotFound, codes.NotFound, pb.ErrorCode_UNKNOWN_PROGRAM, false},
	CodeAlreadyExists:    {http.StatusConflict, codes.AlreadyExists, pb.ErrorCode_ALREADY_EXISTS, false},
	CodeOverloaded:       {http.StatusTooManyRequests, codes.ResourceExhausted, pb.ErrorCode_OVERLOADED, true},
	CodeUnavailable:      {http.StatusServiceUnavailable, codes.Unavailable, pb.ErrorCode_UNAVAILABLE, false},
	CodeDeadlineExceeded: {http.StatusGatewayTimeout, codes.DeadlineExceeded, pb.ErrorCode_DEADLINE_EXCEEDED, false},
	CodeCancelled:        {499, codes.Canceled, pb.ErrorCode_CANCELLED, false},
	CodeInternal:         {http.StatusInternalServerError, codes.Internal, pb.ErrorCode_INTERNAL, false},
	CodeMethodNotAllowed: {http.StatusMethodNotAllowed, codes.Unimplemented, pb.ErrorCode_INVALID_ARGUMENT, false},
}

// Retryable reports whether retrying (a whole transaction, after a pause) may
// succeed where this code failed.
func (c Code) Retryable() bool { return codeTable[c].retryable }

// HTTPStatus is the HTTP status answered with c.
func (c Code) HTTPStatus() int {
	if c == CodeOK {
		return http.StatusOK
	}
	if i, ok := codeTable[c]; ok {
		return i.http
	}
	return http.StatusInternalServerError
}

// sentinels maps error values to codes, most specific first (ErrAborted and
// txn.ErrAborted are the same value; ErrUnknownProgram before nothing).
var sentinels = []struct {
	err  error
	code Code
}{
	{engine.ErrSnapshotTooOld, CodeSnapshotTooOld},
	{engine.ErrAborted, CodeAborted},
	{engine.ErrOverloaded, CodeOverloaded},
	{engine.ErrClosed, CodeUnavailable},
	{store.ErrFailed, CodeUnavailable}, // a commit's outcome unknown; the engine stopped
	{engine.ErrUnknownProgram, CodeUnknownProgram},
	{txn.ErrTooLarge, CodeTooLarge},
	{txn.ErrNotFound, CodeNotFound},
	{txn.ErrExists, CodeAlreadyExists},
	{txn.ErrInvalid, CodeInvalidArgument},
	{engine.ErrBadRequest, CodeInvalidArgument},
	{value.ErrMalformed, CodeInvalidArgument},
	{value.ErrType, CodeInvalidArgument},
	{context.DeadlineExceeded, CodeDeadlineExceeded},
	{context.Canceled, CodeCancelled},
}

// CodeOf classifies an error from the engine or from request checking.
// Unclassified errors are INTERNAL.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
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
	return CodeInternal
}

// Error is a request error produced by the front end itself (malformed input,
// a body over its limit), already classified.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(msg string) error { return &Error{Code: CodeInvalidArgument, Message: msg} }
