package sim

import (
	"flag"
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/invariants"
)

var (
	flagSeed  = flag.Uint64("sim.seed", 0, "run only this seed (replay a failure)")
	flagSeeds = flag.Int("sim.seeds", 200, "seeds to run (make sim SEEDS=N)")
	flagOps   = flag.Int("sim.ops", 2500, "client operations per seed in the safety phase")
	flagTau   = flag.Int("sim.announce", 0, "TestSimulationCluster: announce period τ in ticks (0: drawn per seed)")
)

// TestSimulationCluster runs the swarm with gatekeepers as separate
// processes: each learns the others' clocks only from periodic announces.
func TestSimulationCluster(t *testing.T) {
	seeds, ops := *flagSeeds/4, *flagOps
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/10), max(200, ops/3)
	}
	first := uint64(1)
	if *flagSeed != 0 {
		first, seeds = *flagSeed, 1
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			cfg := Draw(seed, ops)
			cfg.AnnounceEvery = []int{1, 10, 100}[seed%3]
			if *flagTau > 0 {
				cfg.AnnounceEvery = *flagTau
			}
			cfg.Notes = false // notes need one process (gatekeeper.Core.Note)
			res, err := Run(cfg)
			if err != nil {
				t.Fatalf("%v\nreplay: go test ./internal/sim -run TestSimulationCluster -sim.seed=%d", err, seed)
			}
			if !res.Valid() {
				t.Fatalf("%s\nreplay: go test ./internal/sim -run TestSimulationCluster -sim.seed=%d", res, seed)
			}
		})
	}
}

// TestSimulation runs the swarm: every seed draws its own cluster shape,
// workload and fault mix, runs a safety phase with faults and a liveness
// phase with faults healed, and checks the history for strict
// serializability. A failure names the seed; -sim.seed=N replays it.
func TestSimulation(t *testing.T) {
	seeds, ops := *flagSeeds, *flagOps
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/10), max(200, ops/3)
	}
	first := uint64(1)
	if *flagSeed != 0 {
		first, seeds = *flagSeed, 1
	}
	var total Stats
	results := make(chan Stats, seeds) // the stats only: a history is megabytes
	t.Run("seeds", func(t *testing.T) {
		for seed := first; seed < first+uint64(seeds); seed++ {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				cfg := Draw(seed, ops)
				res, err := Run(cfg)
				if err != nil {
					t.Fatalf("%v\nreplay: go test ./internal/sim -run TestSimulation -sim.seed=%d", err, seed)
				}
				if !res.Valid() {
					t.Fatalf("%s\nreplay: go test ./internal/sim -run TestSimulation -sim.seed=%d", res, seed)
				}
				results <- res.Stats
			})
		}
	})
	close(results)
	n := 0
	for r := range results {
		n++
		total.Ops += r.Ops
		total.Events += r.Events
		total.Reads += r.Reads
		total.Fail += r.Fail
		total.OK += r.OK
		total.Info += r.Info
		total.Crashes += r.Crashes
		total.Partitions += r.Partitions
		total.Commits += r.Commits
		total.Notes += r.Notes
		total.Duplicates += r.Duplicates
		total.ProgramsOK += r.ProgramsOK
		total.Clogs += r.Clogs
		total.Reconfigs += r.Reconfigs
		total.Fenced += r.Fenced
		total.GraphChecks += r.GraphChecks
		total.PointReads += r.PointReads
		total.Moves += r.Moves
		total.MoveAborts += r.MoveAborts
		total.Forwards += r.Forwards
		total.GCPasses += r.GCPasses
		total.Watermarks += r.Watermarks
		total.TooOld += r.TooOld
		total.PgRetries += r.PgRetries
		total.PgUnknown += r.PgUnknown
		total.LeaseCuts += r.LeaseCuts
		total.LeaseRefusals += r.LeaseRefusals
		total.Replacements += r.Replacements
	}
	t.Logf("%d seeds: %d events, %d operations (%d ok, %d fail, %d info), %d commits, %d shard reads, %d crashes, %d partitions, %d swizzle-clogs, %d reconfigurations (%d zombie commits fenced), %d graph checks, %d notes, %d reads at read points, %d duplicate deliveries, %d node programs answered, %d unit moves (%d aborted), %d forwarded reads and hops, %d GC passes (%d watermarks, %d reads and programs refused as too old), %d PostgreSQL attempts retried (%d outcomes unknown); no anomalies",
		n, total.Events, total.Ops, total.OK, total.Fail, total.Info, total.Commits, total.Reads, total.Crashes, total.Partitions, total.Clogs, total.Reconfigs, total.Fenced, total.GraphChecks, total.Notes, total.PointReads, total.Duplicates, total.ProgramsOK,
		total.Moves, total.MoveAborts, total.Forwards, total.GCPasses, total.Watermarks, total.TooOld, total.PgRetries, total.PgUnknown)
	if n == seeds && seeds >= 20 && (total.Crashes == 0 || total.Partitions == 0 || total.Info == 0 || total.ProgramsOK == 0 || total.Clogs == 0 || total.Reconfigs == 0 || total.PointReads == 0 || total.Moves == 0 || total.Watermarks == 0) {
		t.Fatalf("the swarm injected no faults worth the name: %+v", total)
	}
}

