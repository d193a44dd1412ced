package kvcore

import (
	"errors"
	"fmt"
)

// Operating errors. Each crosses the wire as a stable code (Code).
var (
	// ErrInvalid is wrapped by every error about a malformed request: a bad
	// key, value, version or quorum setting. Nothing was changed.
	ErrInvalid = errors.New("kv: invalid request")
	// ErrTooManySiblings means a PUT would leave a key with more than
	// SiblingsMax concurrent values; nothing was changed. Resolve: GET, then
	// PUT with every returned version as context.
	ErrTooManySiblings = errors.New("kv: too many concurrent values")
	// ErrVersionReused means a PUT carried a version already stored with a
	// different value: its writer reused a (actor, counter) dot.
	ErrVersionReused = errors.New("kv: version reused with a different value")
	// ErrQuorum means a request did not get its R (or W) answers in two
	// rounds. A failed PUT may still have reached some replicas.
	ErrQuorum = errors.New("kv: quorum not reached")
	// ErrOverloaded means a bounded queue is full; retry later.
	ErrOverloaded = errors.New("kv: overloaded")
	// ErrClosed means the replica or client is closed.
	ErrClosed = errors.New("kv: closed")
	// ErrCorrupt means stored data failed to decode.
	ErrCorrupt = errors.New("kv: corrupt stored value")
	// ErrUnavailable means a replica could not be reached or answered an
	// internal error (an I/O failure); it counts as no answer.
	ErrUnavailable = errors.New("kv: replica unavailable")
	// ErrPaused means the server is fenced for a rollback (§IV): it refuses
	// GETs and PUTs until the rollback coordinator resumes it (or its pause
	// expires). Retry after a short wait; a session that sees a new
	// rollback generation afterwards must redo its work from the restored
	// state.
	ErrPaused = errors.New("kv: paused for rollback")
	// ErrTxnConflict means Kronos could not order a transaction after a
	// conflicting one: it aborted without effect; retry it (with a new
	// stamp).
	ErrTxnConflict = errors.New("kv: transaction conflicts with a concurrent one")
	// ErrWindow means a rollback asked for a time older than the window
	// keeps: records it would need to undo were already trimmed. Nothing
	// was changed.
	ErrWindow = errors.New("kv: rollback target older than the window")
)

// Code is an error's stable wire form.
type Code string

// The codes, one per sentinel ("" is success).
const (
	CodeOK              Code = ""
	CodeInvalid         Code = "INVALID"
	CodeTooManySiblings Code = "TOO_MANY_SIBLINGS"
	CodeVersionReused   Code = "VERSION_REUSED"
	CodeQuorum          Code = "QUORUM"
	CodeOverloaded      Code = "OVERLOADED"
	CodeUnavailable     Code = "UNAVAILABLE"
	CodeConflict        Code = "CONFLICT"
	CodeInternal        Code = "INTERNAL"
	CodeNotFound        Code = "NOT_FOUND" // no such endpoint
	CodePaused          Code = "PAUSED"
	CodeWindow          Code = "WINDOW"
)

var codes = []struct {
	code Code
	err  error
}{
	{CodeInvalid, ErrInvalid},
	{CodeTooManySiblings, ErrTooManySiblings},
	{CodeVersionReused, ErrVersionReused},
	{CodeQuorum, ErrQuorum},
	{CodeOverloaded, ErrOverloaded},
	{CodeUnavailable, ErrUnavailable},
	{CodeUnavailable, ErrClosed},
	{CodeConflict, ErrTxnConflict},
	{CodePaused, ErrPaused},
	{CodeWindow, ErrWindow},
}

// CodeOf maps an error to its code (CodeInternal for anything unknown).
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// ErrorOf maps a code and message back to an error wrapping the sentinel, so
// errors.Is works across the wire.
func ErrorOf(c Code, msg string) error {
	if c == CodeOK {
		return nil
	}
	for _, e := range codes {
		if e.code == c {
			return fmt.Errorf("%w (remote: %s)", e.err, msg)
		}
	}
	return fmt.Errorf("kv: remote error %s: %s", c, msg)
}

// sentinelOf returns the sentinel error err wraps (err itself if none).
func sentinelOf(err error) error {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.err
		}
	}
	return err
}

// Retryable reports whether a request failing with c may succeed if retried
// unchanged.
func (c Code) Retryable() bool {
	switch c {
	case CodeQuorum, CodeOverloaded, CodeUnavailable, CodeConflict, CodePaused:
		return true
	}
	return false
}

// assert panics on a programmer error (a broken internal invariant).
func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("kv: assertion failed: "+format, args...))
	}
}
