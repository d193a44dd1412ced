package dgraph

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// errReaderOnly answers the engine calls a reader-backed view never makes.
var errReaderOnly = errors.New("dgraph: a reader view only reads vertices")

// readerAPI is an engineapi.API whose reads go through a Reader (its
// snapshot argument is ignored: the reader has its own) and whose other
// methods fail. It lets every lookup of this package run through a reader.
type readerAPI struct{ r Reader }

func (a readerAPI) Begin(context.Context) (engineapi.Snapshot, error) {
	return engineapi.Snapshot{}, errReaderOnly
}

func (a readerAPI) GetVertex(ctx context.Context, _ engineapi.Snapshot, v engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	return a.r.GetVertex(ctx, v, opts)
}

// GetVertices implements engineapi.BatchReader through ReadVertices: the
// reader's batched read when it has one, else vertex by vertex. The reader
// counts its own requests: requests is 0.
func (a readerAPI) GetVertices(ctx context.Context, _ engineapi.Snapshot, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, int, error) {
	vs, err := ReadVertices(ctx, a.r, refs, opts, readerParallelMax)
	return vs, 0, err
}

// readerParallelMax bounds the concurrent GetVertex calls of a readerAPI's
// batch over a Reader that does not batch.
const readerParallelMax = 16

func (a readerAPI) GetEdge(context.Context, engineapi.Snapshot, engineapi.VertexRef, string) (*engineapi.Edge, error) {
	return nil, errReaderOnly
}

func (a readerAPI) Commit(context.Context, []txn.Read, []txn.Op) (*engineapi.CommitResult, error) {
	return nil, errReaderOnly
}

func (a readerAPI) Run(context.Context, string, json.RawMessage, *engineapi.Snapshot) (json.RawMessage, error) {
	return nil, errReaderOnly
}

func (a readerAPI) Programs() []engineapi.ProgramInfo { return nil }

func (a readerAPI) Status(context.Context) (*engineapi.Status, error) { return nil, errReaderOnly }

// Reads is a view of a Graph whose lookups read through one Reader:
// the same Eq, Lookup, Range, Has and ReadNode as the Graph's, at the
// reader's snapshot, each read going through the reader (and so recorded
// when it records). Cheap to make: one per query. Safe for concurrent use
// when the reader is.
type Reads struct {
	parent *Graph
	view   *Graph
}

// ReadsThrough returns the lookups of g reading through r.
func (g *Graph) ReadsThrough(r Reader) *Reads {
	v := &Graph{db: readerAPI{r}, raw: readerAPI{r}, cfg: g.cfg, log: g.log, alloc: g.alloc, known: g.known}
	if _, ok := g.db.(*placedAPI); ok {
		v.db = &placedAPI{inner: v.raw, g: v}
	}
	g.mu.Lock()
	v.st = g.st
	g.mu.Unlock()
	return &Reads{parent: g, view: v}
}

// noSnap is the snapshot argument of the view's calls: the reader has its own.
var noSnap = engineapi.Snapshot{}

// Schema returns the schema at the reader's snapshot (its vertex read goes
// through the reader).
func (x *Reads) Schema(ctx context.Context) (*schema.Schema, error) {
	st, err := x.view.schemaAt(ctx, noSnap)
	if err != nil {
		return nil, err
	}
	// Share a newly parsed schema with the Graph, sparing later views the parse.
	x.parent.mu.Lock()
	if x.parent.st == nil || string(x.parent.st.read.Version) != string(st.read.Version) {
		x.parent.st = st
	}
	x.parent.mu.Unlock()
	return st.sch, nil
}

// Has is Graph.Has through the reader.
func (x *Reads) Has(ctx context.Context, pred string) ([]uint64, error) {
	return x.view.Has(ctx, noSnap, pred)
}

// Eq is Graph.Eq through the reader.
func (x *Reads) Eq(ctx context.Context, pred, lang string, v value.Value) ([]uint64, error) {
	return x.view.Eq(ctx, noSnap, pred, lang, v)
}

// Lookup is Graph.Lookup through the reader.
func (x *Reads) Lookup(ctx context.Context, pred, lang, tok, token string) ([]uint64, error) {
	return x.view.Lookup(ctx, noSnap, pred, lang, tok, token)
}

// Range is Graph.Range through the reader.
func (x *Reads) Range(ctx context.Context, pred, lang string, lo, hi *Bound) ([]uint64, error) {
	return x.view.Range(ctx, noSnap, pred, lang, lo, hi)
}

// Placement is the Graph's placement (PlacementVertex or PlacementPredicate).
func (x *Reads) Placement() string { return x.parent.Placement() }

// ReadNode is Graph.ReadNode through the reader.
func (x *Reads) ReadNode(ctx context.Context, uid uint64, edgesMax int) (*Node, error) {
	return x.view.ReadNode(ctx, noSnap, uid, edgesMax)
}
