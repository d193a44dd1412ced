package weft

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Tx is one transaction: reads at one snapshot, recorded with the versions
// they saw, and buffered writes, sent together by Commit. A Tx is not safe
// for concurrent use.
type Tx struct {
	c     *Client
	snap  string
	reads []*pb.Read
	seen  map[Ref]bool // read-set entries already recorded
	ops   []*pb.Op
	err   error // the first bad write, returned by Commit
	done  bool
}

// Vertex is a vertex as read at a snapshot. A missing vertex has Exists false.
type Vertex struct {
	Handle  string         `json:"handle"`
	Exists  bool           `json:"exists"`
	Props   map[string]any `json:"props"`
	Aliases []string       `json:"aliases"`
	Edges   []Edge         `json:"edges"`
	// EdgesTruncated is set when more out-edges exist than were returned.
	EdgesTruncated bool `json:"edges_truncated,omitempty"`
}

// Edge is an out-edge as read at a snapshot.
type Edge struct {
	Handle string         `json:"handle"`
	Src    string         `json:"src"`
	Dst    string         `json:"dst"`
	Exists bool           `json:"exists"`
	Props  map[string]any `json:"props"`
}

// ReadOptions leave parts of a vertex out of a read.
type ReadOptions struct {
	NoProps, NoEdges, NoAliases bool
	// EdgesMax bounds the out-edges returned (0: the server's default, 10,000).
	EdgesMax int
}

// CommitResult reports a committed transaction.
type CommitResult struct {
	// Handles of the created vertices and edges in operation order.
	Handles []string `json:"handles"`
	// Snapshot is the transaction's timestamp: reading at it shows the transaction.
	Snapshot string `json:"snapshot"`
}

// Snapshot is the token of the snapshot the transaction reads at (for RunAt).
func (tx *Tx) Snapshot() string { return tx.snap }

// record adds read-set entries; one seen before at this snapshot has the
// same version, so it is kept once.
func (tx *Tx) record(rs []*pb.Read) {
	for _, r := range rs {
		if k := (Ref{Name: r.GetVertex(), Alias: r.GetAlias()}); !tx.seen[k] {
			tx.seen[k] = true
			tx.reads = append(tx.reads, r)
		}
	}
}

// GetVertex reads a vertex at the transaction's snapshot and records the read.
// A missing vertex is not an error: it has Exists false, and its absence is
// validated at commit like any read.
func (tx *Tx) GetVertex(ctx context.Context, v Ref, opts ...ReadOptions) (*Vertex, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	req := &pb.GetVertexRequest{Snapshot: &pb.Snapshot{Token: tx.snap}, Vertex: v.pb()}
	var err error
	if req.Props, req.Edges, req.Aliases, req.EdgesMax, err = readOpts(opts); err != nil {
		return nil, err
	}
	cctx, cancel := tx.c.call(ctx)
	defer cancel()
	resp, err := tx.c.rpc.GetVertex(cctx, req)
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	pv := resp.GetVertex()
	if pv == nil {
		return nil, errNoAnswer
	}
	tx.record(pv.GetReads())
	return vertexOf(pv), nil
}

// GetVertices reads several vertices (at most 1,000) at the transaction's
// snapshot in one call and records the reads, answering one Vertex per ref
// in order (Exists false for one not there). Each vertex's edges are
// bounded by EdgesMax, which defaults to (and may be at most) 100,000
// divided by the vertices asked, capped at 10,000.
func (tx *Tx) GetVertices(ctx context.Context, refs []Ref, opts ...ReadOptions) ([]*Vertex, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	vs, _, err := tx.c.getVertices(ctx, tx.snap, refs, opts)
	if err != nil {
		return nil, err
	}
	for _, pv := range vs {
		tx.record(pv.GetReads())
	}
	return vertexesOf(vs), nil
}

// GetVertices reads several vertices (at most 1,000) at a fresh snapshot in
// one call — a read-only query, one round trip — and returns them in order
// with the snapshot they were read at (for RunAt or BeginAt). Options as
// for Tx.GetVertices.
func (c *Client) GetVertices(ctx context.Context, refs []Ref, opts ...ReadOptions) ([]*Vertex, string, error) {
	vs, snap, err := c.getVertices(ctx, "", refs, opts)
	if err != nil {
		return nil, "", err
	}
	return vertexesOf(vs), snap, nil
}

