package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/coord"
)

// Leases (cluster mode with Config.Leases; docs/cluster.md "Leases",
// docs/simulation.md "Leases"). The coordinator is simulated here by its
// rule (coord.LeaseRule: the lease it grants, ReplaceAt) and each
// gatekeeper holds a coord.LeaseState — the type a cluster member's
// process holds — over a clock of its own that runs up to LeaseDrift fast
// or slow. Every heartbeatEvery ticks a gatekeeper sends a heartbeat at
// its clock's instant; the coordinator records the grant at its own
// instant (the world's time) and the answer renews the lease.
//
// A reconfiguration becomes what item 2 of the issue "One shell per role"
// reproduced with real processes: every member of the epoch is cut off
// from the coordinator while clients still reach it. The coordinator
// stops granting; it starts the new epoch (backups, new shards rebuilt
// from the store) no earlier than ReplaceAt of the last grant, after a
// failure detection of up to suspectTicks (sometimes at once: a peer's
// report, an operator). The old epoch's processes do not hear of it: they
// linger, their gatekeepers, shards, NOPs and announces running on, and
// clients pinned to them keep sending there. A gatekeeper answers —
// takes a request, answers a read, acknowledges a commit, a program's
// result — only while its lease holds: the shell asks it for commits
// (gatekeeper.ShellConfig.Serving, set to the lease by a cluster's
// gatekeeper too), the reads and programs here ask Shell.Serving where
// engine.ClusterGatekeeper's read paths ask the lease. If
// the rule is right, no lingering gatekeeper answers once the new epoch
// has started (Stats.LingerAnswers stays 0) and the checkers find nothing;
// PlantIgnoreLease (coord.LeaseState.PlantIgnoreExpiry) and
// PlantEarlyReplace (the coordinator not waiting for ReplaceAt) must be
// caught.

const (
	// tick is the simulation's time unit as a lease clock's.
	tick = time.Millisecond
	// lingerTicks is how long after the new epoch the old one's processes
	// run on before they hear that it ended.
	lingerTicks = 400
)

// leaseRule is the coordinator's rule for cfg: the drift margin covers a
// member clock LeaseDrift slow over one lease, rounded up.
func leaseRule(cfg Config) coord.LeaseRule {
	l := float64(cfg.LeaseTicks)
	margin := int64(math.Ceil(l*cfg.LeaseDrift/(1-cfg.LeaseDrift))) + 1
	return coord.LeaseRule{Lease: time.Duration(cfg.LeaseTicks) * tick, MaxDrift: time.Duration(margin) * tick}
}

// leasesOn: the members hold leases (cluster mode only: weft serve has no
// coordinator).
func (w *world) leasesOn() bool { return w.cfg.Leases && w.cfg.AnnounceEvery > 0 }

// startLeases gives server s's gatekeepers their lease states, clocks and
// heartbeats.
func (w *world) startLeases(s *server) {
	if !w.leasesOn() {
		return
	}
	t0 := w.now
	for g := range s.gks {
		rate := 1 + w.cfg.LeaseDrift*(2*w.rng.Float64()-1)
		st := coord.NewLeaseState(func() time.Duration { return time.Duration(float64(w.now-t0) * rate * float64(tick)) })
		if w.cfg.PlantIgnoreLease {
			st.PlantIgnoreExpiry()
		}
		s.leases = append(s.leases, st)
		s.lastGrant = append(s.lastGrant, 0)
		w.heartbeat(s, g)
	}
}

// heartbeatEvery is the heartbeat period: a quarter of the lease.
func (w *world) heartbeatEvery() int64 { return max(1, int64(w.cfg.LeaseTicks/4)) }

// heartbeat is gatekeeper g's heartbeat to the coordinator, and the next
// one scheduled while its process runs.
func (w *world) heartbeat(s *server, g int) {
	if !w.up(s) || s.gkDown(g) {
		return
	}
	defer w.after(w.heartbeatEvery(), func() { w.heartbeat(s, g) })
	if s.cut || s.condemned == g+1 {
		return
	}
	st := s.leases[g]
	sent := st.Now()
	w.after(w.delay(), func() {
		if s.cut || s.condemned == g+1 {
			return // lost (the members are cut off from the coordinator), or no grant for the condemned
		}
		s.lastGrant[g] = w.now // the coordinator's instant, after it heard the heartbeat
		d := leaseRule(w.cfg).Lease
		w.after(w.delay(), func() {
			if !s.cut && !s.gkDown(g) {
				st.Granted(sent, d)
			}
		})
	})
}

