package kv

import "github.com/weft-db/weft/internal/kv/kvcore"

// The pure part of the face lives in kvcore, shared with client/kv; these
// names keep it reachable as kv.X for the servers, the tools and the tests.

// Types of kvcore.
type (
	Advice             = kvcore.Advice
	CandidateJSON      = kvcore.CandidateJSON
	CandidatesResponse = kvcore.CandidatesResponse
	Code               = kvcore.Code
	DetectorStats      = kvcore.DetectorStats
	Entry              = kvcore.Entry
	ErrorBody          = kvcore.ErrorBody
	ErrorJSON          = kvcore.ErrorJSON
	GetRequest         = kvcore.GetRequest
	GetResponse        = kvcore.GetResponse
	HVCJSON            = kvcore.HVCJSON
	Kind               = kvcore.Kind
	Meta               = kvcore.Meta
	Op                 = kvcore.Op
	OutboxStats        = kvcore.OutboxStats
	Outcome            = kvcore.Outcome
	PauseRequest       = kvcore.PauseRequest
	PauseResponse      = kvcore.PauseResponse
	PutRequest         = kvcore.PutRequest
	PutResponse        = kvcore.PutResponse
	Quorum             = kvcore.Quorum
	ReplicaStats       = kvcore.ReplicaStats
	Reply              = kvcore.Reply
	RestoreRequest     = kvcore.RestoreRequest
	RestoreResponse    = kvcore.RestoreResponse
	Result             = kvcore.Result
	Ring               = kvcore.Ring
	Send               = kvcore.Send
	ServerStats        = kvcore.ServerStats
	Session            = kvcore.Session
	Sibling            = kvcore.Sibling
	StampJSON          = kvcore.StampJSON
	TxnRequest         = kvcore.TxnRequest
	TxnResponse        = kvcore.TxnResponse
	TxnWriteJSON       = kvcore.TxnWriteJSON
	Version            = kvcore.Version
	VersionsRequest    = kvcore.VersionsRequest
	VersionsResponse   = kvcore.VersionsResponse
	WindowStats        = kvcore.WindowStats
)

// Constants of kvcore.
const (
	Applied             = kvcore.Applied
	CodeConflict        = kvcore.CodeConflict
	CodeInternal        = kvcore.CodeInternal
	CodeInvalid         = kvcore.CodeInvalid
	CodeNotFound        = kvcore.CodeNotFound
	CodeOK              = kvcore.CodeOK
	CodeOverloaded      = kvcore.CodeOverloaded
	CodePaused          = kvcore.CodePaused
	CodeQuorum          = kvcore.CodeQuorum
	CodeTooManySiblings = kvcore.CodeTooManySiblings
	CodeUnavailable     = kvcore.CodeUnavailable
	CodeVersionReused   = kvcore.CodeVersionReused
	CodeWindow          = kvcore.CodeWindow
	Duplicate           = kvcore.Duplicate
	KindGet             = kvcore.KindGet
	KindPut             = kvcore.KindPut
	Obsolete            = kvcore.Obsolete
	ServersMax          = kvcore.ServersMax
	SiblingsLimit       = kvcore.SiblingsLimit
	TickDefault         = kvcore.TickDefault
	VNodesMax           = kvcore.VNodesMax
	VersionEntriesMax   = kvcore.VersionEntriesMax
)

// Errors of kvcore (the same values: errors.Is matches across both names).
var (
	ErrClosed          = kvcore.ErrClosed
	ErrCorrupt         = kvcore.ErrCorrupt
	ErrInvalid         = kvcore.ErrInvalid
	ErrOverloaded      = kvcore.ErrOverloaded
	ErrPaused          = kvcore.ErrPaused
	ErrQuorum          = kvcore.ErrQuorum
	ErrTooManySiblings = kvcore.ErrTooManySiblings
	ErrTxnConflict     = kvcore.ErrTxnConflict
	ErrUnavailable     = kvcore.ErrUnavailable
	ErrVersionReused   = kvcore.ErrVersionReused
	ErrWindow          = kvcore.ErrWindow
)

// NewRing is kvcore.NewRing.
func NewRing(servers, vnodes int) (*Ring, error) { return kvcore.NewRing(servers, vnodes) }
