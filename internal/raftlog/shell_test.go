package raftlog

import (
	"path/filepath"
	"slices"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// A group's ids are its peers' in order, or the replica alone.
func TestIDs(t *testing.T) {
	if got := IDs(2, nil); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("group of one: %v", got)
	}
	if got := IDs(2, map[uint64]string{3: "c", 1: "a", 2: "b"}); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("group of three: %v", got)
	}
}

// The Compactor snapshots every Every applied entries, counting from the
// last snapshot, restored or installed, and the snapshot survives a reopen.
func TestCompactorSnapshotsWhenDue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := OpenDir(dir, Options{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	ents := make([]*raftpb.Entry, 0, 30)
	for i := uint64(1); i <= 30; i++ {
		ents = append(ents, &raftpb.Entry{Term: proto.Uint64(1), Index: proto.Uint64(i)})
	}
	if err := l.Save(&raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(30)}, ents, nil); err != nil {
		t.Fatal(err)
	}
	c := Compactor{Every: 10}
	c.From(5)
	calls := 0
	data := func() []byte { calls++; return []byte("state") }
	for _, applied := range []uint64{14, 15, 24, 25} {
		if err := c.Maybe(l, applied, nil, data); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Fatalf("%d snapshots, want 2 (at 15 and 25)", calls)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = OpenDir(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	snap, err := l.Mem.Snapshot()
	if err != nil || snap.GetMetadata().GetIndex() != 25 || string(snap.GetData()) != "state" {
		t.Fatalf("snapshot after reopen: %v %v", snap.GetMetadata(), err)
	}
}
