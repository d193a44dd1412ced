package gatekeeper

import (
	"testing"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

func op(shard uint32) []txn.ShardOp {
	return []txn.ShardOp{{Shard: shard, Kind: txn.OpCreateVertex, Vertex: "v"}}
}

// TestDeliveryFollowsStampOrder: a transaction resolved out of order waits
// for the earlier stamp; NOPs queue behind in-flight transactions; every
// shard sees consecutive sequence numbers and increasing stamps.
func TestDeliveryFollowsStampOrder(t *testing.T) {
	c := New(Config{ID: 1, Gatekeepers: 2, Shards: 2, Epoch: 1, InflightMax: 3})
	t1, _ := c.BeginCommit()
	t2, _ := c.BeginCommit()
	if err := c.Resolve(t2, op(0)); err != nil {
		t.Fatal(err)
	}
	if d := c.Ready(); len(d) != 0 || len(c.Acked()) != 0 {
		t.Fatalf("t2 delivered before t1 resolved: %v", d)
	}
	c.RequestNop(1, vclock.Clock{Epoch: 1, Counters: []uint64{7, 0}})
	c.RequestNop(1, vclock.Clock{}) // deduplicated while one is queued
	if err := c.Resolve(t1, nil); err != nil {
		t.Fatal(err)
	}
	d := c.Ready()
	if len(d) != 2 || d[0].Shard != 0 || d[0].Entry.Seq != 1 || d[0].Entry.Nop || d[1].Shard != 1 || !d[1].Entry.Nop {
		t.Fatalf("deliveries %+v", d)
	}
	if vclock.CompareStamps(d[1].Entry.Stamp, t2) != vclock.After || d[1].Entry.Stamp.Clock.Counters[0] < 7 {
		t.Fatalf("NOP stamp %s does not follow t2 %s and the requested clock", d[1].Entry.Stamp, t2)
	}
	if a := c.Acked(); len(a) != 1 || vclock.CompareStamps(a[0], t2) != vclock.Equal {
		t.Fatalf("acked %v, want only t2 (t1 aborted)", a)
	}
	if err := c.Resolve(t1, nil); err == nil {
		t.Fatal("resolving twice succeeded")
	}
	for i := 0; i < 3; i++ {
		if _, err := c.BeginCommit(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.BeginCommit(); err != ErrOverloaded {
		t.Fatalf("InflightMax not enforced: %v", err)
	}
}

func TestStampsIncreaseAndMergeOtherEpochs(t *testing.T) {
	c := New(Config{ID: 0, Gatekeepers: 2, Shards: 1, Epoch: 3})
	a := c.Stamp()
	c.Merge(vclock.Clock{Epoch: 2, Counters: []uint64{0, 99}}) // other epoch: ignored
	b := c.Stamp()
	if vclock.CompareStamps(a, b) != vclock.Before || b.Clock.Counters[1] != 0 || b.Seq() != 2 {
		t.Fatalf("a=%s b=%s", a, b)
	}
	c.Merge(vclock.Clock{Epoch: 3, Counters: []uint64{0, 5}})
	if s := c.Stamp(); s.Clock.Counters[1] != 5 {
		t.Fatalf("merge lost: %s", s)
	}
}

// TestDeclaredTransactionHoldsBackOnlyItsShards: once an in-flight
// transaction declares the shards it writes, NOPs and notes for the other
// shards go out at once; its own shards still wait for it.
func TestDeclaredTransactionHoldsBackOnlyItsShards(t *testing.T) {
	c := New(Config{ID: 0, Gatekeepers: 1, Shards: 2, Epoch: 1})
	s1, err := c.BeginCommit()
	if err != nil {
		t.Fatal(err)
	}
	c.RequestNop(1, vclock.Clock{})
	if got := c.Ready(); len(got) != 0 {
		t.Fatalf("a NOP passed an undeclared transaction: %+v", got)
	}
	if _, ok := c.NoteFor(1, s1.Clock); ok {
		t.Fatal("a note for shard 1 at the clock of an undeclared transaction that may write it")
	}
	if err := c.Declare(s1, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	got := c.Ready()
	if len(got) != 1 || got[0].Shard != 1 || !got[0].Entry.Nop {
		t.Fatalf("after declaring shard 0 only, Ready = %+v, want the NOP for shard 1", got)
	}
	if _, ok := c.NoteFor(1, vclock.Clock{}); !ok {
		t.Fatal("no note for shard 1, which the transaction does not write")
	}
	if _, ok := c.NoteFor(0, s1.Clock); ok {
		t.Fatal("a note for shard 0 at the clock of the transaction that writes it")
	}
	c.RequestNop(0, vclock.Clock{})
	if got := c.Ready(); len(got) != 0 {
		t.Fatalf("a NOP for shard 0 passed the transaction writing it: %+v", got)
	}
	if err := c.Resolve(s1, []txn.ShardOp{{Shard: 0, Kind: txn.OpCreateVertex, Vertex: "a"}}); err != nil {
		t.Fatal(err)
	}
	got = c.Ready()
	if len(got) != 2 || got[0].Entry.Nop || !got[1].Entry.Nop || got[0].Shard != 0 || got[1].Shard != 0 {
		t.Fatalf("after resolving, Ready = %+v, want the write then the NOP, both to shard 0", got)
	}
	if vclock.CompareStamps(got[0].Entry.Stamp, got[1].Entry.Stamp) != vclock.Before {
		t.Fatal("shard 0 got its entries out of stamp order")
	}
	if err := c.Declare(s1, nil); err == nil {
		t.Fatal("declaring a resolved transaction succeeded")
	}
}

// TestReadPointPrecedesInflight: with ReadPoints, the oldest in-flight
// transaction's read point is offered for reads; it precedes every
// transaction in flight and follows every one handed off, and a shard
// asking about it gets it back as a note (everything still to come is after
// it) although transactions to that shard are in flight; a clock that is
// not before them gets no note.
func TestReadPointPrecedesInflight(t *testing.T) {
	c := New(Config{ID: 0, Gatekeepers: 2, Shards: 2, Epoch: 1, ReadPoints: true})
	if _, ok := c.ReadPoint(); ok {
		t.Fatal("a read point with nothing in flight")
	}
	s1, _ := c.BeginCommit()
	s2, _ := c.BeginCommit()
	p1, ok := c.ReadPoint()
	if !ok {
		t.Fatal("no read point with two transactions in flight")
	}
	if vclock.CompareStamps(p1, s1) != vclock.Before || vclock.CompareStamps(p1, s2) != vclock.Before {
		t.Fatalf("point %s not before the in-flight %s and %s", p1, s1, s2)
	}
	note, ok := c.NoteFor(0, p1.Clock)
	if !ok || vclock.Compare(note, p1.Clock) != vclock.Equal {
		t.Fatalf("NoteFor(point) = %s, %v; want the point itself", note, ok)
	}
	if _, ok := c.NoteFor(0, s2.Clock); ok {
		t.Fatal("a note at the clock of an in-flight transaction that may write the shard")
	}
	if _, ok := c.NoteFor(0, vclock.Clock{}); ok {
		t.Fatal("a note without a clock while transactions to the shard are in flight (the GC needs the NOP behind them)")
	}
	if err := c.Resolve(s1, op(0)); err != nil {
		t.Fatal(err)
	}
	p2, ok := c.ReadPoint()
	if !ok {
		t.Fatal("no read point with one transaction in flight")
	}
	if vclock.CompareStamps(s1, p2) != vclock.Before || vclock.CompareStamps(p2, s2) != vclock.Before {
		t.Fatalf("point %s not between the handed-off %s and the in-flight %s", p2, s1, s2)
	}
	if err := c.Resolve(s2, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ReadPoint(); ok {
		t.Fatal("a read point once nothing is in flight")
	}
	off := New(Config{ID: 0, Gatekeepers: 1, Shards: 1, Epoch: 1})
	off.BeginCommit()
	if _, ok := off.ReadPoint(); ok {
		t.Fatal("a read point without ReadPoints")
	}
}
