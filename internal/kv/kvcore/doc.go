// Package kvcore is the pure part of the key-value face that clients and
// servers share: versions (vector clocks over client sessions) and their
// order, a key's siblings and the replica's PUT rule (Apply) and the GET's
// merge (Merge), the stored form of a sibling list (codec.go), the
// consistent-hash ring, the client-side quorum logic as a pure state
// machine (Op) and the Session that makes Ops, the operating errors with
// their stable wire codes, and the HTTP/JSON wire types. internal/kv (the
// replicas, the server, the watcher) and client/kv (the Go client) both
// build on it; it holds no server code, so a client can import it without
// importing the server. internal/kv's doc describes the data model, the
// protocol and the endpoints.
//
// # Invariants (checked with -tags invariants, and by the tests)
//
//   - a sibling list Apply returns is pairwise concurrent, in canonical
//     order;
//   - a ring's tokens are sorted by (hash, server);
//   - version order is causal order (tested against an explicit oracle);
//     Descend's pruning can only turn "ordered" into "concurrent".
//
// # Concurrency
//
// Version, Sibling, Ring, Quorum and the wire types are values, safe to
// share. Op and Session are pure cores: no goroutines, clocks, I/O or
// randomness, and not safe for concurrent use.
package kvcore
