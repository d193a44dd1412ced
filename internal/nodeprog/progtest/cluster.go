package progtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/weft-db/weft/internal/nodeprog"
)

// Options configure a Cluster.
type Options struct {
	// Shards is the number of shards, default 1.
	Shards int
	// Wire sends every batch and report through its JSON form.
	Wire bool
	// Seed, when non-zero, delivers the pending message picked by a
	// rand.Rand seeded with it instead of the oldest: batches and reports
	// then overtake each other, as on a network without cross-channel order.
	// Without a seed a shard runs every batch waiting for it together (it
	// drains its inbox); with one, half the time.
	Seed uint64
	// Runner and Coordinator bound the parts; zero fields take defaults.
	Runner      nodeprog.Config
	Coordinator nodeprog.CoordinatorConfig
	// DeliveriesMax bounds the messages one program may take (default
	// 1<<24), so a termination bug fails instead of hanging.
	DeliveriesMax int
}

// Cluster runs programs over a Graph split across shards, one Runner per
// shard, in one goroutine.
type Cluster struct {
	g       *Graph
	reg     *nodeprog.Registry
	opts    Options
	runners []*nodeprog.Runner
	rng     *rand.Rand
	next    nodeprog.ProgID
}

// Stats describe one program run.
type Stats struct {
	Batches        int // batches delivered (start batches included)
	RemoteBatches  int // batches a shard sent (to another, or to itself when yielding)
	Runs           int // Runner.Run calls
	Reports        int
	Hops           int // hops executed over all shards
	MaxOutstanding int
}

// NewCluster returns a cluster over g (which must not change during a run).
func NewCluster(g *Graph, reg *nodeprog.Registry, opts Options) *Cluster {
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	if opts.DeliveriesMax <= 0 {
		opts.DeliveriesMax = 1 << 24
	}
	c := &Cluster{g: g, reg: reg, opts: opts}
	for s := range opts.Shards {
		r, err := nodeprog.NewRunner(reg, s, opts.Runner)
		if err != nil {
			panic(err)
		}
		c.runners = append(c.runners, r)
	}
	if opts.Seed != 0 {
		c.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	}
	return c
}

// ShardOf places a vertex: FNV-1a of its handle modulo the shard count.
func (c *Cluster) ShardOf(h string) int {
	f := fnv.New32a()
	f.Write([]byte(h))
	return int(f.Sum32() % uint32(len(c.runners)))
}

// Runners exposes the per-shard runners (for occupancy checks).
func (c *Cluster) Runners() []*nodeprog.Runner { return c.runners }

// lookup is shard s's view: only the vertices placed on s.
func (c *Cluster) lookup(s int) func(string) (nodeprog.Vertex, bool) {
	return func(h string) (nodeprog.Vertex, bool) {
		if c.ShardOf(h) != s {
			return nil, false
		}
		return c.g.Lookup(h)
	}
}

// Params encodes params for Run: json.RawMessage, []byte and string pass
// as they are; anything else is marshalled.
func Params(p any) json.RawMessage {
	switch x := p.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return x
	case []byte:
		return x
	case string:
		return json.RawMessage(x)
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}

type message struct {
	batch  *nodeprog.Batch
	report *nodeprog.Report
}

// Run runs program name to completion and returns its result. Besides the
// program's own errors it fails when the harness's checks do: a message
// still in flight after the coordinator saw nothing outstanding, a runner
// holding state after Finish, a late batch not refused after Finish, a hop
// routed to the wrong shard.
func (c *Cluster) Run(name string, params any) (any, Stats, error) {
	c.next++
	id := c.next
	var st Stats
	coord, start, err := nodeprog.NewCoordinator(c.reg, id, name, Params(params), c.ShardOf, c.opts.Coordinator)
	if err != nil {
		return nil, st, err
	}
	var pending []message
	for i := range start {
		pending = append(pending, message{batch: &start[i]})
	}
	for deliveries := 0; !coord.Done(); deliveries++ {
		if len(pending) == 0 {
			return nil, st, fmt.Errorf("progtest: %s: nothing in flight but the coordinator waits for %d batches", name, coord.Outstanding())
		}
		if deliveries >= c.opts.DeliveriesMax {
			return nil, st, fmt.Errorf("progtest: %s: more than %d deliveries", name, c.opts.DeliveriesMax)
		}
		var m message
		m, pending = c.pick(pending)
		if m.batch != nil {
			batch := []nodeprog.Batch{*m.batch}
			if c.rng == nil || c.rng.IntN(2) == 0 {
				batch, pending = c.coalesce(batch, pending)
			}
			out, rep, finished, err := c.deliver(batch, &st)
			if err != nil {
				return nil, st, err
			}
			if finished {
				continue
			}
			for j := range out {
				pending = append(pending, message{batch: &out[j]})
			}
			pending = append(pending, message{report: &rep})
			continue
		}
		st.Reports++
		rep := *m.report
		if c.opts.Wire {
			if rep, err = roundTripReport(coord, rep); err != nil {
				return nil, st, err
			}
		}
		st.Hops += rep.Steps
		_ = coord.Step(rep) // a failure is the program's result, below
		st.MaxOutstanding = max(st.MaxOutstanding, coord.Outstanding())
	}
	if coord.Outstanding() == 0 && len(pending) > 0 {
		return nil, st, fmt.Errorf("progtest: %s: coordinator finished with %d messages in flight", name, len(pending))
	}
	for _, r := range c.runners {
		r.Finish(id)
	}
	// what is still in flight arrives late: refused, creating nothing
	for _, m := range pending {
		if m.batch == nil {
			continue
		}
		if _, _, err := c.runners[m.batch.Shard].Run([]nodeprog.Batch{*m.batch}, c.lookup(m.batch.Shard), c.ShardOf); !errors.Is(err, nodeprog.ErrFinished) {
			return nil, st, fmt.Errorf("progtest: %s: a late batch got %v, want ErrFinished", name, err)
		}
	}
	for _, r := range c.runners {
		if s := r.Stats(); s.Programs != 0 || s.StateEntries != 0 {
			return nil, st, fmt.Errorf("progtest: %s: runner holds %+v after Finish", name, s)
		}
	}
	res, err := coord.Result()
	return res, st, err
}

