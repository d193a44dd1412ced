package nodeprog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Hop is one unit of program work: run the program at vertex To with
// argument Arg. In a process Arg is the program's own Go value; it must be
// JSON-encodable, because a cluster sends hops between processes, and the
// receiver decodes it with Compiled.DecodeArg.
type Hop struct {
	To  string `json:"to"`
	Arg any    `json:"arg,omitempty"`
	// here marks a hop the runner queued after finding To on its own
	// shard at the program's stamp, which it need not look up again.
	here bool
}

// Order is the order in which a runner processes the hops it holds for one
// program: breadth first (FIFO, the default), depth first (LIFO), or by
// priority (lowest Priority() of the argument first; label-correcting
// programs such as shortest_path use it to run Dijkstra-like locally).
type Order uint8

const (
	BFS Order = iota
	DFS
	Priority
)

// Prioritized is implemented by the hop arguments of Priority programs.
type Prioritized interface {
	Priority() float64
}

// Program is a named node program. Compile validates params up front; bad
// params give an error wrapping ErrBadParams that names the field.
type Program interface {
	Name() string
	Compile(params json.RawMessage) (Compiled, error)
}

// Compiled is a program bound to validated params. It is immutable and safe
// to share between runners; all mutable state lives in Ctx (per vertex) and
// Gather (at the coordinator).
type Compiled interface {
	// Start returns the initial hops.
	Start() []Hop
	Order() Order
	// Step runs the program at one vertex: it reads v, reads and writes the
	// vertex's state through c, and calls c.Hop and c.Emit. An error fails
	// the whole program.
	Step(c *Ctx, v Vertex, arg any) error
	// DecodeArg and DecodeEmit decode a hop argument and an emitted value
	// from their JSON form (what crossed the wire) to the Go value Step and
	// Gather expect.
	DecodeArg(raw json.RawMessage) (any, error)
	DecodeEmit(raw json.RawMessage) (any, error)
	// NewGather returns the coordinator's reducer for one run.
	NewGather() Gather
}

// Gather reduces emitted values, in any order, to the final result. Add
// returns done=true when the answer is known early (the coordinator then
// stops waiting for outstanding work). Result must be a plain
// JSON-marshalable value and must not depend on the order of Adds.
type Gather interface {
	Add(emit any) (done bool, err error)
	Result() (any, error)
}

// Ctx is what a Step sees besides the vertex: the way to send next hops, to
// emit results, and the vertex's per-program state. A Ctx is valid only
// during the Step it is passed to.
type Ctx struct {
	next  []Hop
	emits []any
	rt    *Runner
	pr    *progRun
	at    string // the vertex being stepped
	// the vertex's state, looked up once per step
	cached   bool
	st       any
	stExists bool
}

// Hop asks for the program to run at vertex to with argument arg.
func (c *Ctx) Hop(to string, arg any) { c.next = append(c.next, Hop{To: to, Arg: arg}) }

// Emit sends a value to the coordinator's Gather.
func (c *Ctx) Emit(v any) { c.emits = append(c.emits, v) }

// State returns the vertex's state for this program, if any.
func (c *Ctx) State() (any, bool) {
	if !c.cached {
		c.st, c.stExists = c.pr.state[c.at]
		c.cached = true
	}
	return c.st, c.stExists
}

// SetState stores the vertex's state for this program. A new entry fails
// with ErrOverloaded when the runner already holds StateEntriesMax entries.
func (c *Ctx) SetState(s any) error {
	if c.rt == nil {
		return errLocalState
	}
	if err := c.rt.setState(c.pr, c.at, s); err != nil {
		return err
	}
	c.cached, c.st, c.stExists = true, s, true
	return nil
}

// Prune tells the runner that no hop of this program with a priority above
// p can change the result (say, a destination was reached at cost p and
// costs only grow). The runner drops such hops, queued and future, and
// carries the bound on its batches so other shards drop them too. Only
// Priority programs; a non-finite p is ignored. Pruning changes how much
// work is done, never the result.
func (c *Ctx) Prune(p float64) {
	if c.pr.comp.Order() == Priority && !math.IsInf(p, 0) && !math.IsNaN(p) {
		c.pr.bound = math.Min(c.pr.bound, p)
	}
}

// StateOf returns the vertex's state as a *S, creating a zero S on first
// use. Programs store pointers, so updates through the pointer persist.
func StateOf[S any](c *Ctx) (*S, error) {
	if s, ok := c.State(); ok {
		p, ok := s.(*S)
		if !ok { // not assert(ok, …): its arguments would be boxed on every call
			assert(false, "state is %T, want *%T", s, *new(S))
		}
		return p, nil
	}
	p := newState[S](c)
	if err := c.SetState(p); err != nil {
		return nil, err
	}
	return p, nil
}

// EmitOf emits e as Ctx.Emit does, boxed as a *E from a chunk the
// program's runner allocates stateSlabLen at a time (an emit per vertex
// visited would otherwise be an allocation per vertex). The Gather sees e.
func EmitOf[E any](c *Ctx, e E) {
	if c.pr == nil {
		c.Emit(e)
		return
	}
	p := fromSlab[E](&c.pr.emitSlab)
	*p = e
	c.Emit(p)
}

