package sim

import (
	"fmt"
	"strings"

	"github.com/weft-db/weft/internal/check"
)

// Result is one simulation's outcome.
type Result struct {
	Config  Config
	Stats   Stats
	History check.History
	Check   check.Result
	// GraphDiffs are the graph-equals-store checker's findings (at most
	// graphDiffsMax): a shard's graph differing from what the store says
	// it owns, after a reconfiguration or at the end of the run.
	GraphDiffs []string
}

// Valid reports a run without anomalies: a strictly serializable history
// and every shard's graph equal to the store.
func (r *Result) Valid() bool { return r.Check.Valid && len(r.GraphDiffs) == 0 }

func (r *Result) String() string {
	s := fmt.Sprintf("%s\n  %d events, %d ops (%d ok, %d fail, %d info), %d commits, %d aborts, %d reads, %d crashes, %d partitions, %d NOP requests, %d notes, %d duplicates\n  %d reconfigurations, %d zombie commits (%d fenced, %d landed), %d graph checks\n  %s",
		r.Config, r.Stats.Events, r.Stats.Ops, r.Stats.OK, r.Stats.Fail, r.Stats.Info, r.Stats.Commits, r.Stats.Aborts,
		r.Stats.Reads, r.Stats.Crashes, r.Stats.Partitions, r.Stats.NopRequests, r.Stats.Notes, r.Stats.Duplicates,
		r.Stats.Reconfigs, r.Stats.Zombies, r.Stats.Fenced, r.Stats.ZombiesLanded, r.Stats.GraphChecks, r.Check.String())
	return s + diffsString(r.GraphDiffs)
}

// diffsString renders the graph checker's findings ("" when none).
func diffsString(diffs []string) string {
	if len(diffs) == 0 {
		return ""
	}
	return "\n  graph ≠ store:\n    " + strings.Join(diffs, "\n    ")
}

// eventsPerOpMax bounds a run: a simulation that needs more events than
// this per operation is stuck (a liveness failure), not slow.
const eventsPerOpMax = 2000

// Run runs one simulation: a safety phase with faults until cfg.Ops
// operations completed, then a liveness phase with every fault healed in
// which each client must complete cfg.LivenessOps more; then the history
// goes through the list-append checker (strict serializability). An error
// is a liveness failure or a broken harness; anomalies are in the result.
func Run(cfg Config) (res *Result, err error) {
	// An assertion in the code under test (a shard receiving a FIFO
	// channel out of stamp order, say) is a failure of this seed, not of
	// the process running the swarm.
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("sim: %s: panic: %v", cfg, p)
		}
	}()
	w, err := newWorld(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if w.srv != nil {
			_ = w.srv.st.Close()
		}
	}()
	budget := eventsPerOpMax * (cfg.Ops + cfg.Clients*cfg.LivenessOps)
	if cfg.AnnounceEvery > 0 {
		// Periodic announces cost g·(g−1)/τ events a tick on their own:
		// five gatekeepers announcing every tick spend the plain budget
		// before the operations are done (seeds 213, 609 of the cluster
		// swarm, which pass with it).
		budget *= max(1, cfg.Gatekeepers*(cfg.Gatekeepers-1)/(4*cfg.AnnounceEvery))
	}
	for w.stats.OK+w.stats.Fail+w.stats.Info < cfg.Ops {
		if !w.step() || w.events > budget {
			return nil, fmt.Errorf("%w: %s: the safety phase stalled after %d events, %d operations done%s", errLiveness, cfg, w.events, w.stats.OK+w.stats.Fail+w.stats.Info, diffsString(w.graphDiffs))
		}
	}
	w.heal()
	target := make([]int, len(w.clients))
	for i, c := range w.clients {
		target[i] = c.done + cfg.LivenessOps
	}
	for i := 0; i < len(w.clients); {
		if w.clients[i].done >= target[i] {
			i++
			continue
		}
		if !w.step() || w.events > budget {
			return nil, fmt.Errorf("%w: %s: client %d finished %d of %d operations after the faults healed%s", errLiveness, cfg, i, w.clients[i].done, target[i], diffsString(w.graphDiffs))
		}
	}
	// Let the operations in flight finish, so the history ends cleanly.
	w.stopping = true
	for w.pending() > 0 {
		if !w.step() {
			return nil, fmt.Errorf("%w: %s: %d operations never finished%s", errLiveness, cfg, w.pending(), diffsString(w.graphDiffs))
		}
	}
	// And until nothing is in flight to the store or the shards: then the
	// graphs must equal the store.
	for !w.quiescent() {
		if !w.step() || w.events > budget {
			return nil, fmt.Errorf("%w: %s: the shards never caught up with the store%s", errLiveness, cfg, diffsString(w.graphDiffs))
		}
	}
	w.checkGraphs()
	w.retire(w.srv)
	w.stats.PointReads = w.pointReads
	w.stats.Events = w.events
	res = &Result{Config: cfg, Stats: w.stats, History: w.rec.History(), GraphDiffs: w.graphDiffs}
	res.Stats.KronosCalls = int(w.kronosCalls())
	res.Check, err = check.CheckListAppend(res.History)
	if err != nil {
		return res, fmt.Errorf("sim: %s: the checker refused the history: %w", cfg, err)
	}
	return res, nil
}

// pending counts clients with an operation in flight.
func (w *world) pending() int {
	n := 0
	for _, c := range w.clients {
		if c.op%2 == 1 {
			n++
		}
	}
	return n
}

// kronosCalls counts the oracle calls of the current process.
func (w *world) kronosCalls() uint64 {
	if w.srv == nil {
		return 0
	}
	calls, _ := w.srv.oracle.Calls()
	return calls
}
