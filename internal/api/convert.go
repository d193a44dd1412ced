package api

import (
	"fmt"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Conversions between the engine's types and the wire's (values: weftpb.ValueOf
// and (*weftpb.Value).Decode, shared with the Go client).

func propsToPB(props map[string]value.Value) map[string]*pb.Value {
	if len(props) == 0 {
		return nil
	}
	out := make(map[string]*pb.Value, len(props))
	for k, v := range props {
		out[k] = pb.ValueOf(v)
	}
	return out
}

func readToPB(r txn.Read) *pb.Read {
	return &pb.Read{Vertex: r.Vertex, Alias: r.Alias, Version: r.Version}
}

// readSet lists an answer's read-set entries: the vertex's (none when an
// unbound alias named no vertex), then the alias's when named by alias.
func readSet(r txn.Read, alias *txn.Read) []txn.Read {
	var out []txn.Read
	if r.Vertex != "" {
		out = append(out, r)
	}
	if alias != nil {
		out = append(out, *alias)
	}
	return out
}

func readsToPB(rs []txn.Read) []*pb.Read {
	out := make([]*pb.Read, len(rs))
	for i, r := range rs {
		out[i] = readToPB(r)
	}
	return out
}

func readFromPB(r *pb.Read) txn.Read {
	return txn.Read{Vertex: r.GetVertex(), Alias: r.GetAlias(), Version: r.GetVersion()}
}

func edgeToPB(e *engine.Edge, withRead bool) *pb.Edge {
	out := &pb.Edge{Handle: e.Handle, Src: e.Src, Dst: e.Dst, Exists: e.Exists, Props: propsToPB(e.Props)}
	if withRead {
		out.Reads = readsToPB(readSet(e.Read, e.AliasRead))
	}
	return out
}

func vertexToPB(v *engine.Vertex) *pb.Vertex {
	out := &pb.Vertex{Handle: v.Handle, Exists: v.Exists, Props: propsToPB(v.Props), Aliases: v.Aliases,
		EdgesTruncated: v.EdgesTruncated, Reads: readsToPB(readSet(v.Read, v.AliasRead))}
	for i := range v.Edges {
		out.Edges = append(out.Edges, edgeToPB(&v.Edges[i], false))
	}
	return out
}

func opFromPB(i int, o *pb.Op) (txn.Op, error) {
	if o.GetKind() < pb.OpKind_CREATE_VERTEX || o.GetKind() > pb.OpKind_REMOVE_ALIAS {
		return txn.Op{}, invalid(fmt.Sprintf("ops[%d]: unknown operation kind %d (want one of %s)", i, o.GetKind(), opKindNames()))
	}
	k := txn.Kind(o.GetKind())
	op := txn.Op{Kind: k, Vertex: o.GetVertex(), VertexAlias: o.GetVertexAlias(), Edge: o.GetEdge(),
		Dst: o.GetDst(), DstAlias: o.GetDstAlias(), Key: o.GetKey(), Alias: o.GetAlias()}
	if o.Value != nil {
		v, err := o.Value.Decode()
		if err != nil {
			return txn.Op{}, fmt.Errorf("ops[%d] (%s): %w", i, k, err)
		}
		op.Value = v
	}
	return op, nil
}

func readOptions(props, edges, aliases *bool, edgesMax int) engine.ReadOptions {
	o := engine.DefaultReadOptions()
	if props != nil {
		o.Props = *props
	}
	if edges != nil {
		o.Edges = *edges
	}
	if aliases != nil {
		o.Aliases = *aliases
	}
	o.EdgesMax = edgesMax
	return o
}

func statusToPB(s *engine.Status) *pb.StatusResponse {
	return &pb.StatusResponse{Gatekeepers: int64(s.Gatekeepers), Shards: int64(s.Shards), Vertices: s.Vertices,
		Edges: s.Edges, Epoch: s.Epoch, Commits: s.Commits, Aborts: s.Aborts, Programs: s.Programs,
		KronosCalls: s.KronosCalls}
}