// pick takes the next message: the oldest, or with a seed a random one
// (the last takes its place, which keeps the order a function of the seed).
func (c *Cluster) pick(pending []message) (message, []message) {
	if c.rng == nil {
		m := pending[0]
		pending[0] = message{}
		return m, pending[1:]
	}
	i := c.rng.IntN(len(pending))
	m := pending[i]
	last := len(pending) - 1
	pending[i], pending[last] = pending[last], message{}
	return m, pending[:last]
}

// coalesce adds every other pending batch for the same shard, oldest
// first: the shard drains its inbox in one Run.
func (c *Cluster) coalesce(batch []nodeprog.Batch, pending []message) ([]nodeprog.Batch, []message) {
	keep := pending[:0]
	for _, m := range pending {
		if m.batch != nil && m.batch.Shard == batch[0].Shard {
			batch = append(batch, *m.batch)
		} else {
			keep = append(keep, m)
		}
	}
	clear(pending[len(keep):])
	return batch, keep
}

// deliver runs batches on their shard. finished reports batches dropped
// because the program is over there; err is a harness check failing (a
// program's own failure travels in the report).
func (c *Cluster) deliver(batches []nodeprog.Batch, st *Stats) (out []nodeprog.Batch, rep nodeprog.Report, finished bool, err error) {
	s := batches[0].Shard
	r := c.runners[s]
	for i, b := range batches {
		if c.opts.Wire {
			data, err := json.Marshal(b)
			if err != nil {
				return nil, rep, false, fmt.Errorf("progtest: encode batch: %w", err)
			}
			if b, err = r.DecodeBatch(data); err != nil {
				if errors.Is(err, nodeprog.ErrFinished) {
					return nil, rep, true, nil
				}
				return nil, rep, false, fmt.Errorf("progtest: decode batch: %w", err)
			}
			batches[i] = b
		}
		for _, h := range b.Hops {
			if hs := c.ShardOf(h.To); hs != s {
				return nil, rep, false, fmt.Errorf("progtest: hop to %q sent to shard %d, it lives on %d", h.To, s, hs)
			}
		}
		st.Batches++
		if b.ID.Shard != nodeprog.CoordinatorShard {
			st.RemoteBatches++
		}
	}
	st.Runs++
	out, rep, err = r.Run(batches, c.lookup(s), c.ShardOf)
	return out, rep, errors.Is(err, nodeprog.ErrFinished), nil
}

func roundTripReport(coord *nodeprog.Coordinator, rep nodeprog.Report) (nodeprog.Report, error) {
	data, err := json.Marshal(rep)
	if err != nil {
		return rep, fmt.Errorf("progtest: encode report: %w", err)
	}
	return coord.DecodeReport(data)
}

// Analyze runs a whole-snapshot analysis over the graph.
func (c *Cluster) Analyze(name string, params any) (any, error) {
	return c.reg.Analyze(c.g, name, Params(params), nodeprog.SnapshotLimits{})
}

// RunLocal runs a Local program (nodeprog.IsLocal) the short way an engine
// may: compiled once, its start hop run by nodeprog.RunLocal on the shard
// that holds the vertex. ok is false when the program is not Local (or its
// params do not compile); the caller then has nothing to compare.
func (c *Cluster) RunLocal(name string, params any) (res any, ok bool, err error) {
	comp, err := c.reg.Compile(name, Params(params))
	if err != nil || !nodeprog.IsLocal(comp) {
		return nil, false, nil
	}
	h, err := nodeprog.LocalStart(comp)
	if err != nil {
		return nil, true, err
	}
	res, err = nodeprog.RunLocal(comp, name, h, c.lookup(c.ShardOf(h.To)))
	return res, true, err
}
