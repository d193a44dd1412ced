package txn

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/weft-db/weft/internal/value"
)

// countKV counts the reads that reach the store transaction, by key, except
// reads of keys the transaction wrote: those answer its own write, and a
// store does not put them in the read set.
type countKV struct {
	*mapKV
	gets    map[string]int
	all     map[string]int // every read, own writes included
	written map[string]bool
}

func (c *countKV) Get(k []byte) ([]byte, bool, error) {
	c.all[string(k)]++
	if !c.written[string(k)] {
		c.gets[string(k)]++
	}
	return c.mapKV.Get(k)
}

func (c *countKV) Set(k, v []byte) error { c.written[string(k)] = true; return c.mapKV.Set(k, v) }
func (c *countKV) Delete(k []byte) error { c.written[string(k)] = true; return c.mapKV.Delete(k) }

func run1(t *testing.T, x Exec, base *mapKV, seq uint64, ops ...Op) (*Result, error, *mapKV, map[string]int) {
	t.Helper()
	res, err, kv, c := runCount(x, base, seq, nil, ops...)
	return res, err, kv, c.gets
}

func runCount(x Exec, base *mapKV, seq uint64, reads []Read, ops ...Op) (*Result, error, *mapKV, *countKV) {
	c := &countKV{mapKV: base.clone(), gets: map[string]int{}, all: map[string]int{}, written: map[string]bool{}}
	res, err := x.Run(c, stamp(seq), reads, ops)
	return res, err, c.mapKV, c
}

// TestCachedPaths runs transactions that hit every cached path and checks
// that each still gets the answer the store would give.
func TestCachedPaths(t *testing.T) {
	base := &mapKV{m: map[string][]byte{}}
	if _, err := apply(t, &base, 1, nil, Op{Kind: CreateVertex, Vertex: "a"}, Op{Kind: CreateVertex, Vertex: "b"},
		Op{Kind: CreateVertex, Vertex: "gone"}, Op{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := apply(t, &base, 2, nil, Op{Kind: DeleteVertex, Vertex: "gone"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		ops  []Op
		want error // nil: commits
	}{
		{"duplicate edge on a vertex created here", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}, {Kind: CreateEdge, Vertex: "n", Dst: "b", Edge: "e"}}, ErrExists},
		{"duplicate edge on a stored vertex", []Op{{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "e"},
			{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "e"}}, ErrExists},
		{"stored edge", []Op{{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "old"}}, ErrExists},
		{"edge deleted then re-created on a fresh vertex", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}, {Kind: DeleteEdge, Vertex: "n", Edge: "e"},
			{Kind: CreateEdge, Vertex: "n", Dst: "b", Edge: "e"}}, nil},
		{"delete then recreate a vertex, then its old edge", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}, {Kind: DeleteVertex, Vertex: "n"},
			{Kind: CreateVertex, Vertex: "n"}, {Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}}, nil},
		{"delete then recreate a stored vertex, then its old edge", []Op{{Kind: DeleteVertex, Vertex: "a"},
			{Kind: CreateVertex, Vertex: "a"}, {Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "old"}}, nil},
		{"edge to a vertex deleted earlier here", []Op{{Kind: DeleteVertex, Vertex: "b"},
			{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "e"}}, ErrNotFound},
		{"edge from a vertex deleted earlier here", []Op{{Kind: DeleteVertex, Vertex: "a"},
			{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "e"}}, ErrNotFound},
		{"in-edge of a fresh vertex removed by deleting its target", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateVertex, Vertex: "m"}, {Kind: CreateEdge, Vertex: "n", Dst: "m", Edge: "e"},
			{Kind: DeleteVertex, Vertex: "m"}, {Kind: CreateVertex, Vertex: "m"},
			{Kind: CreateEdge, Vertex: "n", Dst: "m", Edge: "e"}}, nil},
		{"in-edge of a fresh vertex kept: duplicate", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateVertex, Vertex: "m"}, {Kind: CreateEdge, Vertex: "n", Dst: "m", Edge: "e"},
			{Kind: DeleteVertex, Vertex: "b"}, {Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}}, ErrExists},
		{"vertex created twice", []Op{{Kind: CreateVertex, Vertex: "n"}, {Kind: CreateVertex, Vertex: "n"}}, ErrExists},
		{"deleted vertex re-created", []Op{{Kind: CreateVertex, Vertex: "gone"},
			{Kind: CreateEdge, Vertex: "gone", Dst: "a", Edge: "e"}, {Kind: CreateEdge, Vertex: "gone", Dst: "a", Edge: "e"}}, ErrExists},
		{"delete twice", []Op{{Kind: DeleteVertex, Vertex: "a"}, {Kind: DeleteVertex, Vertex: "a"}}, ErrNotFound},
		{"alias bound twice", []Op{{Kind: AddAlias, Vertex: "a", Alias: "x"}, {Kind: AddAlias, Vertex: "b", Alias: "x"}}, ErrExists},
		{"alias rebound after its vertex is deleted", []Op{{Kind: AddAlias, Vertex: "a", Alias: "x"},
			{Kind: DeleteVertex, Vertex: "a"}, {Kind: AddAlias, Vertex: "b", Alias: "x"}, {Kind: CreateEdge, Vertex: "x", VertexAlias: true, Dst: "b", Edge: "e"}}, nil},
		{"alias removed, then used", []Op{{Kind: AddAlias, Vertex: "a", Alias: "x"},
			{Kind: RemoveAlias, Vertex: "a", Alias: "x"}, {Kind: CreateEdge, Vertex: "x", VertexAlias: true, Dst: "b", Edge: "e"}}, ErrNotFound},
		{"edge prop after create on a fresh vertex", []Op{{Kind: CreateVertex, Vertex: "n"},
			{Kind: CreateEdge, Vertex: "n", Dst: "a", Edge: "e"}, {Kind: SetEdgeProp, Vertex: "n", Edge: "e", Key: "k", Value: value.I64(1)}}, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err, kv, _ := run1(t, Exec{Shards: 4}, base, uint64(10+i), c.ops...)
			ures, uerr, ukv, _ := run1(t, Exec{Shards: 4, uncached: true}, base, uint64(10+i), c.ops...)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if fmt.Sprint(err) != fmt.Sprint(uerr) {
				t.Fatalf("cached err %v, uncached %v", err, uerr)
			}
			if err == nil && (!reflect.DeepEqual(res, ures) || !reflect.DeepEqual(kv.m, ukv.m)) {
				t.Fatalf("cached and uncached runs differ:\n%+v\n%+v", res, ures)
			}
		})
	}
}

