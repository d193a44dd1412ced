package coord

import (
	"encoding/binary"
	"slices"
	"time"

	"go.etcd.io/raft/v3"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// The serving leader's side of leases and of unreachable peers (lease.go,
// docs/cluster.md "Leases" and "Availability").

// heartbeatsMax bounds the heartbeats waiting for the next leadership
// check; past it a heartbeat is answered OVERLOADED (the member retries at
// its next interval, its lease running meanwhile).
const heartbeatsMax = 4096

// reportsMax bounds the peers one member may report unreachable.
const reportsMax = 64

type pendingHeartbeat struct {
	id, member uint64
}

// heartbeatBatch is the heartbeats one ReadIndex confirms.
type heartbeatBatch struct {
	at  int64 // tick issued
	hbs []pendingHeartbeat
}

// LeaseStats counts the serving leader's lease decisions since it started
// (soft state, not replicated).
type LeaseStats struct {
	// Granted counts leases granted; Withheld heartbeats of condemned
	// members answered without one; Unconfirmed heartbeats whose
	// leadership check did not come back within ElectionTicks.
	Granted, Withheld, Unconfirmed int
	// CondemnedSilent and CondemnedUnreachable count members condemned
	// for silence and by the unreachable-peer rule; Waited counts ticks in
	// which a condemned member's Fail waited for its lease to expire.
	CondemnedSilent, CondemnedUnreachable, Waited int
}

// LeaseStats returns the serving leader's counters.
func (n *Node) LeaseStats() LeaseStats { return n.leaseStats }

// clock is the core's clock: ticks × Tick.
func (n *Node) clock() time.Duration { return time.Duration(n.now) * n.cfg.Tick }

// grantClock is the instant a grant is recorded at: the end of the current
// tick, since the clock reads the tick's start and the grant is made
// somewhere inside it (recording the later instant only delays the
// replacement).
func (n *Node) grantClock() time.Duration { return n.clock() + n.cfg.Tick }

// Clock returns the instant the core's leases are counted on.
func (n *Node) Clock() time.Duration { return n.clock() }

// LastGrant returns, on the serving leader, the instant of member id's last
// grant (assumed at the start of serving) and whether it is known.
func (n *Node) LastGrant(id uint64) (time.Duration, bool) {
	g, ok := n.grants[id]
	return g, ok
}

// Condemned reports whether the serving leader decided to replace member id.
func (n *Node) Condemned(id uint64) bool {
	_, ok := n.condemned[id]
	return ok
}

// confirmHeartbeats gives up on leadership checks older than ElectionTicks
// (their heartbeats are answered NOT_READY) and sends one ReadIndex for the
// heartbeats queued since the last tick.
func (n *Node) confirmHeartbeats() {
	for _, id := range sortedKeys(n.hbInflight) {
		b := n.hbInflight[id]
		if n.now-b.at <= int64(n.cfg.ElectionTicks) {
			continue
		}
		delete(n.hbInflight, id)
		for _, hb := range b.hbs {
			n.leaseStats.Unconfirmed++
			n.outbox = append(n.outbox, Result{Proposal: hb.id, Reply: &pb.HeartbeatResponse{Error: &pb.Error{
				Code: pb.ErrorCode_NOT_READY, Message: "coord: the leadership check did not complete"}}})
		}
	}
	if len(n.hbQueue) == 0 {
		return
	}
	id := n.newID()
	var ctx [8]byte
	binary.BigEndian.PutUint64(ctx[:], id)
	n.rn.ReadIndex(ctx[:])
	n.hbInflight[id] = &heartbeatBatch{at: n.now, hbs: n.hbQueue}
	n.hbQueue = nil
}

// confirmed answers the heartbeats of the batch a ReadIndex confirmed: the
// leadership held after they arrived, so each grant's start (the member's
// sending instant) precedes any successor's election.
func (n *Node) confirmed(rs raft.ReadState) []Result {
	if len(rs.RequestCtx) != 8 || n.hbInflight == nil {
		return nil
	}
	id := binary.BigEndian.Uint64(rs.RequestCtx)
	b, ok := n.hbInflight[id]
	if !ok {
		return nil
	}
	delete(n.hbInflight, id)
	out := make([]Result, 0, len(b.hbs))
	for _, hb := range b.hbs {
		out = append(out, Result{Proposal: hb.id, Reply: n.grant(hb.member)})
	}
	return out
}

// grant answers a confirmed heartbeat with the member's record, the
// configuration and, unless the member is condemned, a lease recorded at
// this instant.
func (n *Node) grant(id uint64) *pb.HeartbeatResponse {
	if !n.serving {
		return &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_NOT_LEADER, Message: "coord: leadership lost"}}
	}
	mb, _ := n.mach.Member(id)
	if mb == nil || !mb.Live {
		return &pb.HeartbeatResponse{Error: &pb.Error{Code: pb.ErrorCode_FENCED,
			Message: "coord: member was declared failed; register again"}, Member: mb}
	}
	resp := &pb.HeartbeatResponse{Member: mb, Config: n.mach.Config()}
	if _, c := n.condemned[id]; c {
		n.leaseStats.Withheld++
		return resp
	}
	n.grants[id] = n.grantClock()
	n.leaseStats.Granted++
	resp.LeaseNs = int64(n.cfg.Lease.Lease)
	return resp
}