func (c *Client) getVertices(ctx context.Context, snap string, refs []Ref, opts []ReadOptions) ([]*pb.Vertex, string, error) {
	req := &pb.GetVerticesRequest{Vertices: make([]*pb.VertexRef, len(refs))}
	if snap != "" {
		req.Snapshot = &pb.Snapshot{Token: snap}
	}
	for i, r := range refs {
		req.Vertices[i] = r.pb()
	}
	var err error
	if req.Props, req.Edges, req.Aliases, req.EdgesMax, err = readOpts(opts); err != nil {
		return nil, "", err
	}
	cctx, cancel := c.call(ctx)
	defer cancel()
	resp, err := c.rpc.GetVertices(cctx, req)
	if err != nil {
		return nil, "", fromRPC(cctx, err)
	}
	if len(resp.GetVertices()) != len(refs) {
		return nil, "", errNoAnswer
	}
	return resp.GetVertices(), resp.GetSnapshot().GetToken(), nil
}

// readOpts is the request's parts and edge bound from ReadOptions (none:
// the server's defaults).
func readOpts(opts []ReadOptions) (props, edges, aliases *bool, edgesMax uint32, err error) {
	if len(opts) == 0 {
		return nil, nil, nil, 0, nil
	}
	yes, no := true, false
	pick := func(skip bool) *bool {
		if skip {
			return &no
		}
		return &yes
	}
	o := opts[0]
	if o.EdgesMax < 0 {
		return nil, nil, nil, 0, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("weft: EdgesMax %d is negative", o.EdgesMax)}
	}
	return pick(o.NoProps), pick(o.NoEdges), pick(o.NoAliases), uint32(min(o.EdgesMax, 1<<31)), nil
}

func vertexOf(pv *pb.Vertex) *Vertex {
	out := &Vertex{Handle: pv.GetHandle(), Exists: pv.GetExists(), Props: props(pv.GetProps()),
		Aliases: append([]string{}, pv.GetAliases()...), Edges: make([]Edge, 0, len(pv.GetEdges())),
		EdgesTruncated: pv.GetEdgesTruncated()}
	for _, e := range pv.GetEdges() {
		out.Edges = append(out.Edges, edgeOf(e))
	}
	return out
}

func vertexesOf(vs []*pb.Vertex) []*Vertex {
	out := make([]*Vertex, len(vs))
	for i, pv := range vs {
		out[i] = vertexOf(pv)
	}
	return out
}

// GetEdge reads an out-edge of src at the transaction's snapshot and records
// the read (the source vertex's version).
func (tx *Tx) GetEdge(ctx context.Context, src Ref, edge string) (*Edge, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	cctx, cancel := tx.c.call(ctx)
	defer cancel()
	resp, err := tx.c.rpc.GetEdge(cctx, &pb.GetEdgeRequest{Snapshot: &pb.Snapshot{Token: tx.snap}, Src: src.pb(), Edge: edge})
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	if resp.GetEdge() == nil {
		return nil, errNoAnswer
	}
	tx.record(resp.GetEdge().GetReads())
	e := edgeOf(resp.GetEdge())
	return &e, nil
}

func edgeOf(e *pb.Edge) Edge {
	return Edge{Handle: e.GetHandle(), Src: e.GetSrc(), Dst: e.GetDst(), Exists: e.GetExists(), Props: props(e.GetProps())}
}

// props converts wire values; the server only sends values it accepted, so a
// value that does not decode is shown as nil rather than failing the read.
func props(in map[string]*pb.Value) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		if d, err := v.Decode(); err == nil {
			out[k] = fromValue(d)
		} else {
			out[k] = nil
		}
	}
	return out
}

// Add buffers operations. The write methods below are shorthands for it. A
// bad operation (an unknown kind, a value of an unsupported type) is reported
// by Commit, which then sends nothing.
func (tx *Tx) Add(ops ...Op) {
	for i := range ops {
		if tx.err != nil {
			return
		}
		o, err := ops[i].toPB()
		if err != nil {
			tx.err = err
			return
		}
		tx.ops = append(tx.ops, o)
	}
}

// CreateVertex creates a vertex; an empty handle asks the server to generate
// one (CommitResult.Handles reports it).
func (tx *Tx) CreateVertex(handle string) { tx.Add(Op{Op: "create_vertex", Vertex: handle}) }

// DeleteVertex deletes a vertex with its edges (in and out), properties and aliases.
func (tx *Tx) DeleteVertex(v Ref) {
	tx.Add(Op{Op: "delete_vertex", Vertex: v.Name, VertexAlias: v.Alias})
}

