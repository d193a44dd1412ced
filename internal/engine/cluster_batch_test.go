package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// readCalls sums the Read and ReadBatch calls the cluster's shards answered.
func readCalls(c *LocalCluster) (reads, batches uint64) {
	for _, s := range c.Shards {
		r, b := s.ReadCalls()
		reads += r
		batches += b
	}
	return reads, batches
}

// randomClusterGraph commits a seeded random graph through the cluster's
// gatekeepers: vertices v0… with properties and out-edges (some with
// properties), aliases a0… on some, then deletes some vertices and
// removes some aliases, so that refs may name live, deleted and
// never-created vertices, and bound, removed and never-added aliases. It
// returns the names to draw refs from.
func randomClusterGraph(t *testing.T, gks []*ClusterGatekeeper, r *rand.Rand, p string, n int) (handles, aliases []string) {
	t.Helper()
	ctx := context.Background()
	do := func(ops ...txn.Op) {
		t.Helper()
		if _, err := gks[r.IntN(len(gks))].Commit(ctx, nil, ops); err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	var ops []txn.Op
	for i := range n {
		h := fmt.Sprintf(p+"v%d", i)
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h},
			txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "i", Value: value.I64(int64(i))})
		if r.IntN(2) == 0 {
			ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: "s", Value: value.Str(strings.Repeat("x", r.IntN(40)))})
		}
		handles = append(handles, h)
	}
	do(ops...)
	ops = nil
	for i := range n {
		for k := range r.IntN(7) {
			src, e := fmt.Sprintf(p+"v%d", i), fmt.Sprintf(p+"e%d_%d", i, k)
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: src, Edge: e, Dst: fmt.Sprintf(p+"v%d", r.IntN(n))})
			if r.IntN(3) == 0 {
				ops = append(ops, txn.Op{Kind: txn.SetEdgeProp, Vertex: src, Edge: e, Key: "w", Value: value.I64(int64(k))})
			}
		}
		if r.IntN(3) == 0 {
			a := fmt.Sprintf(p+"a%d", i)
			ops = append(ops, txn.Op{Kind: txn.AddAlias, Vertex: fmt.Sprintf(p+"v%d", i), Alias: a})
			aliases = append(aliases, a)
		}
	}
	do(ops...)
	for i := 1; i < n; i++ { // v0 stays
		switch r.IntN(8) {
		case 0:
			do(txn.Op{Kind: txn.DeleteVertex, Vertex: fmt.Sprintf(p+"v%d", i)})
		case 1:
			if a := fmt.Sprintf(p+"a%d", i); strings.Contains(strings.Join(aliases, ",")+",", a+",") {
				do(txn.Op{Kind: txn.RemoveAlias, Vertex: fmt.Sprintf(p+"v%d", i), Alias: a})
			}
		}
	}
	return handles, aliases
}

