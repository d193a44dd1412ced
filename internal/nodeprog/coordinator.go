package nodeprog

import (
	"encoding/json"
	"fmt"
	"slices"
)

// CoordinatorConfig bounds one program run at its coordinator. Zero fields
// take the defaults.
type CoordinatorConfig struct {
	// HopsMax bounds the hops executed over all shards (ErrTooLarge).
	// Default 1<<26.
	HopsMax int
	// ResultsMax bounds the values gathered (ErrTooLarge). Default 1<<24.
	ResultsMax int
	// OutstandingMax bounds the batches in flight (ErrTooLarge).
	// Default 1<<20.
	OutstandingMax int
	// BatchHopsMax bounds the hops of one start batch. Default 4096.
	BatchHopsMax int
}

// DefaultCoordinatorConfig returns the defaults documented on
// CoordinatorConfig.
func DefaultCoordinatorConfig() CoordinatorConfig {
	return CoordinatorConfig{HopsMax: 1 << 26, ResultsMax: 1 << 24, OutstandingMax: 1 << 20, BatchHopsMax: 4096}
}

func (c CoordinatorConfig) withDefaults() CoordinatorConfig {
	d := DefaultCoordinatorConfig()
	if c.HopsMax <= 0 {
		c.HopsMax = d.HopsMax
	}
	if c.ResultsMax <= 0 {
		c.ResultsMax = d.ResultsMax
	}
	if c.OutstandingMax <= 0 {
		c.OutstandingMax = d.OutstandingMax
	}
	if c.BatchHopsMax <= 0 {
		c.BatchHopsMax = d.BatchHopsMax
	}
	return c
}

// Coordinator runs one program at the gatekeeper that started it: it makes
// the start batches, tracks the batches in flight to detect termination,
// gathers emitted values and produces the result. It is pure and not safe
// for concurrent use. Deadlines are the caller's: it stops stepping and
// finishes the program on the shards.
//
// Termination: every batch has an id; each Report names the batches it
// consumed and the batches it produced. The program is done when every
// produced batch has been consumed. Reports may arrive in any order (a
// consumer's report before its producer's): a consumed id not yet known is
// remembered as early and cancels when its producer reports it, so the
// count never reaches zero while work is in flight.
type Coordinator struct {
	id          ProgID
	name        string
	comp        Compiled
	gather      Gather
	cfg         CoordinatorConfig
	outstanding map[BatchID]struct{}
	early       map[BatchID]struct{}
	hops        int
	results     int
	done        bool
	err         error
}

// NewCoordinator validates the program and its params and returns the
// coordinator with the start batches, one or more per shard named by
// shardOf, in ascending shard order. A program with no start hops is done at
// once.
func NewCoordinator(reg *Registry, id ProgID, name string, params json.RawMessage, shardOf func(handle string) int, cfg CoordinatorConfig) (*Coordinator, []Batch, error) {
	comp, err := reg.Compile(name, params)
	if err != nil {
		return nil, nil, err
	}
	c, batches := NewCoordinatorFor(comp, id, name, params, shardOf, cfg)
	return c, batches, nil
}

// NewCoordinatorFor is NewCoordinator for a program already compiled from
// name and params.
func NewCoordinatorFor(comp Compiled, id ProgID, name string, params json.RawMessage, shardOf func(handle string) int, cfg CoordinatorConfig) (*Coordinator, []Batch) {
	c := &Coordinator{
		id: id, name: name, comp: comp, gather: comp.NewGather(), cfg: cfg.withDefaults(),
		outstanding: map[BatchID]struct{}{}, early: map[BatchID]struct{}{},
	}
	var rt router
	for _, h := range comp.Start() {
		rt.add(shardOf(h.To), h)
	}
	var seq uint64
	batches := rt.flush(id, name, slices.Clone(params), comp, CoordinatorShard, &seq, c.cfg.BatchHopsMax)
	for _, b := range batches {
		c.outstanding[b.ID] = struct{}{}
	}
	c.done = len(batches) == 0
	return c, batches
}

// Step takes one report. It returns the program's error when the report
// ends it (a failure on a shard, or a bound exceeded here); reports after the
// program is done are ignored.
func (c *Coordinator) Step(r Report) error {
	if c.done {
		return nil
	}
	if r.Prog != c.id {
		return fmt.Errorf("nodeprog: report for program %d given to the coordinator of %d", r.Prog, c.id)
	}
	if err := r.Failed(); err != nil {
		return c.fail(err)
	}
	for _, id := range r.Consumed {
		if _, ok := c.outstanding[id]; ok {
			delete(c.outstanding, id)
		} else {
			c.early[id] = struct{}{}
		}
	}
	for _, id := range r.Produced {
		if _, ok := c.early[id]; ok {
			delete(c.early, id)
		} else {
			c.outstanding[id] = struct{}{}
		}
	}
	if len(c.outstanding)+len(c.early) > c.cfg.OutstandingMax {
		return c.fail(fmt.Errorf("%w: %s has %d batches in flight (OutstandingMax)", ErrTooLarge, c.name, len(c.outstanding)))
	}
	c.hops += r.Steps
	if c.hops > c.cfg.HopsMax {
		return c.fail(fmt.Errorf("%w: %s executed %d hops (HopsMax)", ErrTooLarge, c.name, c.hops))
	}
	for _, e := range r.Emits {
		c.results++
		if c.results > c.cfg.ResultsMax {
			return c.fail(fmt.Errorf("%w: %s emitted more than %d values (ResultsMax)", ErrTooLarge, c.name, c.cfg.ResultsMax))
		}
		done, err := c.gather.Add(e)
		if err != nil {
			return c.fail(fmt.Errorf("%w: %s: %v", ErrFailed, c.name, err))
		}
		if done {
			c.done = true
			return nil
		}
	}
	c.done = len(c.outstanding) == 0 && len(c.early) == 0
	return nil
}

func (c *Coordinator) fail(err error) error {
	c.done, c.err = true, err
	return err
}

// Done reports whether the program is over: finished, answered early, or
// failed. The caller then finishes the program on every shard.
func (c *Coordinator) Done() bool { return c.done }

// Outstanding is the number of batches in flight.
func (c *Coordinator) Outstanding() int { return len(c.outstanding) + len(c.early) }

// Hops is the number of hops executed so far over all shards.
func (c *Coordinator) Hops() int { return c.hops }

// Result returns the final result, or the program's error.
func (c *Coordinator) Result() (any, error) {
	if !c.done {
		return nil, ErrNotDone
	}
	if c.err != nil {
		return nil, c.err
	}
	return c.gather.Result()
}