// mayServe: gatekeeper g of s may answer (its lease holds, or there are
// no leases). An answer by a gatekeeper of an epoch that has ended is
// counted: with a right rule there is none.
func (w *world) mayServe(s *server, g int) bool {
	if s.leases == nil {
		return true
	}
	if !s.leases[g].MayServe() {
		w.stats.LeaseRefusals++
		if s != w.srv {
			w.stats.LingerRefusals++
		}
		return false
	}
	if s != w.srv {
		w.stats.LingerAnswers++
	}
	return true
}

// serving is gatekeeper g's ShellConfig.Serving: its lease (lease.go), or
// nil without leases.
func (w *world) serving(s *server, g int) func() error {
	if !w.leasesOn() {
		return nil
	}
	return func() error {
		if w.mayServe(s, g) {
			return nil
		}
		return coord.ErrLeaseExpired
	}
}

// up: s's processes run — the current epoch's, or an ended one's that
// has not heard so yet.
func (w *world) up(s *server) bool { return s != nil && (w.srv == s || s.lingering) }

// cutFromCoordinator cuts every member of the current epoch off from the
// coordinator and lets the coordinator replace them (reconfigNow with
// leases).
func (w *world) cutFromCoordinator() {
	old := w.srv
	old.cut = true
	w.stats.LeaseCuts++
	w.rec.Record(check.Op{Process: check.Nemesis, Type: check.Info, F: "cut the epoch's members from the coordinator", Time: w.now})
	rule := leaseRule(w.cfg)
	var last int64
	for _, g := range old.lastGrant {
		last = max(last, g)
	}
	suspect := int64(rule.Lease/tick+rule.MaxDrift/tick) + 20 // SuspectAfter > Lease + MaxDrift (LeaseRule.Validate)
	at := w.now + int64(w.rng.IntN(int(suspect)+1))
	if w.rng.IntN(3) == 0 {
		at = w.now // condemned at once: a peer reported it, or an operator removed it
	}
	if !w.cfg.PlantEarlyReplace {
		at = max(at, int64(rule.ReplaceAt(time.Duration(last)*tick)/tick))
	}
	add := w.nshards < min(64, w.cfg.Shards+shardsAddMax) && w.rng.IntN(2) == 0
	w.after(at-w.now, func() {
		if w.srv != old {
			return // it crashed meanwhile: the restart started a new epoch
		}
		old.lingering = true
		w.lingering = append(w.lingering, old)
		w.newEpoch(old, add)
		w.after(lingerTicks, func() { old.lingering = false })
		w.after(zombieDelayMax+1, w.quiesce)
	})
}

// endLingering stops every ended epoch's processes (a crash).
func (w *world) endLingering() {
	for _, s := range w.lingering {
		s.lingering = false
	}
	w.lingering = nil
}

// refuse answers client c's operation op with a lease refusal: a definite
// failure (nothing done), or unknown for a commit already durable.
func (w *world) refuse(c *client, op int, durable bool) {
	w.toClient(c.id, func() {
		if op != c.op {
			return
		}
		c.srv = nil // it tries the coordinator's current epoch next
		if durable {
			c.finish(check.Info, c.inv)
			return
		}
		c.finish(check.Fail, c.inv)
	})
}

// validLeases checks the lease settings.
func (c Config) validLeases() error {
	if !c.Leases {
		return nil
	}
	if c.LeaseTicks < 4 || c.LeaseDrift < 0 || c.LeaseDrift >= 0.5 {
		return fmt.Errorf("sim: LeaseTicks %d must be at least 4 and LeaseDrift %.2f in [0, 0.5)", c.LeaseTicks, c.LeaseDrift)
	}
	return nil
}