// TestClusterGetVerticesMatchesGetVertex: over the network, a batched read
// answers for each ref exactly what GetVertex answers at the same snapshot
// (read-set versions, missing vertices, unbound aliases, truncated edges
// included), with one ReadBatch per shard involved (aliases' shards, then
// vertices' shards) and no per-vertex Read at all; a write after the
// snapshot changes neither answer.
func TestClusterGetVerticesMatchesGetVertex(t *testing.T) {
	ctx := context.Background()
	c := startClusterWith(t, LocalClusterConfig{Gatekeepers: 2, Shards: 3})
	gks := c.Gatekeepers
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 6))
		p := fmt.Sprintf("s%d", seed)
		handles, aliases := randomClusterGraph(t, gks, r, p, 40)
		snap, err := gks[0].Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Writes after the snapshot: invisible to both reads.
		if _, err := gks[1].Commit(ctx, nil, []txn.Op{{Kind: txn.SetVertexProp, Vertex: handles[0], Key: "late", Value: value.I64(1)},
			{Kind: txn.CreateVertex, Vertex: p + "never1"}, {Kind: txn.AddAlias, Vertex: handles[0], Alias: p + "noalias1"}}); err != nil {
			t.Fatal(err)
		}
		for round := range 6 {
			var refs []VertexRef
			for range 1 + r.IntN(60) {
				switch k := r.IntN(10); {
				case k < 5:
					refs = append(refs, VertexRef{Name: handles[r.IntN(len(handles))]})
				case k < 6:
					refs = append(refs, VertexRef{Name: fmt.Sprintf(p+"never%d", r.IntN(3))})
				case k < 8 && len(aliases) > 0:
					refs = append(refs, VertexRef{Name: aliases[r.IntN(len(aliases))], Alias: true})
				default:
					refs = append(refs, VertexRef{Name: fmt.Sprintf(p+"noalias%d", r.IntN(3)), Alias: true})
				}
			}
			opts := []ReadOptions{DefaultReadOptions(), {Props: true}, {Edges: true, EdgesMax: 2},
				{Props: true, Edges: true, Aliases: true, EdgesMax: 1 + r.IntN(4)}, {}}[round%5]
			reads0, batches0 := readCalls(c)
			gk := gks[r.IntN(len(gks))]
			got, requests, err := gk.GetVertices(ctx, snap, refs, opts)
			if err != nil {
				t.Fatal(err)
			}
			reads1, batches1 := readCalls(c)
			aliasShards, vertexShards := map[int]bool{}, map[int]bool{}
			for i, ref := range refs {
				want, err := gks[0].GetVertex(ctx, snap, ref, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Fatalf("seed %d round %d opts %+v ref %+v:\nbatched   %+v\nGetVertex %+v", seed, round, opts, ref, got[i], want)
				}
				if ref.Alias {
					aliasShards[gk.shardOf(ref.Name)] = true
				}
				if want.Handle != "" {
					vertexShards[gk.shardOf(want.Handle)] = true
				}
			}
			if reads1 != reads0 {
				t.Errorf("seed %d round %d: the batched read made %d per-vertex Read calls", seed, round, reads1-reads0)
			}
			wantCalls := len(aliasShards) + len(vertexShards)
			if int(batches1-batches0) != wantCalls || requests != wantCalls {
				t.Errorf("seed %d round %d: %d ReadBatch calls at the shards, %d counted, want %d (one per alias shard and per vertex shard)",
					seed, round, batches1-batches0, requests, wantCalls)
			}
		}
	}
}

// TestClusterSwitchForwardsBatchedReads: engine.GetVertices through a
// Switch (the API of a gatekeeper under a coordinator) uses the cluster
// gatekeeper's batched read, not per-vertex reads.
func TestClusterSwitchForwardsBatchedReads(t *testing.T) {
	ctx := context.Background()
	c := startClusterWith(t, LocalClusterConfig{Gatekeepers: 1, Shards: 2})
	var ops []txn.Op
	var refs []VertexRef
	for i := range 30 {
		h := fmt.Sprintf("w%d", i)
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h})
		refs = append(refs, VertexRef{Name: h})
	}
	if _, err := c.Gatekeepers[0].Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	sw := NewSwitch("test")
	if _, _, err := GetVertices(ctx, sw, Snapshot{}, refs, ReadOptions{}); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("without a backend: %v, want ErrOverloaded", err)
	}
	sw.Set(c.Gatekeepers[0])
	reads0, batches0 := readCalls(c)
	vs, requests, err := GetVertices(ctx, sw, Snapshot{}, refs, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reads1, batches1 := readCalls(c)
	for i, v := range vs {
		if !v.Exists || v.Handle != refs[i].Name {
			t.Errorf("ref %d: %+v", i, v)
		}
	}
	if reads1 != reads0 || batches1-batches0 != 2 || requests != 2 {
		t.Errorf("through the Switch: %d Read and %d ReadBatch calls, %d counted; want 0, 2, 2", reads1-reads0, batches1-batches0, requests)
	}
}

// TestClusterGetVerticesLargeAnswers: answers larger than a chunk (a vertex
// with ~1.5 MiB of edges) and batches of many vertices arrive whole.
func TestClusterGetVerticesLargeAnswers(t *testing.T) {
	ctx := context.Background()
	c := startClusterWith(t, LocalClusterConfig{Gatekeepers: 1, Shards: 2})
	gk := c.Gatekeepers[0]
	const edges = 3000
	big := strings.Repeat("p", 500)
	ops := []txn.Op{{Kind: txn.CreateVertex, Vertex: "hub"}}
	for i := range edges {
		e := fmt.Sprintf("edge%05d", i)
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: "hub", Edge: e, Dst: "hub"},
			txn.Op{Kind: txn.SetEdgeProp, Vertex: "hub", Edge: e, Key: "p", Value: value.Str(big)})
	}
	if _, err := gk.Commit(ctx, nil, ops); err != nil {
		t.Fatal(err)
	}
	var refs []VertexRef
	for i := range 2000 {
		h := fmt.Sprintf("small%d", i)
		refs = append(refs, VertexRef{Name: h})
	}
	refs = append(refs, VertexRef{Name: "hub"}, VertexRef{Name: "hub"})
	snap, err := gk.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opts := ReadOptions{Props: true, Edges: true, EdgesMax: edges}
	got, _, err := gk.GetVertices(ctx, snap, refs, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{len(refs) - 2, len(refs) - 1} {
		v := got[i]
		if !v.Exists || len(v.Edges) != edges || v.EdgesTruncated {
			t.Fatalf("hub: exists %v, %d edges (truncated %v), want %d", v.Exists, len(v.Edges), v.EdgesTruncated, edges)
		}
		for k, e := range v.Edges {
			if e.Handle != fmt.Sprintf("edge%05d", k) || e.Props["p"].Str() != big {
				t.Fatalf("hub edge %d: %s", k, e.Handle)
			}
		}
	}
	for i, v := range got[:len(refs)-2] {
		if v.Exists || v.Handle != refs[i].Name {
			t.Fatalf("ref %d: %+v", i, v)
		}
	}
}

