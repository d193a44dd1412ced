package txn

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// mapKV is a store transaction over a sorted map, copy-on-run so that a failed
// run leaves the base unchanged (as discarding a store transaction does).
type mapKV struct{ m map[string][]byte }

func (kv *mapKV) Get(k []byte) ([]byte, bool, error) { v, ok := kv.m[string(k)]; return v, ok, nil }
func (kv *mapKV) Set(k, v []byte) error              { kv.m[string(k)] = append([]byte(nil), v...); return nil }
func (kv *mapKV) Delete(k []byte) error              { delete(kv.m, string(k)); return nil }
func (kv *mapKV) Scan(start, end []byte, limit int, fn func(k, v []byte) error) error {
	var ks []string
	for k := range kv.m {
		if bytes.Compare([]byte(k), start) >= 0 && bytes.Compare([]byte(k), end) < 0 {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	for _, k := range ks {
		if err := fn([]byte(k), kv.m[k]); err != nil {
			return err
		}
	}
	return nil
}
func (kv *mapKV) clone() *mapKV {
	c := &mapKV{m: map[string][]byte{}}
	for k, v := range kv.m {
		c.m[k] = v
	}
	return c
}

func stamp(seq uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: []uint64{seq, 0}}, Owner: 0}
}

// apply runs ops on a copy and keeps it only on success.
func apply(t *testing.T, kv **mapKV, seq uint64, reads []Read, ops ...Op) (*Result, error) {
	t.Helper()
	c := (*kv).clone()
	res, err := Exec{Shards: 4}.Run(c, stamp(seq), reads, ops)
	if err == nil {
		*kv = c
	}
	return res, err
}

func TestExecOperationsAndErrors(t *testing.T) {
	kv := &mapKV{m: map[string][]byte{}}
	mustOK := func(seq uint64, ops ...Op) *Result {
		t.Helper()
		res, err := apply(t, &kv, seq, nil, ops...)
		if err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
		return res
	}
	res := mustOK(1, Op{Kind: CreateVertex, Vertex: "a"}, Op{Kind: CreateVertex, Vertex: "b"},
		Op{Kind: CreateVertex}, Op{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "ab"},
		Op{Kind: AddAlias, Vertex: "a", Alias: "alice"}, Op{Kind: SetVertexProp, Vertex: "a", Key: "age", Value: value.I64(30)})
	if len(res.Handles) != 4 || !strings.HasPrefix(res.Handles[2], "_v") || res.Handles[3] != "ab" {
		t.Fatalf("handles %v", res.Handles)
	}
	mustOK(2, Op{Kind: CreateEdge, Vertex: "alice", VertexAlias: true, Dst: "a"},
		Op{Kind: SetEdgeProp, Vertex: "a", Edge: "ab", Key: "w", Value: value.F64(1.5)})

	bad := []struct {
		op   Op
		want error
	}{
		{Op{Kind: CreateVertex, Vertex: "a"}, ErrExists},
		{Op{Kind: DeleteVertex, Vertex: "zz"}, ErrNotFound},
		{Op{Kind: CreateEdge, Vertex: "a", Dst: "zz"}, ErrNotFound},
		{Op{Kind: CreateEdge, Vertex: "a", Dst: "b", Edge: "ab"}, ErrExists},
		{Op{Kind: DeleteEdge, Vertex: "b", Edge: "ab"}, ErrNotFound},
		{Op{Kind: AddAlias, Vertex: "b", Alias: "alice"}, ErrExists},
		{Op{Kind: RemoveAlias, Vertex: "b", Alias: "alice"}, ErrNotFound},
		{Op{Kind: DeleteVertexProp, Vertex: "a", Key: "nope"}, ErrNotFound},
		{Op{Kind: DeleteEdgeProp, Vertex: "a", Edge: "ab", Key: "nope"}, ErrNotFound},
		{Op{Kind: SetVertexProp, Vertex: "a", Key: "k"}, ErrInvalid},
		{Op{Kind: SetVertexProp, Vertex: "a\x00", Key: "k", Value: value.I64(1)}, ErrInvalid},
		{Op{Kind: 99, Vertex: "a"}, ErrInvalid},
		{Op{Kind: CreateVertex, Vertex: "x", VertexAlias: true}, ErrInvalid},
	}
	for _, b := range bad {
		before := kv.clone()
		// A valid op first: a later failure must undo it too.
		_, err := apply(t, &kv, 3, nil, Op{Kind: CreateVertex, Vertex: "tmp"}, b.op)
		if !errors.Is(err, b.want) {
			t.Errorf("%+v: err %v, want %v", b.op, err, b.want)
		}
		if len(before.m) != len(kv.m) {
			t.Errorf("%+v: store changed", b.op)
		}
	}

	// Deleting b removes the in-edge a→b from a's shard and the store.
	res = mustOK(4, Op{Kind: DeleteVertex, Vertex: "b"})
	var sawEdgeDel bool
	for _, op := range res.Ops {
		if op.Kind == OpDeleteEdge && op.Vertex == "a" && op.Edge == "ab" {
			sawEdgeDel = true
		}
	}
	if !sawEdgeDel {
		t.Fatalf("delete b ops %+v", res.Ops)
	}
	if _, ok, _ := kv.Get(EdgeKey("a", "ab")); ok {
		t.Fatal("edge a→b still stored")
	}
	// Deleting a unbinds its alias; the alias can then be reused.
	mustOK(5, Op{Kind: DeleteVertex, Vertex: "alice", VertexAlias: true})
	mustOK(6, Op{Kind: CreateVertex, Vertex: "b"}, Op{Kind: AddAlias, Vertex: "b", Alias: "alice"})
	if n := countPrefix(kv, tagIn); n != 0 {
		t.Fatalf("%d dangling in-edge entries", n)
	}
}

