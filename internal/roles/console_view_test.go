package roles

import (
	"testing"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

func TestClusterViewOf(t *testing.T) {
	st := &pb.StatusResponse{NodeId: 2, LeaderId: 1, LeaderHint: "127.0.0.1:7700", Term: 4, AppliedIndex: 90,
		Config: &pb.Config{Epoch: 3, ActiveEpoch: 2},
		Members: []*pb.Member{
			{Id: 7, Name: "gk-0", Role: pb.Role_GATEKEEPER, Address: "127.0.0.1:9001", ApiAddress: "127.0.0.1:7500",
				HttpAddress: "127.0.0.1:7580", Slot: 0, Live: true},
			{Id: 8, Name: "shard-0", Role: pb.Role_SHARD, Address: "127.0.0.1:9002", Slot: -1, Live: true},
			{Id: 5, Name: "shard-old", Role: pb.Role_SHARD, Address: "127.0.0.1:9003", Slot: -1},
		},
		Slots:          []*pb.Slot{{Role: pb.Role_GATEKEEPER, Index: 0, Holder: 7, SinceEpoch: 1}, {Role: pb.Role_SHARD, Index: 0, Holder: 0, SinceEpoch: 3}},
		History:        []*pb.Config{{Epoch: 2, ActiveEpoch: 2, Gatekeepers: []*pb.Endpoint{{Slot: 0, Member: 7}}, Shards: []*pb.Endpoint{{Slot: 0, Member: 5}}}},
		HeartbeatAgeMs: map[uint64]uint64{7: 120},
		Load:           map[uint64]*pb.Load{8: {Values: map[string]float64{"vertices": 10}}},
	}
	v := clusterViewOf(st, "127.0.0.1:7580")
	if v.Mode != "cluster" || v.Epoch != 3 || v.ActiveEpoch != 2 || v.Coordinator.Leader != 1 || v.Coordinator.LeaderAddress != "127.0.0.1:7700" {
		t.Fatalf("view %+v %+v", v, v.Coordinator)
	}
	gk, shard, old := v.Members[0], v.Members[1], v.Members[2]
	if gk.Role != "gatekeeper" || gk.State != "slot" || gk.Address != "127.0.0.1:7500" || !gk.Self || gk.HeartbeatAgeMs != 120 {
		t.Errorf("gatekeeper %+v", gk)
	}
	if shard.Role != "shard" || shard.State != "backup" || shard.Self || shard.HeartbeatAgeMs != -1 || shard.Load["vertices"] != 10 {
		t.Errorf("shard %+v", shard)
	}
	if old.State != "failed" || old.Live {
		t.Errorf("failed member %+v", old)
	}
	if len(v.Slots) != 2 || v.Slots[1].Role != "shard" || v.Slots[1].Holder != 0 || v.Slots[1].SinceEpoch != 3 {
		t.Errorf("slots %+v", v.Slots)
	}
	if len(v.Epochs) != 1 || v.Epochs[0].Gatekeepers[0] != 7 || v.Epochs[0].Shards[0] != 5 {
		t.Errorf("epochs %+v", v.Epochs)
	}
	if clusterViewOf(st, "").Members[0].Self {
		t.Error("no address of its own, yet a member is marked as the process answering")
	}
}
