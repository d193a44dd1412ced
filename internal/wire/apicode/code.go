package apicode

import (
	"net/http"

	"google.golang.org/grpc/codes"

	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Code is the stable code of an API error, the same in HTTP bodies, gRPC
// Error details and every client.
type Code string

// The codes. CodeOK labels successful requests in metrics only; it has no
// row in the table.
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
	// CodeMethodNotAllowed is HTTP only: a known path asked with the wrong
	// method. It has no wire code of its own.
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
)

// row is everything the faces and the clients know of one code.
type row struct {
	http      int
	grpc      codes.Code
	pb        pb.ErrorCode
	retryable bool
	httpOnly  bool // answered by the HTTP face only; pb is what gRPC would say
}

// table is the one mapping of codes to statuses (docs/api.md §5 repeats it).
var table = map[Code]row{
	CodeAborted:          {http.StatusConflict, codes.Aborted, pb.ErrorCode_ABORTED, true, false},
	CodeSnapshotTooOld:   {http.StatusConflict, codes.Aborted, pb.ErrorCode_SNAPSHOT_TOO_OLD, true, false},
	CodeInvalidArgument:  {http.StatusBadRequest, codes.InvalidArgument, pb.ErrorCode_INVALID_ARGUMENT, false, false},
	CodeTooLarge:         {http.StatusRequestEntityTooLarge, codes.InvalidArgument, pb.ErrorCode_TOO_LARGE, false, false},
	CodeNotFound:         {http.StatusNotFound, codes.NotFound, pb.ErrorCode_NOT_FOUND, false, false},
	CodeUnknownProgram:   {http.StatusNotFound, codes.NotFound, pb.ErrorCode_UNKNOWN_PROGRAM, false, false},
	CodeAlreadyExists:    {http.StatusConflict, codes.AlreadyExists, pb.ErrorCode_ALREADY_EXISTS, false, false},
	CodeOverloaded:       {http.StatusTooManyRequests, codes.ResourceExhausted, pb.ErrorCode_OVERLOADED, true, false},
	CodeUnavailable:      {http.StatusServiceUnavailable, codes.Unavailable, pb.ErrorCode_UNAVAILABLE, false, false},
	CodeDeadlineExceeded: {http.StatusGatewayTimeout, codes.DeadlineExceeded, pb.ErrorCode_DEADLINE_EXCEEDED, false, false},
	CodeCancelled:        {499, codes.Canceled, pb.ErrorCode_CANCELLED, false, false},
	CodeInternal:         {http.StatusInternalServerError, codes.Internal, pb.ErrorCode_INTERNAL, false, false},
	CodeMethodNotAllowed: {http.StatusMethodNotAllowed, codes.Unimplemented, pb.ErrorCode_INVALID_ARGUMENT, false, true},
}

// fromPB inverts the table's wire codes (HTTP-only rows left out).
var fromPB = func() map[pb.ErrorCode]Code {
	m := make(map[pb.ErrorCode]Code, len(table))
	for c, r := range table {
		if !r.httpOnly {
			m[r.pb] = c
		}
	}
	return m
}()

// Known reports whether c is an error code of the table (CodeOK is not).
func (c Code) Known() bool {
	_, ok := table[c]
	return ok
}

// Retryable reports whether retrying (a whole transaction, after a pause)
// may succeed where this code failed: ABORTED, SNAPSHOT_TOO_OLD, OVERLOADED.
func (c Code) Retryable() bool { return table[c].retryable }

// HTTPStatus is the HTTP status answered with c: 200 for CodeOK, 500 for a
// code the table does not know.
func (c Code) HTTPStatus() int {
	if c == CodeOK {
		return http.StatusOK
	}
	if r, ok := table[c]; ok {
		return r.http
	}
	return http.StatusInternalServerError
}

// GRPC is the gRPC status code answered with c; codes.Internal for a code
// the table does not know (CodeOK included: it is never answered as an
// error).
func (c Code) GRPC() codes.Code {
	if r, ok := table[c]; ok {
		return r.grpc
	}
	return codes.Internal
}

// PB is c's wire code in an Error detail; INTERNAL for a code the table
// does not know.
func (c Code) PB() pb.ErrorCode {
	if r, ok := table[c]; ok {
		return r.pb
	}
	return pb.ErrorCode_INTERNAL
}

// FromPB is the Code of a wire code. A value the table does not know (a
// newer server's, or the unspecified zero) keeps its wire name, so nothing
// the server said is lost.
func FromPB(e pb.ErrorCode) Code {
	if c, ok := fromPB[e]; ok {
		return c
	}
	return Code(e.String())
}
