package gatekeeper

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

func testStamp(epoch uint64, owner uint32, counters ...uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Epoch: epoch, Counters: counters}, Owner: owner}
}

// Unique markers, found in the encodings by the rejection tests.
const (
	markGroup   = "\xf0group\xf0"
	markHandle  = "\xf1tomb\xf1"
	markOpAlias = "\xf2op\xf2"
)

// slotMove moves a slot unit: a vertex with props, aliases and edges (one
// with props, one without), a tombstone, a vertex written at W (the zero
// stamp); aliases bound and unbound, with zero and non-zero stamps.
func slotMove() *txn.UnitMove {
	return &txn.UnitMove{
		Unit: txn.Unit{Slot: 777}, From: 3, To: 1<<32 - 1,
		Vertices: []*graph.VertexRecord{
			{
				Handle: "v1", LastWrite: testStamp(2, 1, 5, 1<<40, 0),
				Props: []graph.Prop{
					{Key: "name", Val: value.Str("Ada")},
					{Key: "born", Val: value.Time(time.Unix(-4_000_000_000, 7).UTC())},
					{Key: "n", Val: value.I64(-9)},
					{Key: "tags", Val: value.ListOf(value.Str("a"), value.F64(0.5), value.Boolean(false))},
					{Key: "", Val: value.Value{}},
				},
				Aliases: []string{"ada", "countess"},
				Edges: []graph.EdgeRecord{
					{Handle: "e1", Dst: "v9", Props: []graph.Prop{{Key: "since", Val: value.I64(1843)}}},
					{Handle: "e2", Dst: "g:other|x"},
				},
			},
			{Handle: "tomb", Deleted: true, LastWrite: testStamp(0, 0, 1)},
			{Handle: "w", Props: []graph.Prop{{Key: "k", Val: value.Str("")}}},
		},
		Aliases: []txn.AliasState{
			{Alias: "ada", Handle: "v1", LastWrite: testStamp(1, 0, 3)},
			{Alias: "gone", LastWrite: testStamp(1, 2, 0, 0, 8)},
			{Alias: "old"},
		},
	}
}

// groupMove moves a group unit; its tombstone and unbound alias carry the
// markers the rejection tests look for.
func groupMove() *txn.UnitMove {
	return &txn.UnitMove{
		Unit: txn.Unit{Group: markGroup}, From: 0, To: 2,
		Vertices: []*graph.VertexRecord{
			{Handle: markHandle, Deleted: true},
			{Handle: "g:" + markGroup + "|a", LastWrite: testStamp(4, 0, 1, 2),
				Edges: []graph.EdgeRecord{{Handle: "g:" + markGroup + "|e", Dst: "elsewhere",
					Props: []graph.Prop{{Key: "w", Val: value.F64(2.5)}, {Key: "x", Val: value.Boolean(true)}}}}},
		},
		Aliases: []txn.AliasState{{Alias: "unbound", LastWrite: testStamp(4, 0, 1, 2)}},
	}
}

// moveEntries are entries with move operations, in canonical form.
func moveEntries() []Entry {
	st := testStamp(5, 1, 10, 20)
	sm, gm := slotMove(), groupMove()
	return []Entry{
		{GK: 1, Seq: 20, Stamp: st, Ops: []txn.ShardOp{
			{Shard: sm.From, Kind: txn.OpUnitOut, Move: sm},
			{Shard: sm.To, Kind: txn.OpUnitIn, Move: sm},
		}},
		{GK: 1, Seq: 21, Stamp: st, Ops: []txn.ShardOp{
			{Shard: 0, Kind: txn.OpSetVertexProp, Vertex: "v", Key: "k", Value: value.I64(1)},
			{Shard: gm.To, Kind: txn.OpUnitIn, Alias: markOpAlias, Move: gm},
			{Shard: 0, Kind: txn.OpBindAlias, Alias: "a", Vertex: "v"},
		}},
		{GK: 1, Seq: 22, Stamp: st, Ops: []txn.ShardOp{
			{Shard: 4, Kind: txn.OpUnitOut, Move: &txn.UnitMove{Unit: txn.Unit{Slot: 0}, From: 4, To: 5}},
		}},
	}
}

