package nodeprog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ProgID names one run of a program. The gatekeeper that starts a program
// picks it and must keep it unique across the cluster while the program
// runs (for example its own id in the high bits and a counter below).
type ProgID uint64

// BatchID names one batch of hops: the shard that produced it (-1 for the
// coordinator) and that producer's sequence number. The coordinator detects
// termination by matching produced and consumed batch ids.
type BatchID struct {
	Shard int    `json:"shard"`
	Seq   uint64 `json:"seq"`
}

// CoordinatorShard is the BatchID.Shard of the coordinator's start batches.
const CoordinatorShard = -1

// Batch is hops for one program on one shard. Name and Params travel with
// every batch so that a shard that has not seen the program yet can compile
// it; they are small.
type Batch struct {
	ID     BatchID         `json:"id"`
	Prog   ProgID          `json:"prog"`
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params,omitempty"`
	Shard  int             `json:"shard"` // destination
	Hops   []Hop           `json:"hops"`
	// Bound is the sender's prune bound (see Ctx.Prune); nil when none.
	Bound *float64 `json:"bound,omitempty"`

	// comp is the compiled program when the batch never left the process,
	// so a runner need not parse the params again; the wire drops it.
	comp Compiled
}

// Report is what a runner tells the coordinator after one Run: which
// batches it consumed, which batches it produced, what it emitted, how many
// hops it executed, or why the program failed (Code, Err). Every Run except
// one answering ErrFinished must be reported, exactly once.
type Report struct {
	Prog     ProgID    `json:"prog"`
	Shard    int       `json:"shard"`
	Consumed []BatchID `json:"consumed"`
	Produced []BatchID `json:"produced,omitempty"`
	Emits    []any     `json:"emits,omitempty"`
	Steps    int       `json:"steps"`
	Code     string    `json:"code,omitempty"`
	Err      string    `json:"err,omitempty"`
}

// Failed returns the report's error, nil if the batch ran.
func (r *Report) Failed() error {
	if r.Code == "" {
		return nil
	}
	return codeErr(r.Code, r.Err)
}

// Config bounds one Runner. Zero fields take the defaults.
type Config struct {
	// StateEntriesMax bounds per-vertex program state entries held by the
	// runner over all its programs; beyond it Run fails with ErrOverloaded.
	// Default 1<<22.
	StateEntriesMax int
	// HopsMax bounds the hops one program executes or queues on one runner;
	// beyond it Run fails with ErrTooLarge. Default 1<<24.
	HopsMax int
	// BatchHopsMax bounds the hops of one outgoing batch; more are split.
	// Default 4096.
	BatchHopsMax int
	// EmitsMax bounds the values emitted by one Run (ErrTooLarge).
	// Default 1<<20.
	EmitsMax int
	// ProgramsMax bounds the programs a runner holds state for at once
	// (ErrOverloaded). Default 4096.
	ProgramsMax int
	// FinishedMax is how many finished program ids a runner remembers, so
	// that a late batch is dropped instead of recreating state. Default 1<<16.
	FinishedMax int
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		StateEntriesMax: 1 << 22,
		HopsMax:         1 << 24,
		BatchHopsMax:    4096,
		EmitsMax:        1 << 20,
		ProgramsMax:     4096,
		FinishedMax:     1 << 16,
	}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	for _, f := range []struct{ dst, def *int }{
		{&c.StateEntriesMax, &d.StateEntriesMax}, {&c.HopsMax, &d.HopsMax},
		{&c.BatchHopsMax, &d.BatchHopsMax}, {&c.EmitsMax, &d.EmitsMax},
		{&c.ProgramsMax, &d.ProgramsMax}, {&c.FinishedMax, &d.FinishedMax},
	} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	return c
}

// Validate rejects negative bounds.
func (c Config) Validate() error {
	for name, v := range map[string]int{
		"StateEntriesMax": c.StateEntriesMax, "HopsMax": c.HopsMax, "BatchHopsMax": c.BatchHopsMax,
		"EmitsMax": c.EmitsMax, "ProgramsMax": c.ProgramsMax, "FinishedMax": c.FinishedMax,
	} {
		if v < 0 {
			return fmt.Errorf("nodeprog: config: %s is negative", name)
		}
	}
	return nil
}

