package sim

import (
	"fmt"
	"math/rand/v2"
)

// Config is one simulation: the cluster's shape, the workload, the faults
// and (for the harness's own tests) planted bugs. Draw makes one from a
// seed; every field can be set by hand too.
type Config struct {
	Seed uint64
	// Gatekeepers (1–5) and Shards (1–8) of the simulated server.
	Gatekeepers, Shards int
	// Clients run operations one at a time each; Keys is how many list
	// keys they share (fewer keys, more conflicts).
	Clients, Keys int
	// Ops is how many client operations complete in the safety phase;
	// LivenessOps how many more each client must complete once the faults
	// are healed.
	Ops, LivenessOps int
	// ReadOnly is the fraction of read-only transactions; Programs the
	// fraction of operations that are chain_read node programs reading
	// every key across shards.
	ReadOnly, Programs float64
	// DelayMax is the longest network delay (logical ticks); messages
	// overtake each other across links, and gatekeeper→shard entries may
	// arrive out of order and twice (the FIFO layer restores order).
	DelayMax int
	// Duplicate is the probability that a gatekeeper→shard entry is
	// delivered twice.
	Duplicate float64
	// CrashEvery is the mean number of events between process crashes (0:
	// none). A crash loses everything in memory and the store's unsynced
	// writes (Pebble's crashable memory file system); the process restarts
	// in a new epoch and the shards rebuild from the store.
	CrashEvery int
	// PartitionEvery is the mean number of events between client
	// partitions (0: none): requests of the partitioned clients are lost
	// for a while, and the clients time out (commits become indeterminate).
	PartitionEvery int
	// SyncLagMax is the longest time (ticks) between a gatekeeper reading
	// the others' clocks and stamping. Stamps taken by other gatekeepers in
	// between are concurrent with its stamp: a longer lag means more pairs
	// for Kronos to refine.
	SyncLagMax int
	// AnnounceEvery, when positive, simulates gatekeepers in separate
	// processes (weft cluster): a gatekeeper stamps with its own clock, and
	// learns the others' only from the clocks each announces to its peers
	// every AnnounceEvery ticks (τ), over the network. Zero simulates one
	// process (weft serve): a gatekeeper reads the others' clocks before
	// stamping (SyncLagMax).
	AnnounceEvery int
	// ClogEvery is the mean number of events between swizzle-clogs of the
	// server's internal links (0: none).
	ClogEvery int
	// Notes lets idle gatekeepers answer NOP requests with a note, as the
	// engine's do in one process.
	Notes bool
	// OracleCacheMax bounds each shard's cache of Kronos answers.
	OracleCacheMax int
	// ReconfigEvery is the mean number of ticks between reconfigurations
	// (0: none): the world moves to a new configuration epoch on the same
	// store, replacing a member or adding a shard (up to cfg.Shards+3);
	// commits of the old epoch still on their way to the store drain or
	// reach it later as zombies, which the epoch fence must refuse
	// (reconfig.go). It also puts every commit's critical section in an
	// event of its own, up to DelayMax ticks after its execution.
	ReconfigEvery int
	// ReadPoints stamps reads and programs, in one process, at the read
	// point of their gatekeeper's oldest transaction in flight when no
	// other gatekeeper has handed off a transaction the point does not
	// cover (gatekeeper.Config.ReadPoints; the engine's default).
	ReadPoints bool
	// CommitDelayMax, when positive, puts every commit's critical section
	// (durability) in an event of its own up to that many ticks after its
	// execution, as a slow fsync does: transactions stay in flight, and
	// reads at read points pass them.
	CommitDelayMax int
	// ResolveDelayMax, when positive, lets one commit in four wait up to
	// that many ticks between becoming durable and its resolve (the
	// hand-off to the shards), as a gatekeeper goroutine preempted there
	// does: it stays in flight, its read point offered, while commits
	// stamped before it or on other gatekeepers are acknowledged.
	ResolveDelayMax int

	// ReadAfterAck is the probability that a client whose commit was
	// acknowledged reads the keys it appended to at once, through another
	// gatekeeper (the real-time edges read points and clock sync must
	// keep).
	ReadAfterAck float64

	// GCEvery, when positive, runs a garbage-collection pass every GCEvery
	// ticks (one process only; gc.go), keeping versions at least
	// RetentionTicks: reads and programs slower than that may get
	// SNAPSHOT_TOO_OLD (failed operations), never wrong answers.
	GCEvery, RetentionTicks int

	// MoveEvery is the mean number of ticks between moves of a placement
	// unit (a key's slot) to another shard while the clients run (0: none;
	// moves.go, docs/online-moves.md). Runs with moves do not reconfigure.
	MoveEvery int

	// Postgres gives the store the PostgreSQL store's commit behaviour
	// (pgstore.go): failed attempts whose hooks ran, ambiguous COMMITs
	// resolved by lookup, store.ErrTooOld for a snapshot more than
	// PostgresTombstones commits old, and, while faults are on, with
	// probability PostgresUnknown per commit an outcome the store cannot
	// learn (store.ErrFailed; the store then refuses all work until the
	// process restarts).
	Postgres           bool
	PostgresTombstones int
	PostgresUnknown    float64

	// Leases, in cluster mode (lease.go): gatekeepers answer only inside a
	// lease of LeaseTicks from the simulated coordinator, their clocks
	// running up to LeaseDrift fast or slow; a reconfiguration cuts the
	// epoch's members off from the coordinator, which replaces them once
	// their leases certainly expired while they linger on, with half the
	// clients pinned to them. Ignored in one process.
	Leases     bool
	LeaseTicks int
	LeaseDrift float64
	// RoleFailEvery, in cluster mode, is the mean number of ticks between
	// failures of a single role while the rest of its epoch runs on (0:
	// none; rolefail.go): a gatekeeper or a shard crashing alone, or a
	// gatekeeper and a shard cut from each other; the coordinator
	// replaces the member in a new epoch. Not with MoveEvery.
	RoleFailEvery int

	// Planted bugs, for showing that the checkers catch them.
	//
	// PlantSkipRefine makes shards order concurrent stamps by gatekeeper
	// id instead of asking Kronos (a shard that skips refinement).
	PlantSkipRefine bool
	// PlantNoSync runs the store without fsync: a crash can lose
	// acknowledged commits.
	PlantNoSync bool
	// PlantBadDeclare declares every in-flight transaction to write no
	// shard, so NOPs and notes overtake its writes.
	PlantBadDeclare bool
	// PlantNoPeerAck, in cluster mode, answers clients without waiting for
	// peers to merge the answered stamps (gatekeeper.Config.PeerAck off).
	PlantNoPeerAck bool
	// PlantNoFence skips gatekeeper.CheckFence in the commit's critical
	// section: a zombie commit of an ended epoch lands in the store after
	// the new epoch's shards rebuilt from it.
	PlantNoFence bool
	// PlantStalePoint uses a read point even after another gatekeeper
	// handed off a transaction it does not cover: a read that begins after
	// that transaction's acknowledgement may miss it.
	PlantStalePoint bool
	// PlantPartialSync is the engine's sync and read-point rule before
	// item 1 of the one-shell issue was fixed: a gatekeeper merges only the
	// others' own counters (not their whole clocks) and a read point is
	// used when it matches every gatekeeper's newest hand-off on that
	// gatekeeper's own counter, though it may be concurrent with it.
	PlantPartialSync bool
	// PlantNoPointRecheck keeps a read point registered while a watermark
	// pass overlapped its choice (gatekeeper.Plants.NoPointRecheck), and
	// PlantNoRefuseBelow runs shard tasks below the collected watermark
	// (shard.ShellConfig.NoRefuseBelow): together, a read or program may be
	// answered from collected versions.
	PlantNoPointRecheck, PlantNoRefuseBelow bool
	// PlantNoUnitCheck commits without checking that the units a
	// transaction wrote still live where its operations went: OrderCommit
	// told that the routing directory is current even while a move is in
	// flight or committed since (the fast path's condition ignored). A
	// write executed before a move reaches the unit's old shard after it.
	PlantNoUnitCheck bool
	// PlantNoHomeCheck, in cluster mode, lets a gatekeeper commit by its
	// own directory copy without reading its units' homes in the
	// transaction (gatekeeper.CheckHomes): a write routed by a stale copy
	// reaches the shard the unit left.
	PlantNoHomeCheck bool
	// PlantUnknownAsAbort lets a gatekeeper treat a commit whose outcome
	// the store could not learn as one that wrote nothing and carry on
	// (gatekeeper.Plants.UnknownAsAbort): if it landed, the shards never
	// see it while the store, and the transactions of the gatekeepers
	// that go on, do.
	PlantUnknownAsAbort bool
	// PlantIgnoreLease lets members serve on after their lease lapsed
	// (coord.LeaseState.PlantIgnoreExpiry); PlantEarlyReplace lets the
	// coordinator start the new epoch without waiting for
	// coord.LeaseRule.ReplaceAt (leases only).
	PlantIgnoreLease, PlantEarlyReplace bool
	// PlantNoUnreachableReport: a gatekeeper that cannot reach a shard
	// does not report it, so the coordinator, hearing every heartbeat,
	// replaces no one (the availability gap of item 2 of the issue "One
	// shell per role"; RoleFailEvery only).
	PlantNoUnreachableReport bool
}

