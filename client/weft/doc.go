// Package weft is the Go client of Weft, a strictly serializable graph
// database, over its gRPC API (docs/api.md).
//
// Transactions are interactive and optimistic. Begin returns a Tx reading at
// one snapshot; its reads (GetVertex, GetEdge) are recorded with the version
// they saw, its writes (CreateVertex, SetVertexProp, …) are buffered, and
// Commit sends both: the server validates that nothing read has changed and
// applies the writes atomically, or answers ErrAborted. Update runs a
// function as a transaction and retries it on retryable failures (ErrAborted,
// ErrSnapshotTooOld, ErrOverloaded) with capped, jittered exponential backoff,
// a bounded number of times, so the function must be safe to run again: keep
// its side effects inside the transaction.
//
//	c, err := weft.Dial("127.0.0.1:7500")
//	err = c.Update(ctx, func(tx *weft.Tx) error {
//		v, err := tx.GetVertex(ctx, weft.Alias("alice"))
//		if err != nil {
//			return err
//		}
//		n, _ := v.Props["visits"].(int64)
//		tx.SetVertexProp(weft.Handle(v.Handle), "visits", n+1)
//		return nil
//	})
//
// Property values are plain Go values: string, int64 (any integer type is
// accepted), float64 (finite), bool, time.Time, and []any of these (any slice
// is accepted); reads return exactly those types.
//
// Errors from the server are *Error values with a stable Code; match them with
// errors.Is against the sentinels (ErrAborted, ErrNotFound, …) or ask
// IsRetryable. A commit that was sent but never answered fails with an error
// matching ErrUnknownOutcome (and its cause): it may have committed, so it
// is never retried automatically.
//
// Dial connects to one server. DialCoordinator connects to a cluster: it
// learns the live gatekeepers from the coordinator and follows its
// configuration (coord.go: a gRPC resolver of its own, round_robin over the
// gatekeepers), and retries a call that lost its gatekeeper on another one
// within the call's deadline — every call but a commit that may have been
// sent.
//
// A Client is safe for concurrent use; a Tx is not. Close stops every
// goroutine the Client started.
package weft
