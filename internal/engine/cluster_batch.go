package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/txn"
	pb "github.com/weft-db/weft/internal/wire/clusterpb"
)

// The batched read over the cluster protocol (Shard.ReadBatch): the
// network form of BatchReader. A gatekeeper resolves a batch's aliases with
// one ReadBatch per shard owning any of them, then reads the vertices with
// one ReadBatch per shard owning any of them, the shards concurrently, all
// at one held stamp. Both directions are bounded so that no message nears
// gRPC's 4 MiB default: a shard's names go in requests of at most
// readBatchRequestBytesMax, and a shard streams its answers in chunks of
// about readBatchChunkBytesMax, splitting a vertex whose edges do not fit
// one chunk across several.

const (
	// readBatchRequestBytesMax bounds the names (with their framing) of
	// one ReadBatch request; more go in further requests to the shard.
	// BatchRefsMax UID-sized handles fit in one.
	readBatchRequestBytesMax = 3 << 20
	// readBatchChunkBytesMax is the size a shard aims each ReadBatchChunk
	// at; a chunk exceeds it only to carry one edge too large on its own.
	readBatchChunkBytesMax = 1 << 20
	// readBatchItemOverhead is the framing of an item or edge in a chunk
	// (tags, lengths and the index), counted generously.
	readBatchItemOverhead = 16
)

// ReadBatch implements the batched read at a stamp (cluster.proto): every
// name in one pass of the shard's read queue, each answered as Read answers
// it, streamed back in bounded chunks.
func (s *ShardServer) ReadBatch(req *pb.ReadBatchRequest, stream pb.Shard_ReadBatchServer) error {
	if err := s.check(); err != nil {
		return err
	}
	st, err := s.stampOf(req.GetStamp())
	if err != nil {
		return err
	}
	names := req.GetNames()
	if len(names) > BatchRefsMax {
		return fmt.Errorf("%w: %d names in one batched read (at most %d)", ErrBadRequest, len(names), BatchRefsMax)
	}
	for _, name := range names {
		if err := txn.ValidName("vertex", name, txn.HandleLenMax); err != nil {
			return err
		}
	}
	s.readBatches.Add(1)
	one := &pb.ReadRequest{Alias: req.GetAlias(), Props: req.GetProps(), Edges: req.GetEdges(),
		Aliases: req.GetAliases(), EdgesMax: req.GetEdgesMax()}
	resps := make([]*pb.ReadResponse, len(names))
	err = s.readAt(stream.Context(), st, "", func(r *reader) {
		for i, name := range names {
			if to := r.S.Locate(name, st, r.Ord); to != r.S.ID() {
				resps[i] = &pb.ReadResponse{Moved: true, MovedTo: uint32(to)}
				continue
			}
			resps[i] = &pb.ReadResponse{}
			readOne(r, st, name, one, resps[i])
		}
	})
	if err != nil {
		return err
	}
	for _, c := range chunkReadBatch(resps, readBatchChunkBytesMax) {
		if err := stream.Send(c); err != nil {
			return err
		}
	}
	return nil
}

// chunkReadBatch splits answers (one per name, in order) into chunks of
// about bytesMax each. An answer too large for one chunk is cut between its
// edges: its first item carries every field and the first edges, the
// following items (same index) only further edges. Pure.
func chunkReadBatch(resps []*pb.ReadResponse, bytesMax int) []*pb.ReadBatchChunk {
	var out []*pb.ReadBatchChunk
	cur, size := &pb.ReadBatchChunk{}, 0
	add := func(i int, r *pb.ReadResponse, n int) {
		cur.Items = append(cur.Items, &pb.ReadBatchItem{Index: uint32(i), Read: r})
		size += n
	}
	flush := func() {
		if len(cur.Items) > 0 {
			out = append(out, cur)
			cur, size = &pb.ReadBatchChunk{}, 0
		}
	}
	for i, r := range resps {
		n := proto.Size(r) + readBatchItemOverhead
		if n > bytesMax-size && n <= bytesMax {
			flush()
		}
		if n <= bytesMax-size {
			add(i, r, n)
			continue
		}
		// Larger than any chunk: the head, then the edges in pieces.
		head := &pb.ReadResponse{Handle: r.GetHandle(), Version: r.GetVersion(), Exists: r.GetExists(),
			Props: r.GetProps(), EdgesTruncated: r.GetEdgesTruncated(), Aliases: r.GetAliases()}
		flush()
		piece, cont := head, false
		add(i, head, proto.Size(head)+readBatchItemOverhead)
		for _, e := range r.GetEdges() {
			es := proto.Size(e) + readBatchItemOverhead
			if es > bytesMax-size && !(cont && len(piece.Edges) == 0) {
				flush()
				piece, cont = &pb.ReadResponse{}, true
				add(i, piece, readBatchItemOverhead)
			}
			piece.Edges = append(piece.Edges, e)
			size += es
		}
	}
	flush()
	return out
}

