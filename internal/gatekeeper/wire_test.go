package gatekeeper

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

func randomEntry(r *rand.Rand) Entry {
	gks := 1 + r.IntN(5)
	cl := vclock.New(r.Uint64N(9), gks)
	for i := range cl.Counters {
		cl.Counters[i] = r.Uint64N(1 << uint(r.IntN(64)))
	}
	owner := uint32(r.IntN(gks))
	e := Entry{GK: owner, Seq: 1 + r.Uint64N(1<<40), Stamp: vclock.Stamp{Clock: cl, Owner: owner}}
	if r.IntN(4) == 0 {
		e.Nop = true
		return e
	}
	str := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	vals := []value.Value{{}, value.Str(str()), value.I64(r.Int64() - r.Int64()), value.F64(math.Inf(-1)),
		value.F64(r.Float64()), value.Boolean(true), value.ListOf(value.I64(1), value.Str("x"))}
	for range r.IntN(5) {
		op := txn.ShardOp{Shard: r.Uint32(), Kind: txn.ShardKind(1 + r.IntN(int(txn.OpUnitIn))),
			Vertex: str(), Edge: str(), Dst: str(), Key: str(), Alias: str(), Value: vals[r.IntN(len(vals))]}
		if op.Kind == txn.OpUnitOut || op.Kind == txn.OpUnitIn {
			op.Move = randomMove(r, str, vals)
		}
		e.Ops = append(e.Ops, op)
	}
	return e
}

// randomStamp returns the zero stamp (as DecodeEntry yields it) or a valid
// one.
func randomStamp(r *rand.Rand) vclock.Stamp {
	if r.IntN(3) == 0 {
		return vclock.Stamp{}
	}
	gks := 1 + r.IntN(4)
	cl := vclock.New(r.Uint64N(9), gks)
	for i := range cl.Counters {
		cl.Counters[i] = r.Uint64N(1 << uint(r.IntN(64)))
	}
	return vclock.Stamp{Clock: cl, Owner: uint32(r.IntN(gks))}
}

// randomMove returns a move in canonical form (nil for every empty slice).
func randomMove(r *rand.Rand, str func() string, vals []value.Value) *txn.UnitMove {
	props := func() []graph.Prop {
		var ps []graph.Prop
		for range r.IntN(3) {
			ps = append(ps, graph.Prop{Key: str(), Val: vals[r.IntN(len(vals))]})
		}
		return ps
	}
	m := &txn.UnitMove{From: r.Uint32(), To: r.Uint32()}
	if r.IntN(2) == 0 {
		m.Unit.Group = str()
	} else {
		m.Unit.Slot = r.Uint32()
	}
	for range r.IntN(4) {
		v := &graph.VertexRecord{Handle: str(), LastWrite: randomStamp(r)}
		if r.IntN(4) == 0 {
			v.Deleted = true
		} else {
			v.Props = props()
			for range r.IntN(3) {
				v.Aliases = append(v.Aliases, str())
			}
			for range r.IntN(3) {
				v.Edges = append(v.Edges, graph.EdgeRecord{Handle: str(), Dst: str(), Props: props()})
			}
		}
		m.Vertices = append(m.Vertices, v)
	}
	for range r.IntN(4) {
		a := txn.AliasState{Alias: str(), LastWrite: randomStamp(r)}
		if r.IntN(2) == 0 {
			a.Handle = str()
		}
		m.Aliases = append(m.Aliases, a)
	}
	return m
}

// Entries survive the round trip, and every truncation or one-byte change
// either decodes to an entry that encodes back to the same bytes or fails
// with ErrBadEntry.
func TestEntryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		e := randomEntry(r)
		b := AppendEntry(nil, e)
		got, err := DecodeEntry(b)
		if err != nil {
			t.Fatalf("entry %d %+v: %v", i, e, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("entry %d: got %+v, want %+v", i, got, e)
		}
		if _, err := DecodeEntry(b[:r.IntN(len(b))]); !errors.Is(err, ErrBadEntry) {
			t.Fatalf("entry %d truncated: %v", i, err)
		}
		c := append([]byte(nil), b...)
		c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
		checkCanonical(t, c)
	}
}

func TestEntryRejects(t *testing.T) {
	good := AppendEntry(nil, Entry{GK: 0, Seq: 1, Stamp: vclock.Stamp{Clock: vclock.New(1, 1)}})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"version":     append([]byte{9}, good[1:]...),
		"trailing":    append(append([]byte(nil), good...), 0),
		"nop with op": AppendEntry(nil, Entry{Seq: 1, Nop: true, Stamp: vclock.Stamp{Clock: vclock.New(1, 1)}, Ops: []txn.ShardOp{{Kind: txn.OpCreateVertex}}}),
		"bad kind":    AppendEntry(nil, Entry{Seq: 1, Stamp: vclock.Stamp{Clock: vclock.New(1, 1)}, Ops: []txn.ShardOp{{Kind: 99}}}),
		"zero stamp":  AppendEntry(nil, Entry{Seq: 1}),
		"huge count":  append(append([]byte(nil), good[:len(good)-1]...), 0xff, 0xff, 0xff, 0x7f),
	} {
		if _, err := DecodeEntry(b); !errors.Is(err, ErrBadEntry) {
			t.Errorf("%s: %v, want ErrBadEntry", name, err)
		}
	}
}

// checkCanonical: b decodes only to an entry whose encoding is b.
func checkCanonical(t *testing.T, b []byte) {
	t.Helper()
	e, err := DecodeEntry(b)
	if err != nil {
		if !errors.Is(err, ErrBadEntry) {
			t.Fatalf("error %v is not ErrBadEntry", err)
		}
		return
	}
	again := AppendEntry(nil, e)
	if string(again) != string(b) {
		t.Fatalf("%x decodes to %+v, which encodes as %x", b, e, again)
	}
	if e2, err := DecodeEntry(again); err != nil || !reflect.DeepEqual(e2, e) {
		t.Fatalf("%x decodes to %+v, then to %+v (%v)", b, e, e2, err)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(AppendEntry(nil, randomEntry(r)))
	}
	for _, e := range moveEntries() {
		f.Add(AppendEntry(nil, e))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkCanonical(t, b) })
}
