// Package coordclient is the coordinator's client, in the wire layer: it
// speaks the Coord gRPC API (internal/wire/coordpb) to a replica group,
// follows leader hints, and retries on another replica after NOT_LEADER,
// NOT_READY, OVERLOADED, SHUTTING_DOWN or a transport error. It imports
// nothing of the coordinator itself (no raft, no state machine), so the Go
// clients (client/weft) and the tools can use it without reaching a server.
//
// An answer with a code that is not retryable is an *Error; a FENCED answer
// is ErrFenced, after which the member must stop serving and may only come
// back by registering again (internal/coord's RunMember does so).
//
// Client is safe for concurrent use.
package coordclient