// TestCacheSparesReads checks that the caches do spare reads: a vertex
// record is read from the store once per transaction, and an edge of a
// vertex created in it is never looked up.
func TestCacheSparesReads(t *testing.T) {
	base := &mapKV{m: map[string][]byte{}}
	if _, err := apply(t, &base, 1, nil, Op{Kind: CreateVertex, Vertex: "hub"}); err != nil {
		t.Fatal(err)
	}
	ops := []Op{{Kind: CreateVertex, Vertex: "n"}}
	for i := range 50 {
		ops = append(ops, Op{Kind: CreateEdge, Vertex: "hub", Dst: "n", Edge: fmt.Sprint("h", i)},
			Op{Kind: CreateEdge, Vertex: "n", Dst: "hub", Edge: fmt.Sprint("n", i)})
	}
	_, err, _, c := runCount(Exec{Shards: 4}, base, 2, nil, ops...)
	if err != nil {
		t.Fatal(err)
	}
	_, uerr, _, uc := runCount(Exec{Shards: 4, uncached: true}, base, 2, nil, ops...)
	if uerr != nil {
		t.Fatal(uerr)
	}
	gets, ugets := c.all, uc.all
	for _, h := range []string{"hub", "n"} {
		if g := gets[string(VertexKey(h))]; g != 1 {
			t.Errorf("vertex %s record read %d times, want 1", h, g)
		}
		if g := ugets[string(VertexKey(h))]; g < 50 {
			t.Errorf("uncached: vertex %s record read %d times, want ≥ 50 (the test no longer exercises the cache)", h, g)
		}
	}
	for i := range 50 {
		if g := gets[string(EdgeKey("n", fmt.Sprint("n", i)))]; g != 0 {
			t.Errorf("edge n%d of the fresh vertex looked up %d times", i, g)
		}
		if g := gets[string(EdgeKey("hub", fmt.Sprint("h", i)))]; g != 1 {
			t.Errorf("edge h%d of the stored vertex looked up %d times, want 1", i, g)
		}
	}
}

