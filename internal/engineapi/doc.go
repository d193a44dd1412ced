// Package engineapi is the contract between Weft's engine and its faces:
// the API interface (seven methods: Begin, GetVertex, GetEdge, Commit,
// Run, Programs, Status), its value types (Snapshot, VertexRef,
// ReadOptions, Vertex, Edge, CommitResult, ProgramInfo, Status), the
// optional batched read (BatchReader, with GetVertices and its explicit
// per-vertex fallback GetVerticesEach), the Mover of online placement
// moves, and the sentinel errors the API answers.
//
// Package engine implements the contract (its DB, a cluster's gatekeeper)
// and aliases these names, so engine.API and engineapi.API are one type.
// A face that only reads and commits — the DQL packages of the Dgraph
// wing — imports this package and not the engine: it can be run over any
// implementation (a test fake, a view that renames vertices, a cluster
// gatekeeper) and cannot reach the engine's internals.
//
// Invariants: the package holds declarations and pure helpers only; it
// imports no engine, shell or transport (txn and value for the types of
// reads, writes and properties).
//
// Concurrency: every API method is safe for concurrent use (the
// interface's contract); GetVertices and GetVerticesEach are safe when
// the API is, GetVerticesEach running at most 16 GetVertex calls at a time.
package engineapi