// Runner executes node programs for the vertices of one shard. It is pure
// (no goroutines, clocks or I/O; output is a function of its inputs) and not
// safe for concurrent use: the shard serialises calls.
type Runner struct {
	reg      *Registry
	shard    int
	cfg      Config
	progs    map[ProgID]*progRun
	entries  int
	finished map[ProgID]struct{}
	finRing  []ProgID // finished ids in a ring, oldest at finHead once full
	finHead  int
	seq      uint64
	ctx      Ctx
}

// progRun is one program's life on one runner.
type progRun struct {
	comp   Compiled
	name   string
	params json.RawMessage
	state  map[string]any
	hops   int
	// queue holds local hops between Runs when the runner yields; a token
	// (an empty batch to this shard) is then in flight, so the coordinator
	// keeps waiting until the queue has been drained.
	queue    hopQueue
	tokenOut bool
	// bound: hops of a higher priority cannot change the result (Ctx.Prune)
	bound float64
	// slab hands out StateOf's states a chunk at a time (a *stateSlab[S]),
	// emitSlab EmitOf's values.
	slab, emitSlab any
}

// NewRunner returns the runner of shard shard (0-based).
func NewRunner(reg *Registry, shard int, cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{
		reg: reg, shard: shard, cfg: cfg.withDefaults(),
		progs: map[ProgID]*progRun{}, finished: map[ProgID]struct{}{},
	}, nil
}

// RunnerStats is a runner's occupancy.
type RunnerStats struct {
	Programs     int // programs with live state
	StateEntries int // per-vertex state entries over all programs
}

// Stats reports occupancy; after Finish of every program both are zero.
func (r *Runner) Stats() RunnerStats {
	return RunnerStats{Programs: len(r.progs), StateEntries: r.entries}
}

// Run executes batches of one program that arrived for this shard: every
// hop whose vertex lookup finds (vertices not visible at the program's stamp
// are skipped), and the local hops they lead to, in the program's Order. A
// hop that arrived for a vertex shardOf places elsewhere is passed on
// unexecuted (a shard's shardOf answers for the program's stamp, so a
// vertex whose unit moved is found where it was then).
// Several batches may be run together (a shard draining its inbox), which
// orders their hops better and sends fewer, larger batches. Run returns the
// batches for other shards (at most BatchHopsMax hops each, ascending shard)
// and the report for the coordinator. On error the report carries it (Code,
// Err) and no batches are returned; ErrFinished means the program is over
// and nothing need be reported.
func (r *Runner) Run(batches []Batch, lookup func(handle string) (Vertex, bool), shardOf func(handle string) int) ([]Batch, Report, error) {
	assert(len(batches) > 0, "Run without batches")
	b0 := batches[0]
	rep := Report{Prog: b0.Prog, Shard: r.shard}
	for _, b := range batches {
		if b.Prog != b0.Prog {
			assert(false, "Run of programs %d and %d together", b0.Prog, b.Prog)
		}
		rep.Consumed = append(rep.Consumed, b.ID)
	}
	p, err := r.program(b0.Prog, b0.Name, b0.Params, b0.comp)
	if err == nil {
		var rt router
		if err = r.execute(p, batches, lookup, shardOf, &rt, &rep); err == nil {
			out := rt.flush(b0.Prog, p.name, p.params, p.comp, r.shard, &r.seq, r.cfg.BatchHopsMax)
			if !math.IsInf(p.bound, 1) {
				for i := range out {
					bound := p.bound
					out[i].Bound = &bound
				}
			}
			for _, ob := range out {
				rep.Produced = append(rep.Produced, ob.ID)
			}
			return out, rep, nil
		}
	}
	rep.Produced, rep.Emits = nil, nil
	rep.Code, rep.Err = errCode(err), err.Error()
	return nil, rep, err
}

