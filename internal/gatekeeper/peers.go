package gatekeeper

import "github.com/weft-db/weft/internal/vclock"

// Real-time order across processes.
//
// In one process a gatekeeper reads every peer's clock just before it
// stamps, so a stamp taken after a client heard an answer dominates the
// answered operation's stamp: real-time order is vector-clock order there.
// Gatekeepers in separate processes learn each other's clocks only from
// announces, so a stamp taken after an answer may be concurrent with the
// answered operation, and the order Kronos and the shards give the pair can
// then contradict real time — the simulation (TestSimulationCluster) finds a
// node program, started after a commit was acknowledged, ordered before it
// through a chain of Kronos decisions about other transactions.
//
// With Config.PeerAck a gatekeeper therefore answers a client about an
// operation only once every peer has merged a clock covering its stamp
// (Stable): from then on every stamp any gatekeeper takes is after it by
// vector clock, as in one process. Acked holds back commits until then;
// Hold and Released do the same for the shell's other answers (reads and
// node programs). Peers report what they merged by announcing their own
// clocks (PeerClock); a shell with answers held should announce at once and
// have peers announce back (WantAnnounce), instead of waiting for τ.

// PeerClock merges the clock peer j announced and records how much of this
// gatekeeper's history j has merged. Clocks of other epochs are ignored.
func (c *Core) PeerClock(j uint32, o vclock.Clock) {
	if o.Epoch != c.clock.Epoch || len(o.Counters) != len(c.clock.Counters) || int(j) >= len(c.peerSeen) {
		return
	}
	c.clock.Merge(o)
	if seen := o.Counters[c.cfg.ID]; seen > c.peerSeen[j] {
		c.peerSeen[j] = seen
	}
}

// Stable reports whether every peer has merged a clock covering s, a stamp
// of this gatekeeper (always true without PeerAck or peers).
func (c *Core) Stable(s vclock.Stamp) bool {
	if !c.cfg.PeerAck {
		return true
	}
	if s.Clock.Epoch != c.clock.Epoch || int(c.cfg.ID) >= len(s.Clock.Counters) {
		return true // an earlier epoch's stamp: the epoch barrier ordered it
	}
	own := s.Clock.Counters[c.cfg.ID]
	for j, seen := range c.peerSeen {
		if j != int(c.cfg.ID) && seen < own {
			return false
		}
	}
	return true
}

// held is an answer waiting for its stamp to be stable.
type held struct {
	id    uint64
	stamp vclock.Stamp
}

// Hold parks the answer the shell calls id until s is stable; Released
// returns it then. Without PeerAck it is released at the next call.
func (c *Core) Hold(id uint64, s vclock.Stamp) {
	c.holds = append(c.holds, held{id: id, stamp: s})
}

// Released returns the ids of held answers whose stamps are now stable, in
// the order they were held.
func (c *Core) Released() []uint64 {
	var out []uint64
	kept := c.holds[:0]
	for _, h := range c.holds {
		if c.Stable(h.stamp) {
			out = append(out, h.id)
		} else {
			kept = append(kept, h)
		}
	}
	for i := len(kept); i < len(c.holds); i++ {
		c.holds[i] = held{}
	}
	c.holds = kept
	return out
}

// WantAnnounce reports whether answers wait for peers to merge this
// gatekeeper's clock: the shell should announce now, asking for a reply.
func (c *Core) WantAnnounce() bool {
	if !c.cfg.PeerAck {
		return false
	}
	for _, h := range c.holds {
		if !c.Stable(h.stamp) {
			return true
		}
	}
	for _, s := range c.acked {
		if !c.Stable(s) {
			return true
		}
	}
	return false
}