// CreateEdge creates an edge from src to dst; an empty handle is generated.
func (tx *Tx) CreateEdge(src Ref, edge string, dst Ref) {
	tx.Add(Op{Op: "create_edge", Vertex: src.Name, VertexAlias: src.Alias, Edge: edge, Dst: dst.Name, DstAlias: dst.Alias})
}

// DeleteEdge deletes an out-edge of src.
func (tx *Tx) DeleteEdge(src Ref, edge string) {
	tx.Add(Op{Op: "delete_edge", Vertex: src.Name, VertexAlias: src.Alias, Edge: edge})
}

// SetVertexProp sets a vertex property.
func (tx *Tx) SetVertexProp(v Ref, key string, val any) {
	if val == nil {
		tx.fail("weft: SetVertexProp %q: nil value (use DeleteVertexProp)", key)
		return
	}
	tx.Add(Op{Op: "set_vertex_prop", Vertex: v.Name, VertexAlias: v.Alias, Key: key, Value: val})
}

// DeleteVertexProp deletes a vertex property.
func (tx *Tx) DeleteVertexProp(v Ref, key string) {
	tx.Add(Op{Op: "delete_vertex_prop", Vertex: v.Name, VertexAlias: v.Alias, Key: key})
}

// SetEdgeProp sets a property of an out-edge of src.
func (tx *Tx) SetEdgeProp(src Ref, edge, key string, val any) {
	if val == nil {
		tx.fail("weft: SetEdgeProp %q: nil value (use DeleteEdgeProp)", key)
		return
	}
	tx.Add(Op{Op: "set_edge_prop", Vertex: src.Name, VertexAlias: src.Alias, Edge: edge, Key: key, Value: val})
}

// DeleteEdgeProp deletes a property of an out-edge of src.
func (tx *Tx) DeleteEdgeProp(src Ref, edge, key string) {
	tx.Add(Op{Op: "delete_edge_prop", Vertex: src.Name, VertexAlias: src.Alias, Edge: edge, Key: key})
}

// AddAlias gives a vertex an alias (aliases are unique across the graph).
func (tx *Tx) AddAlias(v Ref, alias string) {
	tx.Add(Op{Op: "add_alias", Vertex: v.Name, VertexAlias: v.Alias, Alias: alias})
}

// RemoveAlias removes one of a vertex's aliases.
func (tx *Tx) RemoveAlias(v Ref, alias string) {
	tx.Add(Op{Op: "remove_alias", Vertex: v.Name, VertexAlias: v.Alias, Alias: alias})
}

func (tx *Tx) fail(format string, args ...any) {
	if tx.err == nil {
		tx.err = &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
	}
}

// Commit sends the reads and buffered writes. It answers ErrAborted (and
// ErrSnapshotTooOld) when the transaction should be retried from the start;
// Update does that. A transaction without writes sends nothing: its reads all
// happened at one snapshot, which is consistent already. After Commit, whatever
// it answered, the Tx is done.
func (tx *Tx) Commit(ctx context.Context) (*CommitResult, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	tx.done = true
	if tx.err != nil {
		return nil, tx.err
	}
	if len(tx.ops) == 0 {
		return &CommitResult{Handles: []string{}, Snapshot: tx.snap}, nil
	}
	cctx, cancel := tx.c.call(ctx)
	defer cancel()
	resp, err := tx.c.rpc.Commit(cctx, &pb.CommitRequest{Reads: tx.reads, Ops: tx.ops})
	if err != nil {
		return nil, fromRPC(cctx, err)
	}
	handles := resp.GetHandles()
	if handles == nil {
		handles = []string{}
	}
	return &CommitResult{Handles: handles, Snapshot: resp.GetSnapshot().GetToken()}, nil
}

// MarshalJSON writes the vertex with its properties in the API's JSON value
// form (ints stay ints, floats keep a '.', datetimes are {"$datetime": …}).
func (v Vertex) MarshalJSON() ([]byte, error) {
	type plain Vertex
	return json.Marshal(struct {
		plain
		Props map[string]value.Value `json:"props"`
	}{plain(v), propsJSON(v.Props)})
}

// MarshalJSON writes the edge with its properties in the API's JSON value form.
func (e Edge) MarshalJSON() ([]byte, error) {
	type plain Edge
	return json.Marshal(struct {
		plain
		Props map[string]value.Value `json:"props"`
	}{plain(e), propsJSON(e.Props)})
}

func propsJSON(props map[string]any) map[string]value.Value {
	out := make(map[string]value.Value, len(props))
	for k, p := range props {
		out[k], _ = toValue(p, 1) // read values always convert; nil stays null
	}
	return out
}
