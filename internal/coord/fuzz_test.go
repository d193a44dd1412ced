package coord

import (
	"bytes"
	"testing"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// FuzzRestoreMachine: snapshot bytes from disk or a peer never panic the
// decoder, and whatever it accepts is consistent and re-encodes to bytes
// that restore to the same state.
func FuzzRestoreMachine(f *testing.F) {
	m := NewMachine()
	f.Add(m.Snapshot())
	m.Apply(1, &pb.Command{Op: &pb.Command_AddSlot{AddSlot: &pb.AddSlotRequest{Role: pb.Role_SHARD, Count: 2}}})
	m.Apply(2, &pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: "s", Role: pb.Role_SHARD, Token: 1}}})
	m.Apply(3, &pb.Command{Op: &pb.Command_Register{Register: &pb.RegisterRequest{Name: "b", Role: pb.Role_SHARD, Token: 2}}})
	m.Apply(4, &pb.Command{Op: &pb.Command_Fail{Fail: &pb.Fail{Member: 1}}})
	f.Add(m.Snapshot())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := RestoreMachine(b)
		if err != nil {
			return
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("accepted an inconsistent snapshot: %v", err)
		}
		s1 := m.Snapshot()
		m2, err := RestoreMachine(s1)
		if err != nil {
			t.Fatalf("own snapshot rejected: %v", err)
		}
		if !bytes.Equal(s1, m2.Snapshot()) {
			t.Fatal("snapshot does not round-trip")
		}
	})
}
