package nodeprog

import (
	"errors"
	"fmt"
)

// Sentinel errors. ErrBadParams and ErrUnknownProgram mean the request was
// wrong and nothing ran; the others end a running program.
var (
	ErrUnknownProgram = errors.New("nodeprog: unknown program")
	ErrBadParams      = errors.New("nodeprog: bad params")
	// ErrOverloaded: a runner is full (state entries or concurrent programs);
	// retrying later may succeed.
	ErrOverloaded = errors.New("nodeprog: overloaded")
	// ErrTooLarge: the program exceeded a per-program bound (hops, results,
	// batches in flight); retrying the same request will fail again.
	ErrTooLarge = errors.New("nodeprog: program too large")
	// ErrFailed: the program itself reported an error (e.g. a negative edge
	// weight for shortest_path).
	ErrFailed = errors.New("nodeprog: program failed")
	// ErrFinished: a batch arrived for a program this runner already
	// finished (early termination); the batch is dropped.
	ErrFinished = errors.New("nodeprog: program finished")
	// ErrNotDone: Result was asked before the program completed.
	ErrNotDone = errors.New("nodeprog: program not done")
	// ErrSnapshotTooOld: a shard collected the versions below the program's
	// stamp before a batch of it ran there (its garbage-collection
	// watermark passed the stamp); nothing wrong was answered.
	ErrSnapshotTooOld = errors.New("nodeprog: snapshot too old")
)

// ParamError is a bad-params error that names the offending field. It
// unwraps to ErrBadParams.
type ParamError struct {
	Program string // program or analysis name
	Field   string // JSON path of the field, e.g. "edge_props[1].rel"; "" for the whole object
	Msg     string
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%v: %s: %s", ErrBadParams, e.Program, e.Msg)
	}
	return fmt.Sprintf("%v: %s: %s: %s", ErrBadParams, e.Program, e.Field, e.Msg)
}

func (e *ParamError) Unwrap() error { return ErrBadParams }

// badParam builds a ParamError.
func badParam(prog, field, format string, args ...any) error {
	return &ParamError{Program: prog, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Error codes carried in a Report across the wire; stable strings.
const (
	codeOverloaded = "overloaded"
	codeTooLarge   = "too_large"
	codeFailed     = "failed"
	codeFinished   = "finished"
	codeBadParams  = "bad_params"
	codeUnknown    = "unknown_program"
	codeTooOld     = "snapshot_too_old"
)

func errCode(err error) string {
	switch {
	case errors.Is(err, ErrOverloaded):
		return codeOverloaded
	case errors.Is(err, ErrTooLarge):
		return codeTooLarge
	case errors.Is(err, ErrFinished):
		return codeFinished
	case errors.Is(err, ErrBadParams):
		return codeBadParams
	case errors.Is(err, ErrUnknownProgram):
		return codeUnknown
	case errors.Is(err, ErrSnapshotTooOld):
		return codeTooOld
	}
	return codeFailed
}

// codeErr turns a wire code and message back into an error wrapping the
// matching sentinel.
func codeErr(code, msg string) error {
	var base error
	switch code {
	case codeOverloaded:
		base = ErrOverloaded
	case codeTooLarge:
		base = ErrTooLarge
	case codeFinished:
		base = ErrFinished
	case codeBadParams:
		base = ErrBadParams
	case codeUnknown:
		base = ErrUnknownProgram
	case codeTooOld:
		base = ErrSnapshotTooOld
	default:
		base = ErrFailed
	}
	return &remoteError{base: base, msg: msg}
}

// remoteError is an error that crossed the wire: its text as the sender
// wrote it, unwrapping to the sentinel its code names.
type remoteError struct {
	base error
	msg  string
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.base }

// assert panics on a programmer error (a broken invariant), never on bad
// input. On a hot path call it only once the check failed (if !ok {
// assert(false, …) }): its arguments are boxed before the call.
func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("nodeprog: assertion failed: "+format, args...))
	}
}

// errBadEmit: an emitted value that its program could not have produced
// (only a corrupt or forged report carries one).
var errBadEmit = errors.New("nodeprog: malformed emitted value")

// FailReport is the report of a batch a shard could not run at all (for
// example its task queue is full): it consumes the batch and ends the
// program with err, which crosses the wire as a stable code.
func FailReport(b Batch, shard int, err error) Report {
	return Report{Prog: b.Prog, Shard: shard, Consumed: []BatchID{b.ID}, Code: errCode(err), Err: err.Error()}
}
