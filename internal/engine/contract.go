package engine

import (
	"github.com/weft-db/weft/internal/engineapi"
)

// The API every face programs against, its value types and its errors
// live in package engineapi (documented there); the engine implements
// them. These aliases keep the names engine.API, engine.Snapshot, ... for
// the engine and for callers that also need the implementation.
type (
	API          = engineapi.API
	Snapshot     = engineapi.Snapshot
	VertexRef    = engineapi.VertexRef
	ReadOptions  = engineapi.ReadOptions
	Vertex       = engineapi.Vertex
	Edge         = engineapi.Edge
	CommitResult = engineapi.CommitResult
	ProgramInfo  = engineapi.ProgramInfo
	ProgramParam = engineapi.ProgramParam
	Status       = engineapi.Status
	Mover        = engineapi.Mover
)

// DefaultReadOptions is engineapi.DefaultReadOptions.
func DefaultReadOptions() ReadOptions { return engineapi.DefaultReadOptions() }

// EdgesMaxDefault is engineapi.EdgesMaxDefault.
const EdgesMaxDefault = engineapi.EdgesMaxDefault

// Errors returned by the API (engineapi's: the same values).
var (
	ErrAborted        = engineapi.ErrAborted
	ErrBadRequest     = engineapi.ErrBadRequest
	ErrUnknownProgram = engineapi.ErrUnknownProgram
	ErrSnapshotTooOld = engineapi.ErrSnapshotTooOld
	ErrOverloaded     = engineapi.ErrOverloaded
	ErrClosed         = engineapi.ErrClosed
)

var (
	_ Mover = (*DB)(nil)
	_ Mover = (*ClusterGatekeeper)(nil)
	_ Mover = (*Switch)(nil)
)