// execute is Run's loop over local hops.
//
// For Priority programs it yields: once the cheapest local hop is more
// expensive than the cheapest hop this Run sent to another shard, it stops
// and keeps the rest of its queue for a later Run, sending a token batch to
// itself that is delivered after the work other shards already have.
// Without it a runner would run far ahead along its local subgraph and redo
// that work when cheaper labels arrive (label-correcting programs); with it
// the shards advance roughly together, as in Δ-stepping. One shard alone
// never yields.
func (r *Runner) execute(p *progRun, batches []Batch, lookup func(string) (Vertex, bool), shardOf func(string) int, rt *router, rep *Report) error {
	if p.queue == nil {
		p.queue = newQueue(p.comp.Order())
	}
	q := p.queue
	pq, _ := q.(*prioQueue)
	for _, b := range batches {
		if b.ID.Shard == r.shard && len(b.Hops) == 0 {
			p.tokenOut = false // our token is back
		}
		if b.Bound != nil {
			p.bound = math.Min(p.bound, *b.Bound)
		}
		for _, h := range b.Hops {
			if pq == nil || priorityOf(h) <= p.bound {
				q.push(h)
			}
		}
	}
	sentMin := math.Inf(1)
	for q.len() > 0 {
		if pq != nil && pq.peek() > p.bound {
			for pq.len() > 0 { // all beyond the bound
				pq.pop()
			}
			break
		}
		if pq != nil && pq.peek() > sentMin {
			if !p.tokenOut {
				rt.token(r.shard)
				p.tokenOut = true
			}
			break
		}
		h := q.pop()
		if !h.here {
			if s := shardOf(h.To); s != r.shard {
				// Its vertex is not here at the program's stamp (its
				// placement unit moved: docs/online-moves.md): the hop goes
				// on to the shard that has it, in a batch of its own.
				rt.add(s, h)
				if pq != nil {
					sentMin = math.Min(sentMin, priorityOf(h))
				}
				continue
			}
		}
		if p.hops >= r.cfg.HopsMax {
			return fmt.Errorf("%w: %s executed %d hops on shard %d (HopsMax)", ErrTooLarge, p.name, p.hops, r.shard)
		}
		p.hops++
		rep.Steps++
		v, ok := lookup(h.To)
		if !ok {
			continue
		}
		c := &r.ctx
		c.next, c.emits, c.rt, c.pr, c.at = c.next[:0], c.emits[:0], r, p, h.To
		c.cached, c.st, c.stExists = false, nil, false
		err := step(p.comp, c, v, h.Arg)
		c.rt, c.pr, c.st = nil, nil, nil
		if err != nil {
			if errors.Is(err, ErrOverloaded) || errors.Is(err, ErrTooLarge) {
				return err
			}
			return fmt.Errorf("%w: %s at %q: %v", ErrFailed, p.name, h.To, err)
		}
		for _, nh := range c.next {
			if pq != nil && priorityOf(nh) > p.bound {
				continue
			}
			if s := shardOf(nh.To); s == r.shard {
				nh.here = true
				q.push(nh)
			} else {
				rt.add(s, nh)
				if pq != nil {
					sentMin = math.Min(sentMin, priorityOf(nh))
				}
			}
		}
		if q.len()+rt.n > r.cfg.HopsMax {
			return fmt.Errorf("%w: %s holds %d pending hops on shard %d (HopsMax)", ErrTooLarge, p.name, q.len()+rt.n, r.shard)
		}
		if rep.Emits == nil && len(c.emits) > 0 {
			rep.Emits = make([]any, 0, min(q.len()+len(c.emits), stateHintMax))
		}
		rep.Emits = append(rep.Emits, c.emits...)
		if len(rep.Emits) > r.cfg.EmitsMax {
			return fmt.Errorf("%w: %s emitted more than %d values in one run (EmitsMax)", ErrTooLarge, p.name, r.cfg.EmitsMax)
		}
	}
	return nil
}

// step runs one Step; a panic (a hop argument that decoded but breaks the
// program's assumptions, or a bug in a program) fails the program instead of
// the shard.
func step(comp Compiled, c *Ctx, v Vertex, arg any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return comp.Step(c, v, arg)
}

