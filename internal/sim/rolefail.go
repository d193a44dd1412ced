package sim

import (
	"fmt"
	"time"

	"github.com/weft-db/weft/internal/check"
)

// Single roles failing in cluster mode (Config.RoleFailEvery; docs/cluster.md
// "Failures", docs/simulation.md "Single roles failing"). While the rest of
// the epoch runs on, one of:
//
//   - a gatekeeper process crashes alone: its memory is gone, its messages
//     stop (commits between their commit section and their hand-off are
//     durable and in no shard), its peers' answers wait for announces it
//     no longer sends, the shards for its NOPs;
//   - a shard process crashes alone: entries, reads and batches to it are
//     lost;
//   - a gatekeeper and a shard cannot reach each other (both ways), all
//     else connected: the gatekeeper's entries and the shard's NOP requests
//     are lost, so the shard stalls on that channel.
//
// The coordinator replaces the failed member in a new epoch: after its
// failure detection (SuspectAfter without a heartbeat, or the gatekeeper's
// unreachable report after UnreachableAfter), and, for a gatekeeper it
// condemned that holds a lease, no earlier than coord.LeaseRule.ReplaceAt of
// its last grant. The epoch's other members hear of it and stop: their
// commits not yet at the store drain or are left to the fence
// (replaceEpoch), and the new epoch's shards rebuild from the store. The
// liveness phase then requires every client to make progress again.

// Detection times, in ticks: a member silent for suspectTicks is failed;
// a gatekeeper reports a shard it cannot reach after unreachableTicks.
const (
	suspectTicks     = 250
	unreachableTicks = 120
)

// scheduleRoleFault plans the next single-role failure while faults are on.
func (w *world) scheduleRoleFault() {
	if w.cfg.RoleFailEvery > 0 && w.cfg.AnnounceEvery > 0 {
		w.after(int64(1+w.rng.IntN(2*w.cfg.RoleFailEvery)), w.roleFault)
	}
}

// roleFault fails one member of the current epoch and lets the
// coordinator replace it.
func (w *world) roleFault() {
	if !w.faultsOn {
		return
	}
	defer w.scheduleRoleFault()
	s := w.srv
	if s == nil || s.replacing || s.cut {
		return // down, or a replacement under way already
	}
	s.replacing = true
	if s.down == nil {
		s.down, s.cuts = map[int]bool{}, map[[2]int]bool{}
	}
	g, sh := w.rng.IntN(len(s.gks)), w.rng.IntN(len(s.shards))
	detect := int64(suspectTicks)
	condemned := -1 // the gatekeeper whose lease the coordinator waits out
	var what string
	switch w.rng.IntN(3) {
	case 0:
		s.down[gkNode(g)] = true
		w.stats.GatekeeperCrashes++
		what = fmt.Sprintf("crash gatekeeper %d", g)
		condemned = g
	case 1:
		s.down[shardID(sh)] = true
		w.stats.ShardCrashes++
		what = fmt.Sprintf("crash shard %d", sh)
	default:
		s.cuts[[2]int{gkNode(g), shardID(sh)}] = true
		w.stats.LinkCuts++
		what = fmt.Sprintf("cut gatekeeper %d from shard %d", g, sh)
		detect = unreachableTicks
		if w.rng.IntN(2) == 0 {
			condemned = g // the coordinator replaces the gatekeeper, else the shard
		}
	}
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: what, Time: w.now})
	if w.cfg.PlantNoUnreachableReport && detect == unreachableTicks {
		return // every heartbeat still arrives: the coordinator sees no failure
	}
	w.after(detect+int64(w.rng.IntN(w.cfg.DelayMax+1)), func() {
		if w.srv != s {
			return // crashed or replaced meanwhile
		}
		at := w.now
		if condemned >= 0 && s.leases != nil {
			s.condemned = condemned + 1 // granted nothing more
			at = max(at, int64(leaseRule(w.cfg).ReplaceAt(time.Duration(s.lastGrant[condemned])*tick)/tick))
		}
		w.after(at-w.now, func() {
			if w.srv == s {
				w.stats.Replacements++
				w.replaceEpoch(s, false)
			}
		})
	})
}

// linkDown: a message from node a to node b of s is lost.
func (s *server) linkDown(a, b int) bool {
	if s.down == nil {
		return false
	}
	return s.down[a] || s.down[b] || s.cuts[[2]int{a, b}] || s.cuts[[2]int{b, a}]
}

// gkDown: gatekeeper g of s crashed alone.
func (s *server) gkDown(g int) bool { return s.down != nil && s.down[gkNode(g)] }