// TestCacheDifferential runs random transactions on a random store with
// and without the caches: results, errors and stores must be identical,
// and the vertex and alias records read from the snapshot (the store's read
// set) must be the same set.
func TestCacheDifferential(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	edges := []string{"e", "f"}
	rng := rand.New(rand.NewPCG(1, 2))
	randOp := func() Op {
		o := Op{Vertex: names[rng.IntN(len(names))]}
		switch rng.IntN(10) {
		case 0, 1:
			o.Kind = CreateVertex
		case 2:
			o.Kind = DeleteVertex
		case 3, 4, 5:
			o.Kind, o.Edge, o.Dst = CreateEdge, edges[rng.IntN(len(edges))], names[rng.IntN(len(names))]
		case 6:
			o.Kind, o.Edge = DeleteEdge, edges[rng.IntN(len(edges))]
		case 7:
			o.Kind, o.Edge, o.Key, o.Value = SetEdgeProp, edges[rng.IntN(len(edges))], "k", value.I64(1)
		case 8:
			o.Kind, o.Key, o.Value = SetVertexProp, "p", value.I64(2)
		case 9:
			o.Kind, o.Alias = AddAlias, "al"
			if rng.IntN(3) == 0 {
				o.Kind = RemoveAlias
			}
		}
		if o.Kind != CreateVertex && rng.IntN(4) == 0 {
			o.Vertex, o.VertexAlias = "al", true
		}
		return o
	}
	// A read of the alias or of a vertex at its present version (it
	// validates), so that checkRead's records are cached too.
	randReads := func(kv *mapKV) []Read {
		var rs []Read
		if b, ok := kv.m[string(AliasKey("al"))]; ok && rng.IntN(2) == 0 {
			rec, _ := DecodeAliasRec(b)
			rs = append(rs, Read{Vertex: "al", Alias: true, Version: EncodeStamp(rec.LastWrite)})
		}
		h := names[rng.IntN(len(names))]
		if b, ok := kv.m[string(VertexKey(h))]; ok && rng.IntN(2) == 0 {
			rec, _ := DecodeVertexRec(b)
			rs = append(rs, Read{Vertex: h, Version: EncodeStamp(rec.LastWrite)})
		}
		return rs
	}
	kv := &mapKV{m: map[string][]byte{}}
	commits := 0
	for seq := uint64(1); seq <= 3000; seq++ {
		ops := make([]Op, 1+rng.IntN(5))
		for i := range ops {
			ops[i] = randOp()
		}
		reads := randReads(kv)
		res, err, ckv, c := runCount(Exec{Shards: 4}, kv, seq, reads, ops...)
		ures, uerr, ukv, uc := runCount(Exec{Shards: 4, uncached: true}, kv, seq, reads, ops...)
		gets, ugets := c.gets, uc.gets
		if fmt.Sprint(err) != fmt.Sprint(uerr) {
			t.Fatalf("seq %d %+v: cached err %v, uncached %v", seq, ops, err, uerr)
		}
		if err != nil {
			continue
		}
		if !reflect.DeepEqual(res, ures) || !reflect.DeepEqual(ckv.m, ukv.m) {
			t.Fatalf("seq %d %+v: cached and uncached runs differ", seq, ops)
		}
		if a, b := recordReads(gets), recordReads(ugets); !reflect.DeepEqual(a, b) {
			t.Fatalf("seq %d %+v: records read %v, uncached %v", seq, ops, a, b)
		}
		kv = ckv
		commits++
	}
	if commits < 300 {
		t.Fatalf("only %d of 3000 random transactions committed: the test exercises little", commits)
	}
}

func recordReads(gets map[string]int) []string {
	var out []string
	for k := range gets {
		if k[0] == tagVertex || k[0] == tagAlias {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func TestShardOfIsFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "0x1f", "_dg|h|name|3", "xid|m.0abc"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := ShardOf(s, 7), uint32(h.Sum64()%7); got != want {
			t.Errorf("ShardOf(%q) = %d, want %d", s, got, want)
		}
	}
}