func TestEntryMoveRoundTrip(t *testing.T) {
	for i, e := range moveEntries() {
		b := AppendEntry(nil, e)
		got, err := DecodeEntry(b)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("entry %d: got %+v, want %+v", i, got, e)
		}
		checkCanonical(t, b)
	}
}

// The canonical form: empty slices decode as nil, every zero stamp as
// vclock.Stamp{}; the bytes do not depend on the difference.
func TestEntryMoveCanonicalForm(t *testing.T) {
	st := testStamp(1, 0, 1)
	loose := &txn.UnitMove{
		Unit: txn.Unit{Group: "g"}, From: 1, To: 2,
		Vertices: []*graph.VertexRecord{{
			Handle: "v", LastWrite: vclock.Stamp{Clock: vclock.Clock{Counters: []uint64{}}, Owner: 3},
			Props: []graph.Prop{}, Aliases: []string{}, Edges: []graph.EdgeRecord{{Handle: "e", Dst: "d", Props: []graph.Prop{}}},
		}},
		Aliases: []txn.AliasState{},
	}
	canon := &txn.UnitMove{
		Unit: txn.Unit{Group: "g"}, From: 1, To: 2,
		Vertices: []*graph.VertexRecord{{Handle: "v", Edges: []graph.EdgeRecord{{Handle: "e", Dst: "d"}}}},
	}
	b := AppendEntry(nil, Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{{Kind: txn.OpUnitOut, Move: loose}}})
	want := Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{{Kind: txn.OpUnitOut, Move: canon}}}
	if c := AppendEntry(nil, want); !bytes.Equal(c, b) {
		t.Fatalf("canonical form encodes as %x, loose as %x", c, b)
	}
	got, err := DecodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got.Ops[0].Move, want.Ops[0].Move)
	}
	empty := Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{{Kind: txn.OpUnitIn, Move: &txn.UnitMove{Vertices: []*graph.VertexRecord{}}}}}
	got, err = DecodeEntry(AppendEntry(nil, empty))
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Ops[0].Move; m == nil || m.Vertices != nil || m.Aliases != nil {
		t.Fatalf("empty move decodes as %+v", m)
	}
}

// Every strict prefix of an entry with moves fails with ErrBadEntry, and
// every one-byte change either fails so or decodes canonically.
func TestEntryMoveTruncatedAndCorrupted(t *testing.T) {
	for i, e := range moveEntries() {
		b := AppendEntry(nil, e)
		for n := range len(b) {
			if _, err := DecodeEntry(b[:n]); !errors.Is(err, ErrBadEntry) {
				t.Fatalf("entry %d cut to %d of %d bytes: %v", i, n, len(b), err)
			}
		}
		c := make([]byte, len(b))
		for j := range b {
			for _, x := range [...]byte{0x01, 0x02, 0x40, 0x80, 0xff} {
				copy(c, b)
				c[j] ^= x
				checkCanonical(t, c)
			}
		}
	}
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: AppendEntry did not panic", name)
		}
	}()
	f()
}

// AppendEntry refuses the programmer errors it cannot encode.
func TestAppendEntryMovePanics(t *testing.T) {
	st := testStamp(1, 0, 1)
	for name, op := range map[string]txn.ShardOp{
		"move on create vertex": {Kind: txn.OpCreateVertex, Move: slotMove()},
		"move on unbind alias":  {Kind: txn.OpUnbindAlias, Move: slotMove()},
		"unit out without move": {Kind: txn.OpUnitOut},
		"unit in without move":  {Kind: txn.OpUnitIn},
		"nil vertex record":     {Kind: txn.OpUnitIn, Move: &txn.UnitMove{Vertices: []*graph.VertexRecord{nil}}},
	} {
		mustPanic(t, name, func() { AppendEntry(nil, Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{op}}) })
	}
}