func countPrefix(kv *mapKV, tag byte) int {
	n := 0
	for k := range kv.m {
		if k[0] == tag {
			n++
		}
	}
	return n
}

func TestReadValidation(t *testing.T) {
	kv := &mapKV{m: map[string][]byte{}}
	if _, err := apply(t, &kv, 1, nil, Op{Kind: CreateVertex, Vertex: "a"}); err != nil {
		t.Fatal(err)
	}
	ok := []Read{{Vertex: "a", Version: EncodeStamp(stamp(1))}, {Vertex: "never"}}
	if _, err := apply(t, &kv, 2, ok, Op{Kind: SetVertexProp, Vertex: "a", Key: "k", Value: value.Str("v")}); err != nil {
		t.Fatal(err)
	}
	stale := []Read{{Vertex: "a", Version: EncodeStamp(stamp(1))}}
	if _, err := apply(t, &kv, 3, stale, Op{Kind: CreateVertex, Vertex: "c"}); !errors.Is(err, ErrAborted) {
		t.Fatalf("stale read: %v", err)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	s := vclock.Stamp{Clock: vclock.Clock{Epoch: 7, Counters: []uint64{3, 0, 9}}, Owner: 2}
	got, err := DecodeStamp(EncodeStamp(s))
	if err != nil || vclock.CompareStamps(got, s) != vclock.Equal || got.Owner != 2 {
		t.Fatalf("stamp %v %v", got, err)
	}
	e := EdgeRec{Dst: "d", Props: []Prop{{"a", value.I64(1)}, {"b", value.ListOf(value.Str("x"))}}}
	e2, err := DecodeEdgeRec(e.Encode())
	if err != nil || e2.Dst != "d" || len(e2.Props) != 2 || !value.Equal(e2.Props[1].Value, e.Props[1].Value) {
		t.Fatalf("edge %+v %v", e2, err)
	}
	for _, bad := range [][]byte{{5}, {0xff, 0xff}} {
		if _, err := DecodeVertexRec(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}
