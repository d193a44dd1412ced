package coord

import (
	"testing"
	"time"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// unreachableCluster is a one-replica group with gks gatekeeper slots, one
// shard slot and a backup of each role, every member heartbeating.
func unreachableCluster(t *testing.T, gks int32) (*single, []*pb.Member, *pb.Member) {
	cfg := DefaultNodeConfig(1, []uint64{1})
	cfg.Gatekeepers, cfg.Shards = gks, 1
	s := newSingle(t, cfg)
	for range 5 {
		s.tick()
	}
	var gk []*pb.Member
	for i := range gks {
		gk = append(gk, s.register("gk", pb.Role_GATEKEEPER, uint64(10+i)))
	}
	sh := s.register("sh", pb.Role_SHARD, 2)
	s.register("bgk", pb.Role_GATEKEEPER, 3)
	s.register("bsh", pb.Role_SHARD, 4)
	return s, gk, sh
}

// beatAll heartbeats every live member once (gatekeeper reporter reporting
// target unreachable) and returns each member's answer.
func (s *single) beatAll(reporter, target uint64) map[uint64]*pb.HeartbeatResponse {
	out := map[uint64]*pb.HeartbeatResponse{}
	ids := map[uint64]uint64{}
	for _, id := range s.n.Machine().LiveMembers() {
		req := &pb.HeartbeatRequest{Member: id}
		if id == reporter {
			req.Unreachable = []uint64{target}
		}
		resp, hb := s.n.Heartbeat(req)
		if resp != nil {
			out[id] = resp
		} else {
			ids[id] = hb
		}
	}
	s.tick()
	for id, hb := range ids {
		if r, ok := s.results[hb]; ok {
			out[id] = r.Reply.(*pb.HeartbeatResponse)
		}
	}
	return out
}

// TestUnreachableRule: a gatekeeper that alone reports a shard unreachable
// is replaced (its peer reaches the shard); the only gatekeeper reporting it
// gets the shard replaced. Either way the condemned member is granted no
// lease from the decision on, and its failure waits until its last lease
// certainly expired.
func TestUnreachableRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gks   int32
		blame string
	}{{"two gatekeepers: the reporter", 2, "reporter"}, {"one gatekeeper: the shard", 1, "shard"}} {
		t.Run(tc.name, func(t *testing.T) {
			s, gk, sh := unreachableCluster(t, tc.gks)
			reporter := gk[0].Id
			want := reporter
			if tc.blame == "shard" {
				want = sh.Id
			}
			rule := s.n.cfg.Lease
			var decided, failed time.Duration
			var lastGrant time.Duration
			for i := 0; i < 300 && failed == 0; i++ {
				out := s.beatAll(reporter, sh.Id)
				if r := out[want]; r != nil && r.Error == nil {
					if r.LeaseNs > 0 {
						if decided != 0 {
							t.Fatalf("member %d granted a lease after it was condemned", want)
						}
						lastGrant, _ = s.n.LastGrant(want)
					} else if decided == 0 {
						decided = s.n.Clock()
					}
				}
				if mb, _ := s.n.Machine().Member(want); !mb.Live {
					failed = s.n.Clock()
				}
				for _, id := range []uint64{reporter, sh.Id} {
					if mb, _ := s.n.Machine().Member(id); id != want && !mb.Live {
						t.Fatalf("member %d failed; the rule blames %d", id, want)
					}
				}
			}
			if decided == 0 || failed == 0 {
				t.Fatalf("member %d: condemned at %v, failed at %v", want, decided, failed)
			}
			if failed < rule.ReplaceAt(lastGrant) {
				t.Fatalf("failed at %v, before its last lease (granted %v) certainly expired at %v", failed, lastGrant, rule.ReplaceAt(lastGrant))
			}
			if failed-decided > rule.Lease+rule.MaxDrift+5*s.n.cfg.Tick {
				t.Fatalf("condemned at %v, failed only at %v", decided, failed)
			}
			if st := s.n.LeaseStats(); st.CondemnedUnreachable != 1 || st.Waited == 0 {
				t.Fatalf("lease stats %+v", st)
			}
		})
	}
}
