package coord

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// State returns a copy of the whole replicated state, in a canonical order
// (members by id, slots by role then index): equal states give equal bytes.
func (m *Machine) State() *pb.State {
	st := &pb.State{Epoch: m.epoch, ActiveEpoch: m.active, NextMember: m.nextMember}
	ids := make([]uint64, 0, len(m.members))
	for id := range m.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		st.Members = append(st.Members, proto.Clone(m.members[id]).(*pb.Member))
	}
	for _, role := range []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD} {
		for _, s := range m.slots[role] {
			st.Slots = append(st.Slots, proto.Clone(s).(*pb.Slot))
		}
	}
	for _, p := range m.promotions {
		st.Promotions = append(st.Promotions, proto.Clone(p).(*pb.Promotion))
	}
	for _, c := range m.history {
		st.History = append(st.History, proto.Clone(c).(*pb.Config))
	}
	return st
}

// Snapshot returns the state's deterministic encoding.
func (m *Machine) Snapshot() []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.State())
	assert(err == nil, "marshal state: %v", err)
	return b
}

// RestoreMachine rebuilds a machine from Snapshot bytes.
func RestoreMachine(b []byte) (*Machine, error) {
	st := &pb.State{}
	if err := proto.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("coord: snapshot: %w", err)
	}
	m := &Machine{epoch: st.Epoch, active: st.ActiveEpoch, nextMember: st.NextMember,
		members: map[uint64]*pb.Member{}, slots: map[pb.Role][]*pb.Slot{},
		promotions: st.Promotions, history: st.History}
	var failed []*pb.Member
	for _, mb := range st.Members {
		m.members[mb.Id] = mb
		if !mb.Live {
			failed = append(failed, mb)
		}
	}
	// Failed members are trimmed oldest first: by failure epoch, then id.
	slices.SortFunc(failed, func(a, b *pb.Member) int {
		if a.FailedEpoch != b.FailedEpoch {
			return cmpU64(a.FailedEpoch, b.FailedEpoch)
		}
		return cmpU64(a.Id, b.Id)
	})
	for _, mb := range failed {
		m.failed = append(m.failed, mb.Id)
	}
	if len(m.members) != len(st.Members) {
		return nil, errors.New("coord: snapshot: a member id listed twice")
	}
	if len(st.Members)-len(failed) > MembersMax || len(failed) > FailedMax || len(st.History) > HistoryMax ||
		len(st.Promotions) > PromotionsMax {
		return nil, errors.New("coord: snapshot: a table exceeds its bound")
	}
	for _, s := range st.Slots {
		if !slotted(s.Role) || int(s.Index) != len(m.slots[s.Role]) || s.Index >= SlotsMax {
			return nil, fmt.Errorf("coord: snapshot: slot %v/%d out of order", s.Role, s.Index)
		}
		m.slots[s.Role] = append(m.slots[s.Role], s)
	}
	if err := m.CheckInvariants(); err != nil {
		return nil, fmt.Errorf("coord: snapshot: %w", err)
	}
	return m, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CheckInvariants verifies the state's internal consistency:
//   - 1 <= active epoch <= epoch;
//   - every slot's holder is a live member of the slot's role that names
//     that slot, and every member naming a slot holds it (one holder per
//     slot, one slot per member);
//   - every live member has acknowledged the active epoch (the barrier);
//   - failed members hold no slot; member ids are below next_member.
func (m *Machine) CheckInvariants() error {
	if m.active < 1 || m.active > m.epoch {
		return fmt.Errorf("active epoch %d outside [1, %d]", m.active, m.epoch)
	}
	for role, ss := range m.slots {
		for i, s := range ss {
			if s.Index != int32(i) || s.Role != role {
				return fmt.Errorf("slot %v/%d stored at %v/%d", s.Role, s.Index, role, i)
			}
			if s.Holder == 0 {
				continue
			}
			mb, ok := m.members[s.Holder]
			if !ok || !mb.Live || mb.Role != role || mb.Slot != s.Index {
				return fmt.Errorf("slot %v/%d held by member %d which is not its live holder (%v)", role, i, s.Holder, mb)
			}
		}
	}
	for id, mb := range m.members {
		if id != mb.Id || id == 0 || id >= m.nextMember {
			return fmt.Errorf("member %d stored under id %d (next %d)", mb.Id, id, m.nextMember)
		}
		if mb.Slot >= 0 {
			ss := m.slots[mb.Role]
			if !mb.Live || int(mb.Slot) >= len(ss) || ss[mb.Slot].Holder != id {
				return fmt.Errorf("member %d (live %v) names slot %v/%d it does not hold", id, mb.Live, mb.Role, mb.Slot)
			}
		}
		if mb.Live && mb.AckedEpoch < m.active {
			return fmt.Errorf("epoch %d active but live member %d acked only %d", m.active, id, mb.AckedEpoch)
		}
	}
	return nil
}

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("coord: assertion failed: "+format, args...))
	}
}