// collectReadBatch assembles the chunks recv returns (until io.EOF) into
// out, one answer per name of the request: items in index order, an item
// repeating the index before it adding edges to that answer.
func collectReadBatch(recv func() (*pb.ReadBatchChunk, error), out []*pb.ReadResponse) error {
	next := 0 // the index of the next new answer
	for {
		c, err := recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, it := range c.GetItems() {
			i, r := int(it.GetIndex()), it.GetRead()
			switch {
			case r == nil:
				return errMalformedBatch
			case i == next && i < len(out):
				out[i] = r
				next++
			case i == next-1 && next > 0:
				out[i].Edges = append(out[i].Edges, r.GetEdges()...)
			default:
				return errMalformedBatch
			}
		}
	}
	if next != len(out) {
		return fmt.Errorf("%w: %d answers for %d names", errMalformedBatch, next, len(out))
	}
	return nil
}

var errMalformedBatch = errors.New("engine: a shard sent a malformed batched read")

// splitNames cuts names into consecutive runs of at most bytesMax (each
// name counted with readBatchItemOverhead), every run non-empty. Pure.
func splitNames(names []string, bytesMax int) [][]string {
	var out [][]string
	start, size := 0, 0
	for i, n := range names {
		k := len(n) + readBatchItemOverhead
		if size+k > bytesMax && i > start {
			out = append(out, names[start:i])
			start, size = i, 0
		}
		size += k
	}
	if start < len(names) {
		out = append(out, names[start:])
	}
	return out
}

// readBatch reads names on shard sh with tmpl's stamp and options, one
// ReadBatch call per run of splitNames; calls is the number made. A shard
// that does not implement ReadBatch (a process of an older build, or a
// front that does not forward it) is read name by name with Read from
// then on.
func (g *ClusterGatekeeper) readBatch(ctx context.Context, sh int, tmpl *pb.ReadBatchRequest, names []string) (
	out []*pb.ReadResponse, calls int, err error) {
	out = make([]*pb.ReadResponse, len(names))
	l := g.shards[sh]
	at := 0
	for _, run := range splitNames(names, readBatchRequestBytesMax) {
		if l.noBatch.Load() {
			n, err := g.readEach(ctx, sh, tmpl, names[at:], out[at:])
			return out, calls + n, err
		}
		req := &pb.ReadBatchRequest{Stamp: tmpl.GetStamp(), Names: run, Alias: tmpl.GetAlias(), Props: tmpl.GetProps(),
			Edges: tmpl.GetEdges(), Aliases: tmpl.GetAliases(), EdgesMax: tmpl.GetEdgesMax()}
		calls++
		err := func() error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel() // ends the stream if an answer is refused early
			stream, err := l.client.ReadBatch(ctx, req)
			if err == nil {
				err = collectReadBatch(stream.Recv, out[at:at+len(run)])
			}
			return err
		}()
		switch {
		case err == nil:
			at += len(run)
			continue
		case status.Code(err) == codes.Unimplemented:
			if !l.noBatch.Swap(true) {
				g.log.Warn("a shard does not implement ReadBatch: reading it vertex by vertex", "shard", sh)
			}
			n, err := g.readEach(ctx, sh, tmpl, names[at:], out[at:])
			return out, calls + n, err
		case errors.Is(err, errMalformedBatch):
			return nil, calls, err
		default:
			return nil, calls, fromShard(err)
		}
	}
	return out, calls, nil
}

// readEachParallelMax bounds the concurrent Read calls of readEach.
const readEachParallelMax = 16

// readEach reads names on shard sh with one Read each (readEachParallelMax
// at a time) into out; calls is the number made.
func (g *ClusterGatekeeper) readEach(ctx context.Context, sh int, tmpl *pb.ReadBatchRequest, names []string,
	out []*pb.ReadResponse) (calls int, err error) {
	errs := make([]error, len(names))
	sem := make(chan struct{}, readEachParallelMax)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = g.shards[sh].client.Read(ctx, &pb.ReadRequest{Stamp: tmpl.GetStamp(), Name: name,
				Alias: tmpl.GetAlias(), Props: tmpl.GetProps(), Edges: tmpl.GetEdges(), Aliases: tmpl.GetAliases(),
				EdgesMax: tmpl.GetEdgesMax()})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return len(names), fromShard(err)
	}
	return len(names), nil
}

