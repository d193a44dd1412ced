package coord

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/invariants"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// Limits of the replicated state. Failed members are kept (for fencing and
// the status page) up to FailedMax; older ones are dropped, and an id below
// next_member that is not in the table is fenced all the same.
const (
	FailedMax     = 256
	PromotionsMax = 64
	HistoryMax    = 64
	SlotsMax      = 1024 // per role
	MembersMax    = 4096 // live members
)

// ErrMalformed is returned for a command with missing or invalid fields.
var ErrMalformed = errors.New("coord: malformed command")

// Machine is the replicated membership state machine. Apply is
// deterministic: the same commands in the same order give byte-identical
// snapshots on every replica. It is pure and not safe for concurrent use.
type Machine struct {
	epoch, active uint64
	nextMember    uint64
	members       map[uint64]*pb.Member
	failed        []uint64 // failed member ids, oldest first (bounded by FailedMax)
	slots         map[pb.Role][]*pb.Slot
	promotions    []*pb.Promotion
	history       []*pb.Config
	applied       uint64

	// Per Apply: whether it already made a new epoch (one command makes at
	// most one), and the slots its failure vacated.
	bumped  bool
	vacated []vacancy

	bug plantedBug // tests only: a deliberately broken rule the checker must catch
}

// plantedBug names a deliberate fault, set only by tests, that shows the
// simulation checker catches the violation it introduces.
type plantedBug int

const (
	bugNone plantedBug = iota
	// bugPromoteInPlace promotes a backup without bumping the epoch: two
	// members hold one slot in one epoch.
	bugPromoteInPlace
	// bugEarlyBarrier activates an epoch before every live member acked it.
	bugEarlyBarrier
	// bugReplaceEarly (read by Node) proposes a condemned member's Fail at
	// once, without waiting for its lease to expire.
	bugReplaceEarly
	// bugForgetCondemned (read by Node) forgets the grants and the
	// condemned members whenever the leader starts serving again, even
	// within its term, while a Fail it proposed may still commit (the
	// simulation found this at seed 425 of the first lease code).
	bugForgetCondemned
)

// slotted reports whether a role holds numbered slots.
func slotted(r pb.Role) bool { return r == pb.Role_GATEKEEPER || r == pb.Role_SHARD }

// NewMachine returns the state of a new cluster: epoch 1, active, no members.
func NewMachine() *Machine {
	m := &Machine{epoch: 1, active: 1, nextMember: 1, members: map[uint64]*pb.Member{},
		slots: map[pb.Role][]*pb.Slot{}}
	m.recordHistory()
	return m
}

// Epoch returns the latest configuration epoch.
func (m *Machine) Epoch() uint64 { return m.epoch }

// ActiveEpoch returns the latest epoch every live member acknowledged.
func (m *Machine) ActiveEpoch() uint64 { return m.active }

// Applied returns the index of the last applied log entry.
func (m *Machine) Applied() uint64 { return m.applied }

// SetApplied records that every entry up to index is applied.
func (m *Machine) SetApplied(index uint64) { m.applied = index }

// Member returns a copy of member id's record and whether the id was ever
// issued (an issued id missing from the table was failed and dropped).
func (m *Machine) Member(id uint64) (*pb.Member, bool) {
	if mb, ok := m.members[id]; ok {
		return proto.Clone(mb).(*pb.Member), true
	}
	return nil, id != 0 && id < m.nextMember
}