// Draw returns the configuration seed chooses (swarm testing: every seed
// draws its own shape, workload and fault mix), with ops operations in the
// safety phase.
func Draw(seed uint64, ops int) Config {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c := Config{
		Seed:           seed,
		Gatekeepers:    1 + r.IntN(5),
		Shards:         1 + r.IntN(8),
		Clients:        2 + r.IntN(5),
		Keys:           2 + r.IntN(8),
		Ops:            ops,
		LivenessOps:    3,
		ReadOnly:       []float64{0, 0.2, 0.5}[r.IntN(3)],
		Programs:       []float64{0, 0.1, 0.3}[r.IntN(3)],
		DelayMax:       1 + r.IntN(20),
		SyncLagMax:     []int{0, 3, 30}[r.IntN(3)],
		Notes:          r.IntN(2) == 0,
		OracleCacheMax: []int{2, 64, 4096}[r.IntN(3)],
	}
	if r.IntN(2) == 0 {
		c.Duplicate = 0.1
	}
	if r.IntN(3) > 0 {
		c.CrashEvery = 500 + r.IntN(3000)
	}
	if r.IntN(2) == 0 {
		c.PartitionEvery = 300 + r.IntN(2000)
	}
	if r.IntN(2) == 0 {
		c.ClogEvery = 300 + r.IntN(2000)
	}
	// Drawn last, so that the fields above stay what they were for every
	// seed before reconfigurations existed.
	if r.IntN(4) == 0 {
		c.ReconfigEvery = 800 + r.IntN(3000)
	}
	c.ReadPoints = r.IntN(4) != 0 // after the others, for the same reason
	c.CommitDelayMax = []int{0, 10, 60}[r.IntN(3)]
	if r.IntN(3) == 0 && c.ReconfigEvery == 0 && c.Shards > 1 { // last, again
		c.MoveEvery = 100 + r.IntN(1500)
	}
	c.ResolveDelayMax = []int{0, 20, 100}[r.IntN(3)]
	if r.IntN(4) == 0 {
		c.SyncLagMax = 150 // a gatekeeper preempted for long inside its sync
	}
	if r.IntN(2) == 0 {
		c.GCEvery, c.RetentionTicks = 20+r.IntN(200), []int{0, 20, 200}[r.IntN(3)]
	}
	c.ReadAfterAck = []float64{0, 0.5}[r.IntN(2)]
	if r.IntN(4) == 0 {
		c.Postgres = true
		c.PostgresTombstones = []int{1, 4, 1 << 20}[r.IntN(3)]
		c.PostgresUnknown = []float64{0, 0.002, 0.01}[r.IntN(3)]
	}
	c.Leases, c.LeaseTicks, c.LeaseDrift = r.IntN(2) == 0, 40+r.IntN(160), []float64{0, 0.05, 0.2}[r.IntN(3)]
	if r.IntN(3) == 0 && c.MoveEvery == 0 {
		c.RoleFailEvery = 400 + r.IntN(2000)
	}
	return c
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if err := c.validLeases(); err != nil {
		return err
	}
	switch {
	case c.Gatekeepers < 1 || c.Gatekeepers > 16:
		return fmt.Errorf("sim: %d gatekeepers, want 1–16", c.Gatekeepers)
	case c.Shards < 1 || c.Shards > 64:
		return fmt.Errorf("sim: %d shards, want 1–64", c.Shards)
	case c.Clients < 1 || c.Keys < 1 || c.Ops < 1:
		return fmt.Errorf("sim: clients, keys and ops must be positive")
	case c.DelayMax < 1:
		return fmt.Errorf("sim: DelayMax must be at least 1")
	case c.ReconfigEvery < 0:
		return fmt.Errorf("sim: ReconfigEvery must not be negative")
	case c.CommitDelayMax < 0 || c.ResolveDelayMax < 0 || c.GCEvery < 0 || c.RetentionTicks < 0:
		return fmt.Errorf("sim: CommitDelayMax, ResolveDelayMax, GCEvery and RetentionTicks must not be negative")
	case c.PostgresTombstones < 0 || c.PostgresUnknown < 0 || c.PostgresUnknown > 1:
		return fmt.Errorf("sim: PostgresTombstones must not be negative, PostgresUnknown must be in [0, 1]")
	case c.RoleFailEvery < 0 || c.RoleFailEvery > 0 && c.MoveEvery > 0:
		return fmt.Errorf("sim: RoleFailEvery must not be negative, nor set with MoveEvery")
	case c.MoveEvery < 0 || c.MoveEvery > 0 && c.ReconfigEvery > 0:
		return fmt.Errorf("sim: MoveEvery must not be negative, nor set with ReconfigEvery")
	}
	return nil
}

