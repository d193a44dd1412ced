package dgraph

import "errors"

// Errors. Bad input wraps ErrInvalid (or ErrUnsupported) and changes
// nothing. ErrBusy and errors wrapping engineapi.ErrAborted are retryable.
var (
	// ErrInvalid is a mutation, value or schema the mapping rejects.
	ErrInvalid = errors.New("dgraph: invalid input")
	// ErrUnsupported is valid Dgraph input this version does not handle.
	ErrUnsupported = errors.New("dgraph: not supported")
	// ErrBusy answers a mutation of a predicate whose index, reverse edges
	// or counts an alter is building or dropping: retry later.
	ErrBusy = errors.New("dgraph: predicate is being re-indexed (retry)")
	// ErrNoIndex answers a lookup the predicate's indexes cannot serve.
	ErrNoIndex = errors.New("dgraph: predicate has no suitable index")
	// ErrCorrupt reports stored data that does not follow the layout.
	ErrCorrupt = errors.New("dgraph: corrupt stored data")
	// ErrLimit reports an internal bound reached (a read of too many edges,
	// too many blank nodes in a load).
	ErrLimit = errors.New("dgraph: limit reached")
	// ErrPlacement refuses to open a store with a placement other than the
	// one it was created with (Config.Placement).
	ErrPlacement = errors.New("dgraph: wrong placement")
)