// LiveMembers returns the ids of live members in increasing order.
func (m *Machine) LiveMembers() []uint64 {
	var ids []uint64
	for id, mb := range m.members {
		if mb.Live {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Apply executes one committed command at log index and returns its reply
// (a *pb.RegisterResponse, *pb.AckEpochResponse, *pb.AddSlotResponse, or nil
// for Fail). Invalid commands are answered MALFORMED and change nothing.
func (m *Machine) Apply(index uint64, c *pb.Command) proto.Message {
	m.applied = index
	m.bumped, m.vacated = false, nil
	var reply proto.Message
	switch op := c.Op.(type) {
	case *pb.Command_Register:
		reply = m.register(op.Register)
	case *pb.Command_Fail:
		m.fail(op.Fail.GetMember())
	case *pb.Command_Ack:
		reply = m.ack(op.Ack)
	case *pb.Command_AddSlot:
		reply = m.addSlot(op.AddSlot)
	default:
		reply = nil
	}
	m.fillVacancies()
	m.advanceBarrier()
	m.recordHistory()
	m.finishReply(reply)
	if invariants.On && m.bug == bugNone {
		if err := m.CheckInvariants(); err != nil {
			panic(fmt.Sprintf("coord: after entry %d: %v", index, err))
		}
	}
	return reply
}

// finishReply gives a reply the configuration after the whole command
// (slots filled, barrier advanced), not the one its handler saw.
func (m *Machine) finishReply(reply proto.Message) {
	switch r := reply.(type) {
	case *pb.RegisterResponse:
		if r.Member != nil {
			r.Member = proto.Clone(m.members[r.Member.Id]).(*pb.Member)
		}
		r.Config = m.Config()
	case *pb.AckEpochResponse:
		r.Config = m.Config()
	case *pb.AddSlotResponse:
		r.Config = m.Config()
	}
}

func malformed(msg string) *pb.Error {
	return &pb.Error{Code: pb.ErrorCode_MALFORMED, Message: "coord: " + msg}
}

// register adds a member, or returns the live one registered with the same
// token (a retried Register). A gatekeeper or shard takes the lowest vacant
// slot (fillVacancies, a new epoch) or waits as a backup.
func (m *Machine) register(r *pb.RegisterRequest) *pb.RegisterResponse {
	if r.GetToken() == 0 || r.GetName() == "" || r.GetRole() == pb.Role_ROLE_UNSPECIFIED {
		return &pb.RegisterResponse{Error: malformed("register needs a name, a role and a nonzero token")}
	}
	for _, id := range m.LiveMembers() {
		if mb := m.members[id]; mb.Token == r.GetToken() && mb.Name == r.GetName() {
			return &pb.RegisterResponse{Member: proto.Clone(mb).(*pb.Member), Config: m.Config()}
		}
	}
	if len(m.members)-len(m.failed) >= MembersMax {
		return &pb.RegisterResponse{Error: &pb.Error{Code: pb.ErrorCode_OVERLOADED, Message: "coord: too many members"}}
	}
	id := m.nextMember
	m.nextMember++
	mb := &pb.Member{Id: id, Name: r.GetName(), Role: r.GetRole(), Address: r.GetAddress(),
		HttpAddress: r.GetHttpAddress(), ApiAddress: r.GetApiAddress(), Slot: -1, Live: true, RegisteredEpoch: m.epoch, Token: r.GetToken()}
	m.members[id] = mb
	// A member starts in the epoch it joins: the reply carries it, so
	// registering acknowledges it (else a newcomer would hold the barrier
	// for an epoch it never saw the start of).
	mb.AckedEpoch = m.epoch
	m.fillVacancies()
	mb.AckedEpoch = m.epoch // the fill may have made a new epoch, which the reply also carries
	return &pb.RegisterResponse{Member: proto.Clone(mb).(*pb.Member), Config: m.Config()}
}

// fail fences a live member; a slot it held becomes vacant in a new epoch
// (filled by a backup at once if one is registered, in the same epoch).
func (m *Machine) fail(id uint64) {
	mb, ok := m.members[id]
	if !ok || !mb.Live {
		return // already failed or unknown: failure is idempotent
	}
	mb.Live = false
	if mb.Slot >= 0 && slotted(mb.Role) {
		s := m.slots[mb.Role][mb.Slot]
		if m.bug == bugPromoteInPlace {
			if b := m.backup(mb.Role); b != nil {
				m.assign(s, b, id) // same epoch: the planted bug
				mb.Slot, mb.FailedEpoch = -1, m.epoch
				m.trimFailed(id)
				return
			}
		}
		m.bump()
		s.Holder, s.SinceEpoch = 0, m.epoch
		mb.Slot = -1
		m.vacated = append(m.vacated, vacancy{role: mb.Role, slot: s.Index, failed: id})
	}
	mb.FailedEpoch = m.epoch
	m.trimFailed(id)
}

func (m *Machine) trimFailed(id uint64) {
	m.failed = append(m.failed, id)
	for len(m.failed) > FailedMax {
		delete(m.members, m.failed[0])
		m.failed = m.failed[1:]
	}
}

// vacancy remembers who held a slot vacated by a failure, so the promotion
// that fills it records the failed member.
type vacancy struct {
	role   pb.Role
	slot   int32
	failed uint64
}

func (m *Machine) ack(r *pb.AckEpochRequest) *pb.AckEpochResponse {
	mb, ok := m.members[r.GetMember()]
	if !ok || !mb.Live {
		return &pb.AckEpochResponse{Error: &pb.Error{Code: pb.ErrorCode_FENCED,
			Message: fmt.Sprintf("coord: member %d is not live", r.GetMember())}, Config: m.Config()}
	}
	if r.GetEpoch() > m.epoch {
		return &pb.AckEpochResponse{Error: malformed(fmt.Sprintf("ack of epoch %d beyond the latest %d", r.GetEpoch(), m.epoch)),
			Config: m.Config()}
	}
	mb.AckedEpoch = max(mb.AckedEpoch, r.GetEpoch())
	return &pb.AckEpochResponse{Config: m.Config()}
}

func (m *Machine) addSlot(r *pb.AddSlotRequest) *pb.AddSlotResponse {
	if !slotted(r.GetRole()) || r.GetCount() < 0 || r.GetCount() > SlotsMax {
		return &pb.AddSlotResponse{Error: malformed(fmt.Sprintf("add slot: role %v count %d", r.GetRole(), r.GetCount())),
			Config: m.Config()}
	}
	for int32(len(m.slots[r.GetRole()])) < r.GetCount() {
		m.bump() // a new slot changes the configuration (a new partition, a new clock entry)
		ss := m.slots[r.GetRole()]
		m.slots[r.GetRole()] = append(ss, &pb.Slot{Role: r.GetRole(), Index: int32(len(ss)), SinceEpoch: m.epoch})
	}
	return &pb.AddSlotResponse{Config: m.Config()}
}

// backup returns the live backup of role with the lowest id, or nil.
func (m *Machine) backup(role pb.Role) *pb.Member {
	for _, id := range m.LiveMembers() {
		if mb := m.members[id]; mb.Role == role && mb.Slot < 0 {
			return mb
		}
	}
	return nil
}

// fillVacancies gives every vacant slot to a backup of its role, lowest
// slot first, all in one new epoch.
func (m *Machine) fillVacancies() {
	for _, role := range []pb.Role{pb.Role_GATEKEEPER, pb.Role_SHARD} {
		for _, s := range m.slots[role] {
			if s.Holder != 0 {
				continue
			}
			b := m.backup(role)
			if b == nil {
				break
			}
			m.bump()
			m.assign(s, b, m.takeVacancy(role, s.Index))
		}
	}
	m.vacated = nil
}

func (m *Machine) takeVacancy(role pb.Role, slot int32) uint64 {
	for _, v := range m.vacated {
		if v.role == role && v.slot == slot {
			return v.failed
		}
	}
	return 0
}

func (m *Machine) assign(s *pb.Slot, b *pb.Member, failed uint64) {
	s.Holder, s.SinceEpoch = b.Id, m.epoch
	b.Slot = s.Index
	m.promotions = append(m.promotions, &pb.Promotion{Epoch: m.epoch, Role: s.Role, Slot: s.Index,
		Failed: failed, Promoted: b.Id})
	if len(m.promotions) > PromotionsMax {
		m.promotions = m.promotions[1:]
	}
}

// bump makes a new epoch, once per command: a failure and the promotion
// that fills its slot share one epoch, so the two never overlap in it.
func (m *Machine) bump() {
	if m.bumped {
		return
	}
	m.bumped = true
	m.epoch++
}

// advanceBarrier activates the latest epoch once every live member has
// acknowledged it.
func (m *Machine) advanceBarrier() {
	if m.active == m.epoch {
		return
	}
	if m.bug != bugEarlyBarrier {
		for _, id := range m.LiveMembers() {
			if m.members[id].AckedEpoch < m.epoch {
				return
			}
		}
	}
	m.active = m.epoch
}

// recordHistory records the current configuration as its epoch's entry
// (replacing an entry of the same epoch: the last word for an epoch wins).
func (m *Machine) recordHistory() {
	c := m.Config()
	if n := len(m.history); n > 0 && m.history[n-1].Epoch == c.Epoch {
		m.history[n-1] = c
		return
	}
	m.history = append(m.history, c)
	if len(m.history) > HistoryMax {
		m.history = m.history[1:]
	}
}

// Config returns the clients' view: every slot's holder and address.
func (m *Machine) Config() *pb.Config {
	c := &pb.Config{Epoch: m.epoch, ActiveEpoch: m.active}
	endpoints := func(role pb.Role) []*pb.Endpoint {
		var out []*pb.Endpoint
		for _, s := range m.slots[role] {
			e := &pb.Endpoint{Slot: s.Index, Member: s.Holder}
			if mb, ok := m.members[s.Holder]; ok {
				e.Address, e.ApiAddress = mb.Address, mb.ApiAddress
			}
			out = append(out, e)
		}
		return out
	}
	c.Gatekeepers = endpoints(pb.Role_GATEKEEPER)
	c.Shards = endpoints(pb.Role_SHARD)
	for _, id := range m.LiveMembers() {
		if mb := m.members[id]; mb.Role == pb.Role_KRONOS {
			c.Kronos = append(c.Kronos, &pb.Endpoint{Slot: -1, Member: id, Address: mb.Address})
		}
	}
	return c
}