// firstCaught runs seeds until one yields an anomaly or an error, and
// returns its description, or "" after limit seeds.
func firstCaught(t *testing.T, limit int, mk func(seed uint64) Config) string {
	t.Helper()
	for seed := uint64(1); seed <= uint64(limit); seed++ {
		res, err := Run(mk(seed))
		if err != nil {
			return fmt.Sprintf("seed %d: %v", seed, err)
		}
		if !res.Valid() {
			if len(res.GraphDiffs) > 0 {
				return fmt.Sprintf("seed %d: graph ≠ store: %s", seed, res.GraphDiffs[0])
			}
			return fmt.Sprintf("seed %d: %s", seed, res.Check.Types())
		}
	}
	return ""
}

// TestPlantedSkipRefineIsCaught: shards that order concurrent stamps by
// gatekeeper id instead of asking Kronos break strict serializability; the
// checker must say so within a few seeds.
func TestPlantedSkipRefineIsCaught(t *testing.T) {
	got := firstCaught(t, 20, func(seed uint64) Config {
		c := Draw(seed, 400)
		c.Gatekeepers, c.Keys, c.CrashEvery, c.PartitionEvery, c.ReadOnly, c.SyncLagMax = 3, 3, 0, 0, 0.3, 30
		c.ReconfigEvery = 0 // TestPlantedNoFenceIsCaught plants with reconfigurations
		c.PlantSkipRefine = true
		return c
	})
	if got == "" {
		t.Fatal("20 seeds of shards skipping Kronos went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedNoSyncIsCaught: a store that acknowledges commits without
// fsync loses some of them in a crash; the checker must notice.
func TestPlantedNoSyncIsCaught(t *testing.T) {
	got := firstCaught(t, 20, func(seed uint64) Config {
		c := Draw(seed, 400)
		c.Keys, c.CrashEvery, c.PartitionEvery = 3, 200, 0
		c.ReconfigEvery = 0 // TestPlantedNoFenceIsCaught plants with reconfigurations
		c.PlantNoSync = true
		return c
	})
	if got == "" {
		t.Fatal("20 seeds of a store without fsync, crashing, went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedNoPeerAckIsCaught: gatekeepers in separate processes that
// answer clients before their peers merged the answered stamps break
// real-time order; the checker must notice.
func TestPlantedNoPeerAckIsCaught(t *testing.T) {
	got := firstCaught(t, 20, func(seed uint64) Config {
		c := Draw(seed, 2500)
		c.Gatekeepers, c.Shards, c.Clients, c.CrashEvery, c.PartitionEvery, c.Programs = 3, 2, 5, 0, 0, 0.3
		c.ReconfigEvery = 0 // TestPlantedNoFenceIsCaught plants with reconfigurations
		c.AnnounceEvery, c.Notes, c.PlantNoPeerAck = 100, false, true
		c.Leases, c.RoleFailEvery = false, 0 // not the subject: refusals and replacements space the answers out
		c.CommitDelayMax = 0                 // slow commits space the answers out: the race it needs gets rarer
		return c
	})
	if got == "" {
		t.Fatal("20 seeds of gatekeepers answering before their peers merged went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedBadDeclareIsCaught: a gatekeeper that declares an in-flight
// transaction's shards wrongly (none) lets NOPs and notes overtake its
// writes; the checker must notice.
func TestPlantedBadDeclareIsCaught(t *testing.T) {
	got := firstCaught(t, 20, func(seed uint64) Config {
		c := Draw(seed, 400)
		c.Keys, c.CrashEvery, c.PartitionEvery, c.ClogEvery, c.ReadOnly = 3, 0, 0, 0, 0.3
		c.ReconfigEvery = 0 // TestPlantedNoFenceIsCaught plants with reconfigurations
		c.PlantBadDeclare = true
		return c
	})
	if got == "" {
		t.Fatal("20 seeds of wrongly declared transactions went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedStalePointIsCaught: a read point used after another
// gatekeeper handed off a transaction it does not cover lets a read that
// begins after that transaction's acknowledgement miss it; the checker
// must notice.
func TestPlantedStalePointIsCaught(t *testing.T) {
	got := firstCaught(t, 20, func(seed uint64) Config {
		c := Draw(seed, 1500)
		c.Gatekeepers, c.Keys, c.CrashEvery, c.PartitionEvery, c.ReadOnly = 3, 3, 0, 0, 0.5
		c.ReconfigEvery = 0 // TestPlantedNoFenceIsCaught plants with reconfigurations
		c.ReadPoints, c.PlantStalePoint, c.CommitDelayMax = true, true, 60
		return c
	})
	if got == "" {
		t.Fatal("20 seeds of stale read points went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedNoUnitCheckIsCaught: commits that skip the directory check in
// their commit section (OrderCommit told their routing directory is
// current while a move is in flight or done since) send writes executed
// before a move to the unit's old shard after it; the simulation must
// notice.
func TestPlantedNoUnitCheckIsCaught(t *testing.T) {
	mk := func(seed uint64, plant bool) Config {
		c := Draw(seed, 1500)
		c.Keys, c.CrashEvery, c.PartitionEvery, c.ReadOnly = 3, 0, 0, 0.2
		c.Shards = max(c.Shards, 3)
		c.ReconfigEvery, c.MoveEvery, c.CommitDelayMax, c.RoleFailEvery = 0, 60, 60, 0
		c.PlantNoUnitCheck = plant
		return c
	}
	got := firstCaught(t, 20, func(seed uint64) Config { return mk(seed, true) })
	if got == "" {
		t.Fatal("20 seeds of commits ignoring the directory went unnoticed")
	}
	t.Logf("caught: %s", got)
	// The same seeds with the check in place pass: what was caught is the
	// plant, not the frequent moves.
	for seed := uint64(1); seed <= 5; seed++ {
		res, err := Run(mk(seed, false))
		if err != nil || !res.Valid() {
			t.Fatalf("seed %d with the unit check: %v %v", seed, err, res)
		}
		if res.Stats.Moves == 0 {
			t.Fatalf("seed %d: no move committed", seed)
		}
	}
}

// TestPlantedNoHomeCheckIsCaught: gatekeepers in separate processes, each
// routing by its own directory copy (gatekeeper.DirCopy, as a cluster's
// do), that commit without reading their units' homes in the transaction
// send a write routed by a stale copy to the shard the unit left; the
// simulation must see it within 20 seeds, and the same seeds with the
// check must pass.
func TestPlantedNoHomeCheckIsCaught(t *testing.T) {
	mk := func(seed uint64, plant bool) Config {
		c := Draw(seed, 1500)
		c.Keys, c.CrashEvery, c.PartitionEvery, c.ReadOnly = 3, 0, 0, 0.2
		c.Shards = max(c.Shards, 3)
		c.ReconfigEvery, c.MoveEvery, c.CommitDelayMax, c.RoleFailEvery = 0, 60, 60, 0
		c.AnnounceEvery, c.Notes = 10, false
		c.PlantNoHomeCheck = plant
		return c
	}
	got := firstCaught(t, 20, func(seed uint64) Config { return mk(seed, true) })
	if got == "" {
		t.Fatal("20 seeds of commits by stale directory copies went unnoticed")
	}
	t.Logf("caught: %s", got)
	reloads := 0
	for seed := uint64(1); seed <= 5; seed++ {
		res, err := Run(mk(seed, false))
		if err != nil || !res.Valid() {
			t.Fatalf("seed %d with the home check: %v %v", seed, err, res)
		}
		if res.Stats.Moves == 0 {
			t.Fatalf("seed %d: no move committed", seed)
		}
		reloads += res.Stats.DirReloads
	}
	if reloads == 0 {
		t.Fatal("no commit found its gatekeeper's copy stale in 5 seeds: the check was not exercised")
	}
}

// TestSimulationMoves runs the swarm with frequent moves of placement
// units (every 40–140 ticks) during the usual faults, in one process and,
// for every other seed, with the gatekeepers as separate processes: the
// history must stay strictly serializable and every shard equal to the
// store placed by its directory, while reads and program hops follow the
// forwarding pointers. -sim.seeds=N runs N/5 seeds.
func TestSimulationMoves(t *testing.T) {
	seeds, ops := max(1, *flagSeeds/5), 1500 // 40 by default
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/7), 500
	}
	var moves, aborts, forwards, crashes, reloads int
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		c := Draw(seed, ops)
		c.Shards = max(c.Shards, 2)
		c.ReconfigEvery, c.MoveEvery, c.RoleFailEvery = 0, 40+int(seed%5)*25, 0
		if seed%2 == 0 {
			c.AnnounceEvery, c.Notes = []int{10, 100}[seed/2%2], false
		}
		res, err := Run(c)
		if err != nil {
			t.Fatalf("%v\nconfig: %s", err, c)
		}
		if !res.Valid() {
			t.Fatalf("%s\nconfig: %s", res, c)
		}
		moves, aborts, forwards, crashes = moves+res.Stats.Moves, aborts+res.Stats.MoveAborts, forwards+res.Stats.Forwards, crashes+res.Stats.Crashes
		reloads += res.Stats.DirReloads
	}
	t.Logf("%d seeds: %d moves (%d aborted), %d forwarded reads and hops, %d crashes, %d directory copies reloaded; no anomalies",
		seeds, moves, aborts, forwards, crashes, reloads)
	if moves == 0 || crashes == 0 || forwards == 0 && seeds >= 20 || reloads == 0 && seeds >= 20 { // forwards are rarer than moves
		t.Fatalf("moves %d, forwards %d, crashes %d, reloads %d: the test exercised nothing", moves, forwards, crashes, reloads)
	}
}

// TestPlantedPartialSyncIsCaught: gatekeepers that merge the others'
// clocks counter by counter, with read points checked against own counters
// only (the engine before the fix; engine.TestReadPointAfterPartialSync is
// the schedule by hand), let a read that begins after an acknowledged
// transaction miss it; the simulation must find it by itself, below seed
// 500.
func TestPlantedPartialSyncIsCaught(t *testing.T) {
	got := firstCaught(t, 499, func(seed uint64) Config {
		c := Draw(seed, 1500)
		c.Gatekeepers, c.CrashEvery, c.PartitionEvery, c.ReconfigEvery, c.MoveEvery = 3+int(seed%3), 0, 0, 0, 0
		c.ReadPoints, c.PlantPartialSync = true, true
		c.CommitDelayMax, c.ResolveDelayMax = 60, 100
		c.Keys, c.Clients, c.ReadOnly, c.SyncLagMax, c.ReadAfterAck = 3, 6, 0.5, 150, 0.5
		return c
	})
	if got == "" {
		t.Fatal("499 seeds of partial clock syncs went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// TestPlantedNoWatermarkRecheckIsCaught: read points registered while a
// watermark pass overlapped their choice (the re-check skipped: item 3 of
// the one-shell issue) and shards that run tasks below the watermark they
// collected let a read or program see collected versions; the simulation
// must find it, below seed 500. The seed that finds it passes with either
// check in place: each of the two guards alone suffices.
func TestPlantedNoWatermarkRecheckIsCaught(t *testing.T) {
	mk := func(seed uint64, recheck, refuse bool) Config {
		c := Draw(seed, 1500)
		c.Gatekeepers, c.CrashEvery, c.PartitionEvery, c.ReconfigEvery, c.MoveEvery, c.AnnounceEvery = 2+int(seed%3), 0, 0, 0, 0, 0
		c.ReadPoints, c.CommitDelayMax, c.ResolveDelayMax = true, 60, 100
		c.GCEvery, c.RetentionTicks, c.Clients, c.ReadOnly, c.Keys, c.Shards = 10, 0, 6, 0.5, 3, 2
		c.PlantNoPointRecheck, c.PlantNoRefuseBelow = !recheck, !refuse
		return c
	}
	for seed := uint64(1); seed < 500; seed++ {
		res, err := Run(mk(seed, false, false))
		if err == nil && res.Valid() {
			continue
		}
		t.Logf("caught at seed %d: %v %s", seed, err, res)
		for _, guard := range []struct{ recheck, refuse bool }{{true, false}, {false, true}, {true, true}} {
			res, err := Run(mk(seed, guard.recheck, guard.refuse))
			if err != nil || !res.Valid() {
				t.Fatalf("seed %d with re-check %v and refusal %v: %v %v", seed, guard.recheck, guard.refuse, err, res)
			}
			if guard.refuse && !guard.recheck && res.Stats.TooOld == 0 {
				t.Logf("seed %d: the shards refused nothing with only the refusal in place", seed)
			}
		}
		return
	}
	t.Fatal("499 seeds of reads below the watermark went unnoticed")
}

// TestSimulationPostgres runs the swarm with the PostgreSQL store's commit
// behaviour (pgstore.go): hooks run again by retried attempts, ambiguous
// COMMITs, snapshots too old, outcomes unknown; half the seeds with the
// gatekeepers in separate processes, each failing alone.
func TestSimulationPostgres(t *testing.T) {
	seeds, ops := max(1, *flagSeeds/5), 1500 // 40 by default
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/7), 500
	}
	var st Stats
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		c := postgresConfig(seed, ops)
		res, err := Run(c)
		if err != nil {
			t.Fatalf("%v\nconfig: %s", err, c)
		}
		if !res.Valid() {
			t.Fatalf("%s\nconfig: %s", res, c)
		}
		st.PgRetries, st.PgAmbiguous = st.PgRetries+res.Stats.PgRetries, st.PgAmbiguous+res.Stats.PgAmbiguous
		st.PgTooOld, st.PgUnknown = st.PgTooOld+res.Stats.PgTooOld, st.PgUnknown+res.Stats.PgUnknown
		st.Commits, st.Crashes = st.Commits+res.Stats.Commits, st.Crashes+res.Stats.Crashes
	}
	t.Logf("%d seeds: %d commits, %d failed attempts whose hook ran, %d ambiguous COMMITs retried, %d too old, %d outcomes unknown, %d crashes; no anomalies",
		seeds, st.Commits, st.PgRetries, st.PgAmbiguous, st.PgTooOld, st.PgUnknown, st.Crashes)
	if st.PgRetries == 0 || st.PgAmbiguous == 0 || st.PgTooOld == 0 || st.PgUnknown == 0 && seeds >= 20 {
		t.Fatalf("%+v: the test exercised nothing", st)
	}
}

// postgresConfig is seed's swarm configuration with the PostgreSQL model
// on: odd seeds one process, even seeds separate gatekeeper processes.
func postgresConfig(seed uint64, ops int) Config {
	c := Draw(seed, ops)
	c.Postgres = true
	c.PostgresTombstones = []int{1, 4, 1 << 20}[seed%3]
	c.PostgresUnknown = []float64{0.002, 0.01}[seed/3%2]
	if seed%2 == 0 {
		c.AnnounceEvery, c.Notes = []int{10, 100}[seed/2%2], false
	}
	return c
}

// TestPlantedUnknownAsAbortIsCaught: a gatekeeper that treats a commit whose
// outcome the store could not learn as one that wrote nothing, and carries
// on, lets the shards miss a write the store holds while the other
// gatekeepers' transactions, executed on the store, see it; the simulation
// must notice below seed 500.
func TestPlantedUnknownAsAbortIsCaught(t *testing.T) {
	got := firstCaught(t, 499, func(seed uint64) Config {
		c := Draw(seed, 1500)
		c.Gatekeepers, c.Keys, c.Clients, c.ReadOnly = 2+int(seed%3), 3, 5, 0.3
		c.CrashEvery, c.PartitionEvery, c.ReconfigEvery, c.MoveEvery = 0, 0, 0, 0
		c.AnnounceEvery, c.Notes = 10, false
		c.Postgres, c.PostgresTombstones, c.PostgresUnknown = true, 1<<20, 0.01
		c.PlantUnknownAsAbort = true
		return c
	})
	if got == "" {
		t.Fatal("499 seeds of gatekeepers carrying on after an unknown outcome went unnoticed")
	}
	t.Logf("caught: %s", got)
}

// leaseConfig is seed's swarm configuration in cluster mode with leases
// and reconfigurations: the epoch's members cut off from the coordinator,
// replaced while they linger on.
func leaseConfig(seed uint64, ops int) Config {
	c := Draw(seed, ops)
	c.AnnounceEvery, c.Notes = []int{10, 100}[seed%2], false
	c.ReconfigEvery, c.MoveEvery = 300+int(seed%4)*200, 0
	c.Leases = true
	return c
}

// TestSimulationLeases: with leases, a gatekeeper of an epoch that ended
// answers nothing once the new epoch started, and the histories are
// strictly serializable.
func TestSimulationLeases(t *testing.T) {
	seeds, ops := max(1, *flagSeeds/5), 1500 // 40 by default
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/7), 500
	}
	var st Stats
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		c := leaseConfig(seed, ops)
		res, err := Run(c)
		if err != nil {
			t.Fatalf("%v\nconfig: %s", err, c)
		}
		if !res.Valid() {
			t.Fatalf("%s\nconfig: %s", res, c)
		}
		if res.Stats.LingerAnswers > 0 {
			t.Fatalf("seed %d: %d answers from gatekeepers of an ended epoch\nconfig: %s", seed, res.Stats.LingerAnswers, c)
		}
		st.LeaseCuts, st.LeaseRefusals = st.LeaseCuts+res.Stats.LeaseCuts, st.LeaseRefusals+res.Stats.LeaseRefusals
		st.LingerRefusals += res.Stats.LingerRefusals
		st.Reconfigs, st.Commits, st.Crashes = st.Reconfigs+res.Stats.Reconfigs, st.Commits+res.Stats.Commits, st.Crashes+res.Stats.Crashes
	}
	t.Logf("%d seeds: %d commits, %d epochs cut off from the coordinator and replaced, %d answers refused as the lease lapsed (%d by an ended epoch), %d crashes; no answer from an ended epoch, no anomalies",
		seeds, st.Commits, st.LeaseCuts, st.LeaseRefusals, st.LingerRefusals, st.Crashes)
	if st.LeaseCuts == 0 || st.LeaseRefusals == 0 || st.LingerRefusals == 0 {
		t.Fatalf("%+v: the test exercised nothing", st)
	}
}

// TestPlantedIgnoreLeaseIsCaught: members that serve on after their lease
// lapsed answer clients pinned to them after the new epoch started; the
// simulation must notice below seed 500.
func TestPlantedIgnoreLeaseIsCaught(t *testing.T) {
	leasePlantCaught(t, "members ignoring their leases", func(c *Config) { c.PlantIgnoreLease = true })
}

// leasePlantCaught requires the lease bug plant sets to be caught below
// seed 500.
func leasePlantCaught(t *testing.T, what string, plant func(*Config)) {
	t.Helper()
	got := firstCaught(t, 499, func(seed uint64) Config {
		c := leaseConfig(seed, 1500)
		c.CrashEvery, c.PartitionEvery, c.ReadOnly = 0, 0, 0.5
		plant(&c)
		return c
	})
	if got == "" {
		t.Fatalf("499 seeds of %s went unnoticed", what)
	}
	t.Logf("caught: %s", got)
}

// TestPlantedEarlyReplaceIsCaught: a coordinator that starts the new epoch
// without waiting for the old members' leases to expire
// (coord.LeaseRule.ReplaceAt) lets them answer while it serves.
func TestPlantedEarlyReplaceIsCaught(t *testing.T) {
	leasePlantCaught(t, "a coordinator replacing members early", func(c *Config) { c.PlantEarlyReplace = true })
}

// TestSimulationRoleFailures: in cluster mode, a gatekeeper or a shard
// crashing alone, or a gatekeeper cut from one shard, while the rest of the
// epoch runs on; the coordinator replaces the member (waiting out a
// condemned gatekeeper's lease where there are leases). Histories must be
// strictly serializable, the graphs equal the store, and the clients make
// progress again once the faults are healed.
func TestSimulationRoleFailures(t *testing.T) {
	seeds, ops := max(1, *flagSeeds/5), 1500 // 40 by default
	if raceEnabled || invariants.On {
		seeds, ops = max(1, seeds/7), 500
	}
	var st Stats
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		c := Draw(seed, ops)
		c.AnnounceEvery, c.Notes = []int{10, 100}[seed%2], false
		c.MoveEvery, c.RoleFailEvery, c.Leases = 0, 300+int(seed%4)*150, seed%4 < 2
		res, err := Run(c)
		if err != nil {
			t.Fatalf("%v\nconfig: %s", err, c)
		}
		if !res.Valid() {
			t.Fatalf("%s\nconfig: %s", res, c)
		}
		st.GatekeeperCrashes, st.ShardCrashes = st.GatekeeperCrashes+res.Stats.GatekeeperCrashes, st.ShardCrashes+res.Stats.ShardCrashes
		st.LinkCuts, st.Replacements = st.LinkCuts+res.Stats.LinkCuts, st.Replacements+res.Stats.Replacements
		st.Commits, st.Crashes, st.GraphChecks = st.Commits+res.Stats.Commits, st.Crashes+res.Stats.Crashes, st.GraphChecks+res.Stats.GraphChecks
	}
	t.Logf("%d seeds: %d commits, %d gatekeepers and %d shards crashed alone, %d gatekeeper–shard links cut, %d members replaced, %d whole crashes, %d graph checks; no anomalies",
		seeds, st.Commits, st.GatekeeperCrashes, st.ShardCrashes, st.LinkCuts, st.Replacements, st.Crashes, st.GraphChecks)
	if st.GatekeeperCrashes == 0 || st.ShardCrashes == 0 || st.LinkCuts == 0 || st.Replacements == 0 {
		t.Fatalf("%+v: the test exercised nothing", st)
	}
}

// TestPlantedNoUnreachableReportIsCaught: a gatekeeper cut from one shard
// that does not report it leaves the coordinator nothing to replace, and
// the shard stalls on the gatekeeper's channel for good; the simulation's
// liveness check must notice below seed 500.
func TestPlantedNoUnreachableReportIsCaught(t *testing.T) {
	got := firstCaught(t, 499, func(seed uint64) Config {
		c := Draw(seed, 1500)
		c.AnnounceEvery, c.Notes = 10, false
		c.MoveEvery, c.RoleFailEvery, c.CrashEvery, c.ReconfigEvery = 0, 300, 0, 0
		c.PlantNoUnreachableReport = true
		return c
	})
	if got == "" {
		t.Fatal("499 seeds of gatekeepers cut from a shard without reporting it went unnoticed")
	}
	t.Logf("caught: %s", got)
}
