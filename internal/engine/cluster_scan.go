package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// scanChunkMax bounds the vertices of one Scan message.
const scanChunkMax = 512

// Scan implements the Shard service (cluster.proto): the partition at a
// stamp, copied in the shard's loop (as weft serve's analyses copy it) and
// streamed in chunks.
func (s *ShardServer) Scan(req *pb.ScanRequest, stream pb.Shard_ScanServer) error {
	if err := s.check(); err != nil {
		return err
	}
	st, err := s.stampOf(req.GetStamp())
	if err != nil {
		return err
	}
	all := &pb.ReadRequest{Props: true, Edges: true, Aliases: true, EdgesMax: math.MaxUint32}
	var vs []*pb.ReadResponse
	if err := s.readAt(stream.Context(), st, "", func(r *reader) {
		for v := range r.S.G.Vertices(st, r.Ord) {
			resp := &pb.ReadResponse{Handle: v.Handle(), Exists: true}
			fillRead(resp, v, all)
			vs = append(vs, resp)
		}
	}); err != nil {
		return err
	}
	for len(vs) > 0 {
		n := min(len(vs), scanChunkMax)
		if err := stream.Send(&pb.ScanChunk{Vertices: vs[:n]}); err != nil {
			return err
		}
		vs = vs[n:]
	}
	return nil
}

// analyze runs a whole-snapshot analysis at s over the union of every
// shard's partition (Scan), as weft serve does over its shards' copies.
func (g *ClusterGatekeeper) analyze(ctx context.Context, name string, params json.RawMessage, s vclock.Stamp) (any, error) {
	job, err := g.reg.CompileAnalysis(name, params)
	if err != nil {
		return nil, err
	}
	snap := &snapshot{parts: make([][]*snapVertex, len(g.shards))}
	stamp := txn.EncodeStamp(s)
	for i, l := range g.shards {
		stream, err := l.client.Scan(ctx, &pb.ScanRequest{Stamp: stamp})
		if err != nil {
			return nil, fromShard(err)
		}
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fromShard(err)
			}
			for _, r := range chunk.GetVertices() {
				v, err := snapFromPB(r)
				if err != nil {
					return nil, fmt.Errorf("shard %d: %w", i, err)
				}
				snap.parts[i] = append(snap.parts[i], v)
			}
		}
	}
	return job.Run(snap, nodeprog.SnapshotLimits{})
}

// snapFromPB copies a scanned vertex, keeping the shard's order of
// properties and edges (so an analysis sees what weft serve's copy holds).
func snapFromPB(r *pb.ReadResponse) (*snapVertex, error) {
	v := &snapVertex{handle: r.GetHandle(), aliases: r.GetAliases()}
	var err error
	if v.props, err = kvsFromPB(r.GetProps()); err != nil {
		return nil, err
	}
	v.edges = make([]snapEdge, 0, len(r.GetEdges()))
	for _, e := range r.GetEdges() {
		se := snapEdge{handle: e.GetHandle(), dst: e.GetDst()}
		if se.props, err = kvsFromPB(e.GetProps()); err != nil {
			return nil, err
		}
		v.edges = append(v.edges, se)
	}
	return v, nil
}

func kvsFromPB(ps []*pb.Prop) ([]kv, error) {
	var out []kv
	for _, p := range ps {
		val, rest, err := value.Decode(p.GetValue())
		if err != nil || len(rest) != 0 {
			return nil, fmt.Errorf("engine: a shard sent a malformed value for %q", p.GetKey())
		}
		out = append(out, kv{p.GetKey(), val})
	}
	return out, nil
}