// dropHeartbeats answers every waiting heartbeat NOT_LEADER (serving ended).
func (n *Node) dropHeartbeats() {
	drop := func(hbs []pendingHeartbeat) {
		for _, hb := range hbs {
			n.outbox = append(n.outbox, Result{Proposal: hb.id, Reply: &pb.HeartbeatResponse{Error: &pb.Error{
				Code: pb.ErrorCode_NOT_LEADER, Message: "coord: leadership lost"}}})
		}
	}
	drop(n.hbQueue)
	for _, id := range sortedKeys(n.hbInflight) {
		drop(n.hbInflight[id].hbs)
	}
	n.hbQueue, n.hbInflight = nil, nil
}

// condemn decides to replace member id: it is granted nothing more, and
// failed once its last lease certainly expired (detect).
func (n *Node) condemn(id uint64) {
	if _, ok := n.condemned[id]; ok {
		return
	}
	n.condemned[id] = n.clock()
	if last, ok := n.lastHeard[id]; ok && n.now-last > n.cfg.SuspectTicks {
		n.leaseStats.CondemnedSilent++
	} else {
		n.leaseStats.CondemnedUnreachable++
	}
}

// recordReport keeps the peers member id reported unreachable in its latest
// heartbeat (none: it reaches every peer it needs).
func (n *Node) recordReport(id uint64, peers []uint64) {
	if len(peers) == 0 || len(peers) > reportsMax {
		delete(n.reports, id)
		return
	}
	n.reports[id] = slices.Clone(peers)
}

// resolveUnreachable applies the availability rule (docs/cluster.md): for
// each slot holder T that live slot holders report unreachable, if some
// other live slot holder of the reporters' role does not report T, the
// reporters are the odd ones out and are condemned; otherwise (every such
// member reports T, e.g. the only gatekeeper) T is. A side whose role has
// no live backup is spared when the other side's has one. One resolution
// per target at a time: nothing is decided while T or a reporter is
// already condemned.
func (n *Node) resolveUnreachable(live []uint64) {
	if len(n.reports) == 0 {
		return
	}
	holds := func(id uint64) *pb.Member {
		mb, ok := n.mach.members[id]
		if !ok || !mb.Live || mb.Slot < 0 || !slotted(mb.Role) {
			return nil
		}
		return mb
	}
	byTarget := map[uint64][]uint64{}
	for _, r := range sortedKeys(n.reports) {
		if holds(r) == nil || n.Condemned(r) {
			continue
		}
		for _, t := range n.reports[r] {
			if t != r && holds(t) != nil {
				byTarget[t] = append(byTarget[t], r)
			}
		}
	}
	for _, t := range sortedKeys(byTarget) {
		reporters := byTarget[t]
		if n.Condemned(t) || slices.ContainsFunc(reporters, n.Condemned) {
			continue
		}
		role := holds(reporters[0]).Role
		others := 0 // live holders of the reporters' role that do not report t
		for _, id := range live {
			if mb := holds(id); mb != nil && mb.Role == role && id != t && !slices.Contains(reporters, id) && !n.Condemned(id) {
				others++
			}
		}
		blameReporters := others > 0
		target := holds(t)
		if blameReporters && n.mach.backup(role) == nil && n.mach.backup(target.Role) != nil {
			blameReporters = false
		} else if !blameReporters && n.mach.backup(target.Role) == nil && n.mach.backup(role) != nil {
			blameReporters = true
		}
		if blameReporters {
			for _, r := range reporters {
				n.condemn(r)
			}
		} else {
			n.condemn(t)
		}
	}
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