// readShards reads, for each shard of byShard, the names of its indexes
// (name(i)) in one batched read, the shards concurrently, and hands each
// answer to fill (called concurrently for different shards, each index
// once). Names a shard answers as moved are read again, in one more round,
// at the shards their forwarding answers name. calls is the number of
// ReadBatch calls made.
func (g *ClusterGatekeeper) readShards(ctx context.Context, byShard map[int][]int, tmpl *pb.ReadBatchRequest,
	name func(i int) string, fill func(i int, r *pb.ReadResponse) error) (int, error) {
	total := 0
	for round := 0; len(byShard) > 0; round++ {
		if round > forwardsMax {
			return total, fmt.Errorf("engine: a batched read forwarded more than %d times", forwardsMax)
		}
		shards := make([]int, 0, len(byShard))
		for sh := range byShard {
			shards = append(shards, sh)
		}
		slices.Sort(shards)
		errs, calls, moved := make([]error, len(shards)), make([]int, len(shards)), make([][]int, len(shards))
		one := func(j int) {
			idx := byShard[shards[j]]
			names := make([]string, len(idx))
			for k, i := range idx {
				names[k] = name(i)
			}
			var resps []*pb.ReadResponse
			if resps, calls[j], errs[j] = g.readBatch(ctx, shards[j], tmpl, names); errs[j] != nil {
				return
			}
			for k, i := range idx {
				if resps[k].GetMoved() {
					moved[j] = append(moved[j], int(resps[k].GetMovedTo()), i)
					continue
				}
				if errs[j] = fill(i, resps[k]); errs[j] != nil {
					return
				}
			}
		}
		eachConcurrently(len(shards), one)
		for _, c := range calls {
			total += c
		}
		if err := errors.Join(errs...); err != nil {
			return total, err
		}
		next := map[int][]int{}
		for _, m := range moved {
			for k := 0; k < len(m); k += 2 {
				to, err := g.forwardTo(uint32(m[k]))
				if err != nil {
					return total, err
				}
				next[to] = append(next[to], m[k+1])
			}
		}
		byShard = next
	}
	return total, nil
}

// GetVertices implements BatchReader over the network: aliases are
// resolved first (one ReadBatch per shard owning any of them), then one
// ReadBatch per shard owning any of the vertices, the shards concurrently,
// all at one held stamp. requests counts the ReadBatch calls (a shard's
// batch whose names exceed one request's bound takes more than one).
func (g *ClusterGatekeeper) GetVertices(ctx context.Context, snap Snapshot, refs []VertexRef, opts ReadOptions) ([]*Vertex, int, error) {
	if len(refs) > BatchRefsMax {
		return nil, 0, fmt.Errorf("%w: %d vertices in one batched read (at most %d)", ErrBadRequest, len(refs), BatchRefsMax)
	}
	if err := g.check(); err != nil {
		return nil, 0, err
	}
	for _, r := range refs {
		if err := txn.ValidName("vertex", r.Name, txn.HandleLenMax); err != nil {
			return nil, 0, err
		}
	}
	s, release, err := g.heldSnapshot(ctx, &snap)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	stamp := txn.EncodeStamp(s)
	out := make([]*Vertex, len(refs))
	aliases := map[int][]int{}
	for i, r := range refs {
		out[i] = &Vertex{}
		if r.Alias {
			aliases[g.shardOf(r.Name)] = append(aliases[g.shardOf(r.Name)], i)
		} else {
			out[i].Handle = r.Name
		}
	}
	requests, err := g.readShards(ctx, aliases, &pb.ReadBatchRequest{Stamp: stamp, Alias: true},
		func(i int) string { return refs[i].Name },
		func(i int, r *pb.ReadResponse) error {
			out[i].Handle = r.GetHandle()
			out[i].AliasRead = &txn.Read{Vertex: refs[i].Name, Alias: true, Version: r.GetVersion()}
			return nil
		})
	if err != nil {
		return nil, requests, err
	}
	vertices := map[int][]int{}
	for i, v := range out {
		if v.Handle != "" { // "": an unbound alias, answered as GetVertex answers it
			vertices[g.shardOf(v.Handle)] = append(vertices[g.shardOf(v.Handle)], i)
		}
	}
	max := opts.EdgesMax
	if max <= 0 {
		max = EdgesMaxDefault
	}
	n, err := g.readShards(ctx, vertices, &pb.ReadBatchRequest{Stamp: stamp, Props: opts.Props, Edges: opts.Edges,
		Aliases: opts.Aliases, EdgesMax: uint32(max)},
		func(i int) string { return out[i].Handle },
		func(i int, r *pb.ReadResponse) error { return vertexFromPB(out[i], r) })
	requests += n
	if err == nil {
		err = g.leaseOK() // answered only inside the lease, as GetVertex's reads are
	}
	if err != nil {
		return nil, requests, err
	}
	return out, requests, nil
}

var (
	_ BatchReader = (*ClusterGatekeeper)(nil)
	_ BatchReader = (*Switch)(nil)
)
