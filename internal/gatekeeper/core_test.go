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