// program returns the program's record, compiling it on first sight
// (unless the batch brought it compiled).
func (r *Runner) program(id ProgID, name string, params json.RawMessage, comp Compiled) (*progRun, error) {
	if p, ok := r.progs[id]; ok {
		return p, nil
	}
	if _, done := r.finished[id]; done {
		return nil, fmt.Errorf("%w: program %d", ErrFinished, id)
	}
	if len(r.progs) >= r.cfg.ProgramsMax {
		return nil, fmt.Errorf("%w: shard %d runs %d programs (ProgramsMax)", ErrOverloaded, r.shard, len(r.progs))
	}
	if comp == nil {
		var err error
		if comp, err = r.reg.Compile(name, params); err != nil {
			return nil, err
		}
	}
	p := &progRun{comp: comp, name: name, params: slices.Clone(params), bound: math.Inf(1)}
	r.progs[id] = p
	return p, nil
}

func (r *Runner) setState(p *progRun, at string, s any) error {
	if _, ok := p.state[at]; !ok {
		if r.entries >= r.cfg.StateEntriesMax {
			return fmt.Errorf("%w: shard %d holds %d program state entries (StateEntriesMax)", ErrOverloaded, r.shard, r.entries)
		}
		r.entries++
	}
	if p.state == nil {
		// Sized for the hops at hand: a program's first batch on a shard
		// is usually most of its visits there.
		p.state = make(map[string]any, min(p.queue.len()+1, stateHintMax))
	}
	p.state[at] = s
	return nil
}

// Finish releases the program's state and remembers that it is over, so a
// late batch is answered with ErrFinished. Finishing an unknown program is
// allowed (the shard may never have run it).
func (r *Runner) Finish(id ProgID) {
	if p, ok := r.progs[id]; ok {
		r.entries -= len(p.state)
		delete(r.progs, id)
	}
	if _, ok := r.finished[id]; ok {
		return
	}
	r.finished[id] = struct{}{}
	if len(r.finRing) < r.cfg.FinishedMax {
		r.finRing = append(r.finRing, id)
		return
	}
	delete(r.finished, r.finRing[r.finHead])
	r.finRing[r.finHead] = id
	r.finHead = (r.finHead + 1) % len(r.finRing)
}

// stateHintMax bounds the sizes guessed for a program's state map and
// emits on a shard from the hops it holds.
const stateHintMax = 1 << 12

// router groups remote hops by destination shard.
type router struct {
	byShard map[int][]Hop
	n       int
}

// token asks for an empty batch to shard.
func (rt *router) token(shard int) {
	if rt.byShard == nil {
		rt.byShard = map[int][]Hop{}
	}
	if _, ok := rt.byShard[shard]; !ok {
		rt.byShard[shard] = nil
	}
}

func (rt *router) add(shard int, h Hop) {
	if rt.byShard == nil {
		rt.byShard = map[int][]Hop{}
	}
	hops := rt.byShard[shard]
	if hops == nil {
		hops = make([]Hop, 0, 16)
	}
	rt.byShard[shard] = append(hops, h)
	rt.n++
}

// flush cuts the grouped hops into batches: ascending shard, hops in the
// order they were produced, at most max per batch.
func (rt *router) flush(prog ProgID, name string, params json.RawMessage, comp Compiled, from int, seq *uint64, max int) []Batch {
	shards := make([]int, 0, len(rt.byShard))
	for s := range rt.byShard {
		shards = append(shards, s)
	}
	slices.Sort(shards)
	var out []Batch
	for _, s := range shards {
		if len(rt.byShard[s]) == 0 { // a token
			*seq++
			out = append(out, Batch{ID: BatchID{Shard: from, Seq: *seq}, Prog: prog, Name: name, Params: params, Shard: s, Hops: []Hop{}, comp: comp})
		}
		for hops := rt.byShard[s]; len(hops) > 0; {
			n := min(len(hops), max)
			*seq++
			out = append(out, Batch{
				ID: BatchID{Shard: from, Seq: *seq}, Prog: prog, Name: name, Params: params,
				Shard: s, Hops: hops[:n:n], comp: comp,
			})
			hops = hops[n:]
		}
	}
	return out
}