func (c Config) String() string {
	return fmt.Sprintf("seed=%d gatekeepers=%d shards=%d clients=%d keys=%d ops=%d readonly=%.1f programs=%.1f delay≤%d lag≤%d announce/%d dup=%.1f crash/%d partition/%d clog/%d reconfig/%d move/%d notes=%v points=%v commit-delay≤%d resolve-delay≤%d gc/%d retention=%d read-after-ack=%.1f cache=%d postgres=%v tombstones=%d unknown=%.3f leases=%v lease=%d drift=%.2f role-fail/%d",
		c.Seed, c.Gatekeepers, c.Shards, c.Clients, c.Keys, c.Ops, c.ReadOnly, c.Programs, c.DelayMax, c.SyncLagMax, c.AnnounceEvery, c.Duplicate,
		c.CrashEvery, c.PartitionEvery, c.ClogEvery, c.ReconfigEvery, c.MoveEvery, c.Notes, c.ReadPoints, c.CommitDelayMax, c.ResolveDelayMax, c.GCEvery, c.RetentionTicks, c.ReadAfterAck, c.OracleCacheMax, c.Postgres, c.PostgresTombstones, c.PostgresUnknown, c.Leases, c.LeaseTicks, c.LeaseDrift, c.RoleFailEvery)
}