// splice returns b with n bytes at off replaced by with.
func splice(b []byte, off, n int, with ...byte) []byte {
	return append(append(append([]byte(nil), b[:off]...), with...), b[off+n:]...)
}

// uvarintsAt returns the offset after k uvarints from off.
func uvarintsAt(b []byte, off, k int) int {
	for range k {
		_, w := binary.Uvarint(b[off:])
		off += w
	}
	return off
}

func TestEntryMoveRejects(t *testing.T) {
	st := testStamp(1, 0, 1)
	// good: one op, OpUnitIn, whose move is groupMove's.
	good := AppendEntry(nil, Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{{Kind: txn.OpUnitIn, Vertex: markOpAlias, Move: groupMove()}}})
	if _, err := DecodeEntry(good); err != nil {
		t.Fatal(err)
	}
	plain := AppendEntry(nil, Entry{Seq: 1, Stamp: st, Ops: []txn.ShardOp{{Kind: txn.OpCreateVertex, Vertex: markOpAlias}}})
	kindAt := func(b []byte) int { return bytes.Index(b, []byte(markOpAlias)) - 2 } // kind, then the name's length
	group := bytes.Index(good, []byte(markGroup)) + len(markGroup)
	fromAt := uvarintsAt(good, group, 1)
	toAt := uvarintsAt(good, group, 2)
	vcountAt := uvarintsAt(good, group, 3)
	deletedAt := bytes.Index(good, []byte(markHandle)) + len(markHandle)
	stampAt := deletedAt + 1 // the tombstone's stamp: zero, one length byte
	if good[stampAt] != 0 {
		t.Fatalf("tombstone stamp at %d: %x", stampAt, good[stampAt:])
	}
	aliasStampAt := bytes.LastIndex(good, []byte("unbound")) + len("unbound") + 1 // after the empty handle

	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"version 1":               {splice(plain, 0, 1, 1), "version 1"},
		"move kind without move":  {splice(plain, kindAt(plain), 1, byte(txn.OpUnitOut)), "move unit group"},
		"move on a plain kind":    {splice(good, kindAt(good), 1, byte(txn.OpCreateVertex)), "trailing bytes"},
		"kind past unit in":       {splice(good, kindAt(good), 1, byte(txn.OpUnitIn+1)), "operation kind"},
		"from past 32 bits":       {splice(good, fromAt, 1, binary.AppendUvarint(nil, 1<<32)...), "move from"},
		"to past 32 bits":         {splice(good, toAt, 1, binary.AppendUvarint(nil, 1<<32)...), "move to"},
		"slot past 32 bits":       {splice(good, group, 1, binary.AppendUvarint(nil, 1<<40)...), "move unit slot"},
		"non-canonical from":      {splice(good, fromAt, 1, 0x80, 0x00), "move from"},
		"huge vertex count":       {splice(good, vcountAt, 1, binary.AppendUvarint(nil, 1<<40)...), "move vertex count"},
		"vertex count past input": {splice(good, vcountAt, 1, binary.AppendUvarint(nil, uint64(len(good)-vcountAt-1)/6+1)...), "move vertex count"},
		"deleted flag 2":          {splice(good, deletedAt, 1, 2), "move vertex deleted flag"},
		"non-canonical stamp":     {splice(good, stampAt, 1, 5, 0x81, 0x00, 0, 1, 1), "move vertex last-write stamp"},
		"stamp owner past clock":  {splice(good, stampAt, 1, 4, 1, 1, 1, 1), "move vertex last-write stamp"},
		"stamp of 1024 counters":  {splice(good, stampAt, 1, 4, 1, 0, 0x80, 0x08), "move vertex last-write stamp"},
		"stamp trailing byte":     {splice(good, stampAt, 1, 5, 1, 0, 1, 1, 0), "move vertex last-write stamp"},
		"alias stamp cut":         {splice(good, aliasStampAt, 1, 0x7f), "move alias last-write stamp"},
	} {
		_, err := DecodeEntry(c.b)
		if !errors.Is(err, ErrBadEntry) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrBadEntry naming %q", name, err, c.want)
		}
	}
}