// TestChunkReadBatch: chunks stay within their bound (unless one edge
// alone exceeds it) and reassemble into the answers, for random answers
// and bounds.
func TestChunkReadBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		var resps []*pb.ReadResponse
		for i := range r.IntN(20) {
			resp := &pb.ReadResponse{Handle: fmt.Sprintf("h%d", i), Version: []byte{byte(i)}, Exists: r.IntN(4) > 0,
				EdgesTruncated: r.IntN(5) == 0}
			for k := range r.IntN(3) {
				resp.Props = append(resp.Props, &pb.Prop{Key: fmt.Sprintf("k%d", k), Value: make([]byte, r.IntN(300))})
			}
			for k := range r.IntN(3) {
				resp.Aliases = append(resp.Aliases, fmt.Sprintf("al%d", k))
			}
			for k := range r.IntN(60) {
				resp.Edges = append(resp.Edges, &pb.Edge{Handle: fmt.Sprintf("e%d", k), Dst: "d",
					Props: []*pb.Prop{{Key: "p", Value: make([]byte, r.IntN(200))}}})
			}
			resps = append(resps, resp)
		}
		bytesMax := 64 + r.IntN(3000)
		chunks := chunkReadBatch(resps, bytesMax)
		biggestEdge := 0
		for _, resp := range resps {
			for _, e := range resp.Edges {
				biggestEdge = max(biggestEdge, proto.Size(e)+readBatchItemOverhead)
			}
		}
		for _, ch := range chunks {
			if len(ch.Items) == 0 {
				t.Fatalf("trial %d: an empty chunk", trial)
			}
			// A chunk may exceed the bound by a head (fields without edges)
			// or one edge: both are what cannot be cut further.
			if n := proto.Size(ch); n > 2*bytesMax+biggestEdge+1000 {
				t.Fatalf("trial %d: chunk of %d bytes for a bound of %d", trial, n, bytesMax)
			}
		}
		out := make([]*pb.ReadResponse, len(resps))
		k := 0
		recv := func() (*pb.ReadBatchChunk, error) {
			if k == len(chunks) {
				return nil, io.EOF
			}
			// Through the wire encoding, as a client sees them.
			b, err := proto.Marshal(chunks[k])
			k++
			if err != nil {
				return nil, err
			}
			var c pb.ReadBatchChunk
			return &c, proto.Unmarshal(b, &c)
		}
		if err := collectReadBatch(recv, out); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for i := range resps {
			if !proto.Equal(out[i], resps[i]) {
				t.Fatalf("trial %d answer %d: reassembled %v, want %v", trial, i, out[i], resps[i])
			}
		}
	}
}

// TestCollectReadBatchRefusesMalformed: a chunk stream that skips, repeats
// out of turn or falls short of the names is refused.
func TestCollectReadBatchRefusesMalformed(t *testing.T) {
	item := func(i uint32) *pb.ReadBatchItem { return &pb.ReadBatchItem{Index: i, Read: &pb.ReadResponse{}} }
	for name, items := range map[string][]*pb.ReadBatchItem{
		"skip":       {item(0), item(2)},
		"short":      {item(0)},
		"continue 0": {item(0), item(0), item(2)},
		"back":       {item(0), item(1), item(0)},
		"nil read":   {item(0), {Index: 1}},
		"too many":   {item(0), item(1), item(2), item(3)},
	} {
		sent := false
		recv := func() (*pb.ReadBatchChunk, error) {
			if sent {
				return nil, io.EOF
			}
			sent = true
			return &pb.ReadBatchChunk{Items: items}, nil
		}
		if err := collectReadBatch(recv, make([]*pb.ReadResponse, 3)); !errors.Is(err, errMalformedBatch) {
			t.Errorf("%s: %v, want errMalformedBatch", name, err)
		}
	}
}

