// Package kv is the Go client of Weft's replicated key-value face (`weft kv
// serve`, internal/kv). As in Voldemort, the client does the replication
// (§II-B of "Optimistic Execution in Key-Value Store"): it learns the ring
// from any server's metadata, sends each GET or PUT to the key's N replicas
// over HTTP/JSON, and succeeds with R answers or W acknowledgements, making
// a second round to the replicas that have not answered when the first
// round times out.
//
// Consistency is the caller's choice, per client (Options.R, Options.W) or
// per request (WithQuorum): W + R > N with W > N/2 is sequential; W + R ≤ N
// is eventual, and a GET may then miss an acknowledged PUT.
//
// A key holds a list of siblings ⟨version, value⟩. Get returns every
// concurrent value; Put takes the versions the caller saw (Get's Context)
// and supersedes exactly those, so concurrent writers leave siblings
// instead of losing updates; Write is get-then-put (Voldemort's
// StoreClient.put). The quorum logic is the pure Op state machine of
// internal/kv/kvcore (shared with the servers); this package is its
// network shell, and imports nothing of the server.
//
// Rollback (`weft monitor --rollback`): while servers are fenced, requests
// fail with ErrPaused (retryable, wrapped in ErrQuorum); answers carry the
// rollback generation, and Generation reports the highest seen — when it
// grows, work based on earlier reads must be redone. With
// Options.FollowAdvice the session adopts the R and W the coordinator
// advises when violations are frequent.
//
// A Client is safe for concurrent use. Each Client is one session: one
// actor id in the versions it writes (random, 64 bits).
package kv