// stateSlabLen is how many states (or emitted values) a slab allocates at once.
const stateSlabLen = 64

// stateSlab is a chunk of a program's states on one runner, handed out
// one by one (a program visits many vertices: one allocation per chunk
// rather than per vertex); the chunk lives as long as any of its states.
type stateSlab[S any] struct{ free []S }

// newState is a zero S for c's program, from its runner's slab.
func newState[S any](c *Ctx) *S {
	if c.pr == nil {
		return new(S)
	}
	return fromSlab[S](&c.pr.slab)
}

// fromSlab hands out the next zero T of the slab held in slot (a
// *stateSlab[T]), starting one, or a new chunk, when needed.
func fromSlab[T any](slot *any) *T {
	sl, ok := (*slot).(*stateSlab[T])
	if !ok {
		sl = &stateSlab[T]{}
		*slot = sl
	}
	if len(sl.free) == 0 {
		sl.free = make([]T, stateSlabLen)
	}
	p := &sl.free[0]
	sl.free = sl.free[1:]
	return p
}

// LookupState returns the vertex's state as a *S without creating it.
func LookupState[S any](c *Ctx) *S {
	if s, ok := c.State(); ok {
		p, ok := s.(*S)
		if !ok {
			assert(false, "state is %T, want *%T", s, *new(S))
		}
		return p
	}
	return nil
}

// Def defines a typed program: P is the compiled params, A the hop
// argument, E the emitted value. Def implements Program; the type erasure
// and JSON decoding are done once here, not in every program.
type Def[P, A, E any] struct {
	ProgName string
	Ord      Order
	// Parse decodes and validates raw params (DecodeParams, FilterSpec.Compile).
	Parse func(raw json.RawMessage) (*P, error)
	Start func(p *P) []Hop
	Step  func(c *Ctx, p *P, v Vertex, arg A) error
	// Gather returns a fresh reducer for one run.
	Gather func(p *P) GatherOf[E]
	// Local declares that Start returns exactly one hop and Step never
	// hops and keeps no state: the program reads one vertex. An engine
	// may then run it with RunLocal, without a runner or coordinator.
	Local bool
	// Rejects names fields of P this program refuses (a params struct
	// shared by several programs): Params leaves them out.
	Rejects []string
}

// GatherOf is the typed Gather a Def supplies.
type GatherOf[E any] interface {
	Add(e E) (done bool, err error)
	Result() (any, error)
}

// Name implements Program.
func (d *Def[P, A, E]) Name() string { return d.ProgName }

// Compile implements Program.
func (d *Def[P, A, E]) Compile(raw json.RawMessage) (Compiled, error) {
	p, err := d.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &compiled[P, A, E]{def: d, p: p}, nil
}

type compiled[P, A, E any] struct {
	def *Def[P, A, E]
	p   *P
}

func (c *compiled[P, A, E]) Start() []Hop { return c.def.Start(c.p) }
func (c *compiled[P, A, E]) Local() bool  { return c.def.Local }
func (c *compiled[P, A, E]) Order() Order { return c.def.Ord }

func (c *compiled[P, A, E]) Step(ctx *Ctx, v Vertex, arg any) error {
	var a A
	if arg != nil {
		var ok bool
		a, ok = arg.(A)
		if !ok {
			assert(false, "%s: hop argument is %T, want %T", c.def.ProgName, arg, a)
		}
	}
	return c.def.Step(ctx, c.p, v, a)
}

func (c *compiled[P, A, E]) DecodeArg(raw json.RawMessage) (any, error) {
	var a A
	if err := decodeStrict(raw, &a); err != nil {
		return nil, fmt.Errorf("%s: hop argument: %w", c.def.ProgName, err)
	}
	return a, nil
}

func (c *compiled[P, A, E]) DecodeEmit(raw json.RawMessage) (any, error) {
	var e E
	if err := decodeStrict(raw, &e); err != nil {
		return nil, fmt.Errorf("%s: emitted value: %w", c.def.ProgName, err)
	}
	return e, nil
}

func (c *compiled[P, A, E]) NewGather() Gather {
	return &gatherAdapter[E]{g: c.def.Gather(c.p), name: c.def.ProgName}
}

type gatherAdapter[E any] struct {
	g    GatherOf[E]
	name string
}

func (g *gatherAdapter[E]) Add(v any) (bool, error) {
	if p, ok := v.(*E); ok { // EmitOf's
		return g.g.Add(*p)
	}
	e, ok := v.(E)
	if !ok {
		assert(false, "%s: emitted %T, want %T", g.name, v, e)
	}
	return g.g.Add(e)
}

func (g *gatherAdapter[E]) Result() (any, error) { return g.g.Result() }

// decodeStrict decodes wire JSON; empty input leaves dst zero.
func decodeStrict(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}
