package nodeprog

import (
	"errors"
	"fmt"
	"math"
)

// A Local program (Def.Local) reads one vertex: its single start hop runs
// where the vertex lives and the emitted values are the whole answer. Most
// of a social network's reads are such programs (TAO's obj_get and
// assoc_range), and a runner's per-program record, the coordinator's batch
// accounting and the finish message that releases state are pure overhead
// for them. RunLocal is the short path; its result equals what a runner and
// a coordinator compute for the same program at the same snapshot.

// LocalProgram is implemented by compiled programs that say whether they
// are Local.
type LocalProgram interface {
	Local() bool
}

// IsLocal reports whether comp may run with RunLocal.
func IsLocal(comp Compiled) bool {
	l, ok := comp.(LocalProgram)
	return ok && l.Local()
}

var errLocalState = errors.New("nodeprog: a Local program keeps no vertex state")

// LocalStart returns the vertex a Local program reads.
func LocalStart(comp Compiled) (Hop, error) {
	hops := comp.Start()
	if !IsLocal(comp) || len(hops) != 1 {
		return Hop{}, fmt.Errorf("nodeprog: not a Local program (%d start hops)", len(hops))
	}
	return hops[0], nil
}

// RunLocal runs a Local program's start hop h (from LocalStart) at the
// vertex lookup finds, and gathers its emits into the result. A vertex not
// visible is skipped, as a runner skips it; the result is then the
// program's answer for no emits. Errors are those a runner and coordinator
// would give: ErrFailed for a failing Step (a panic included), ErrTooLarge
// beyond EmitsMax.
func RunLocal(comp Compiled, name string, h Hop, lookup func(handle string) (Vertex, bool)) (any, error) {
	g := comp.NewGather()
	v, ok := lookup(h.To)
	if !ok {
		return g.Result()
	}
	c := &Ctx{pr: &progRun{comp: comp, name: name, bound: math.Inf(1)}, at: h.To}
	if err := step(comp, c, v, h.Arg); err != nil {
		return nil, fmt.Errorf("%w: %s at %q: %v", ErrFailed, name, h.To, err)
	}
	if len(c.next) > 0 {
		return nil, fmt.Errorf("%w: %s at %q: a Local program hopped", ErrFailed, name, h.To)
	}
	if m := DefaultConfig().EmitsMax; len(c.emits) > m {
		return nil, fmt.Errorf("%w: %s emitted more than %d values in one run (EmitsMax)", ErrTooLarge, name, m)
	}
	for _, e := range c.emits {
		done, err := g.Add(e)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFailed, name, err)
		}
		if done {
			break
		}
	}
	return g.Result()
}
