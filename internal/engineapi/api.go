package engineapi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// API is what Weft's front ends (gRPC, HTTP/JSON, the CLI, embedded use) call.
// The engine's *DB implements it (package engine), and so do a cluster's
// gatekeeper and the views the faces build over one. Every method is safe
// for concurrent use.
//
// Transactions are interactive and client-driven, as in Weaver: a client gets
// a snapshot from Begin, reads at it (each read returns the version it saw),
// buffers writes, and sends reads and writes to Commit, which validates the
// reads (optimistic concurrency), orders the transaction and makes it durable.
// A read-only transaction needs no Commit: its reads all happened at one
// snapshot. Commit answers an error matching ErrAborted when the client
// should retry the whole transaction.
type API interface {
	// Begin returns a snapshot for a transaction's reads.
	Begin(ctx context.Context) (Snapshot, error)
	// GetVertex reads one vertex at snap; a missing vertex is not an error
	// (Exists false) so that its absence can be validated too.
	GetVertex(ctx context.Context, snap Snapshot, v VertexRef, opts ReadOptions) (*Vertex, error)
	// GetEdge reads one out-edge of src at snap (Exists false when missing).
	GetEdge(ctx context.Context, snap Snapshot, src VertexRef, edge string) (*Edge, error)
	// Commit validates reads and applies ops atomically.
	Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*CommitResult, error)
	// Run runs a node program (or a whole-snapshot analysis) by name. With
	// at == nil it runs at a fresh timestamp; otherwise at that snapshot
	// (a historic query when it is old). The result is plain JSON.
	Run(ctx context.Context, program string, params json.RawMessage, at *Snapshot) (json.RawMessage, error)
	// Programs lists the programs Run accepts, with a one-line description each.
	Programs() []ProgramInfo
	// Status reports health and sizes.
	Status(ctx context.Context) (*Status, error)
}

// Snapshot names a consistent point of the graph's history. Token is opaque to
// clients (it encodes a refinable timestamp); they pass it back unchanged.
type Snapshot struct {
	Token string `json:"token"`
}

// VertexRef names a vertex by handle, or by alias when Alias is true.
type VertexRef struct {
	Name  string `json:"name"`
	Alias bool   `json:"alias,omitempty"`
}

// ReadOptions select the parts of a vertex to return (all by default through
// DefaultReadOptions).
type ReadOptions struct {
	Props   bool
	Edges   bool
	Aliases bool
	// EdgesMax bounds the out-edges returned (0: EdgesMaxDefault).
	EdgesMax int
}

// DefaultReadOptions returns everything, up to EdgesMaxDefault edges.
func DefaultReadOptions() ReadOptions { return ReadOptions{Props: true, Edges: true, Aliases: true} }

// EdgesMaxDefault bounds the edges of one GetVertex answer unless asked otherwise.
const EdgesMaxDefault = 10000

// Vertex is a vertex as seen at a snapshot.
type Vertex struct {
	Handle  string                 `json:"handle"`
	Exists  bool                   `json:"exists"`
	Props   map[string]value.Value `json:"props,omitempty"`
	Aliases []string               `json:"aliases,omitempty"`
	Edges   []Edge                 `json:"edges,omitempty"`
	// EdgesTruncated is set when more edges exist than were returned.
	EdgesTruncated bool `json:"edges_truncated,omitempty"`
	// Read is the read-set entry to send with Commit.
	Read txn.Read `json:"-"`
	// AliasRead is the alias's read-set entry when the vertex was named by
	// alias (send it with Commit too), nil otherwise.
	AliasRead *txn.Read `json:"-"`
}

// Edge is an out-edge as seen at a snapshot.
type Edge struct {
	Handle string                 `json:"handle"`
	Src    string                 `json:"src"`
	Dst    string                 `json:"dst"`
	Exists bool                   `json:"exists"`
	Props  map[string]value.Value `json:"props,omitempty"`
	// Read is the read-set entry (the source vertex's version) to send with Commit.
	Read txn.Read `json:"-"`
	// AliasRead is the alias's read-set entry when the source was named by alias.
	AliasRead *txn.Read `json:"-"`
}

// CommitResult reports a committed transaction.
type CommitResult struct {
	// Handles of created vertices and edges in operation order (generated ones included).
	Handles []string `json:"handles"`
	// Snapshot is the transaction's timestamp: reading at it shows the transaction.
	Snapshot Snapshot `json:"snapshot"`
}

// ProgramInfo describes one runnable program.
type ProgramInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Kind is "program" (a node program) or "analysis" (a whole-snapshot
	// analysis); both run through Run.
	Kind string `json:"kind"`
	// Params lists the params object's fields in declaration order.
	Params []ProgramParam `json:"params"`
}

// ProgramParam is one field of a program's params object: its JSON name
// and type ("string", "bool", "int", "number", "string[]", "filter",
// "filter[]", "json", … as nodeprog.Param documents).
type ProgramParam struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Status is the server's health and size summary.
type Status struct {
	Gatekeepers int    `json:"gatekeepers"`
	Shards      int    `json:"shards"`
	Vertices    int64  `json:"vertices"`
	Edges       int64  `json:"edges"`
	Epoch       uint64 `json:"epoch"`
	Commits     uint64 `json:"commits"`
	Aborts      uint64 `json:"aborts"`
	Programs    uint64 `json:"programs"`
	KronosCalls uint64 `json:"kronos_calls"`
	// NopRequests counts shards asking a gatekeeper for a NOP: a read or
	// program waited for an idle gatekeeper's queue to move past it.
	NopRequests uint64 `json:"nop_requests"`
	// PointReads counts snapshots and programs stamped at a read point
	// (before the transactions in flight, so as not to wait for them).
	PointReads uint64 `json:"point_reads"`
}

// Mover is an engine whose placement units move between shards online
// (docs/online-moves.md): package engine's DB, ClusterGatekeeper, and a
// Switch over one.
type Mover interface {
	// MoveUnit moves unit u to shard to (engine's DB.MoveUnit).
	MoveUnit(ctx context.Context, u txn.Unit, to int) error
	// Directory is the placement directory as this engine knows it (nil:
	// none available now): a cluster gatekeeper's copy may lag other
	// gatekeepers' moves.
	Directory() *txn.Directory
	// CurrentDirectory is the store's directory now (a cluster gatekeeper
	// reads it again).
	CurrentDirectory(ctx context.Context) (*txn.Directory, error)
}

// Errors returned by the API. Bad input wraps txn.ErrInvalid, txn.ErrNotFound,
// txn.ErrExists or txn.ErrTooLarge, or ErrBadRequest; retryable failures wrap
// ErrAborted (a conflict) or ErrSnapshotTooOld; ErrOverloaded asks the client
// to back off; ErrClosed means the server is shutting down.
var (
	ErrAborted        = txn.ErrAborted
	ErrBadRequest     = errors.New("weft: bad request")
	ErrUnknownProgram = errors.New("weft: unknown program")
	ErrSnapshotTooOld = errors.New("weft: snapshot too old (its versions were garbage collected)")
	ErrOverloaded     = errors.New("weft: overloaded, retry later")
	ErrClosed         = errors.New("weft: closed")
)