// TestSplitNames: runs are consecutive, non-empty, cover every name and
// stay within the bound unless one name alone exceeds it.
func TestSplitNames(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 200 {
		var names []string
		for range r.IntN(50) {
			names = append(names, strings.Repeat("n", 1+r.IntN(100)))
		}
		bytesMax := 1 + r.IntN(500)
		runs := splitNames(names, bytesMax)
		var joined []string
		for _, run := range runs {
			size := 0
			for _, n := range run {
				size += len(n) + readBatchItemOverhead
			}
			if len(run) == 0 || size > bytesMax && len(run) > 1 {
				t.Fatalf("a run of %d names, %d bytes, bound %d", len(run), size, bytesMax)
			}
			joined = append(joined, run...)
		}
		if !reflect.DeepEqual(joined, names) && len(names) > 0 {
			t.Fatalf("runs %v do not rejoin into %v", runs, names)
		}
	}
}

// noBatchShard is a shard's service without ReadBatch, as an older shard
// process or a front that does not forward it answers.
type noBatchShard struct{ *ShardServer }

func (noBatchShard) ReadBatch(*pb.ReadBatchRequest, pb.Shard_ReadBatchServer) error {
	return status.Error(codes.Unimplemented, "method ReadBatch not implemented")
}

// TestClusterGetVerticesWithoutReadBatch: against shards that do not
// implement ReadBatch, the batched read still answers what GetVertex
// answers, vertex by vertex (one Read per name).
func TestClusterGetVerticesWithoutReadBatch(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	ecfg := DefaultConfig()
	ecfg.Sync, ecfg.Shards = false, 2
	st, err := openStore(ecfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	listen := func() (net.Listener, *grpc.Server) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		t.Cleanup(srv.Stop)
		return lis, srv
	}
	gkLis, gkSrv := listen()
	var shardAddrs []string
	var shards []*ShardServer
	type served struct {
		lis net.Listener
		srv *grpc.Server
	}
	var shardSrv []served
	for range 2 {
		lis, srv := listen()
		shardAddrs = append(shardAddrs, lis.Addr().String())
		shardSrv = append(shardSrv, served{lis, srv})
	}
	for i := range 2 {
		links, err := DialShardLinks(i, []string{gkLis.Addr().String()}, shardAddrs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(links.Close)
		s, err := NewShardServer(ShardConfig{ID: i, Shards: 2, Gatekeepers: 1, Epoch: 1, Store: st, Oracle: oracle,
			Log: quiet, RequestNop: links.RequestNop, Programs: links})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		pb.RegisterShardServer(shardSrv[i].srv, noBatchShard{s})
		go shardSrv[i].srv.Serve(shardSrv[i].lis)
		shards = append(shards, s)
	}
	gk, err := NewClusterGatekeeper(GatekeeperConfig{ID: 0, Gatekeepers: 1, Shards: 2, Epoch: 1, Store: st, Oracle: oracle,
		ShardAddrs: shardAddrs, PeerAddrs: []string{gkLis.Addr().String()}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gk.Close() })
	gk.Register(gkSrv)
	go gkSrv.Serve(gkLis)
	r := rand.New(rand.NewPCG(9, 9))
	handles, aliases := randomClusterGraph(t, []*ClusterGatekeeper{gk}, r, "n", 20)
	snap, err := gk.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs := []VertexRef{{Name: "nomissing"}, {Name: "noalias", Alias: true}}
	for _, h := range handles {
		refs = append(refs, VertexRef{Name: h})
	}
	for _, a := range aliases {
		refs = append(refs, VertexRef{Name: a, Alias: true})
	}
	opts := ReadOptions{Props: true, Edges: true, Aliases: true, EdgesMax: 3}
	got, requests, err := gk.GetVertices(ctx, snap, refs, opts)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for i, ref := range refs {
		want, err := gk.GetVertex(ctx, snap, ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("ref %+v:\nbatched   %+v\nGetVertex %+v", ref, got[i], want)
		}
		if ref.Alias {
			reads++
		}
		if want.Handle != "" {
			reads++
		}
	}
	// The first ReadBatch of each shard asked is refused (counted), the
	// rest are Reads.
	if requests < reads || requests > reads+2 {
		t.Errorf("%d requests for %d per-name reads", requests, reads)
	}
	var batches uint64
	for _, s := range shards {
		_, b := s.ReadCalls()
		batches += b
	}
	if batches != 0 {
		t.Errorf("%d ReadBatch calls reached the shards' engines", batches)
	}
}
