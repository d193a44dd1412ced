package gatekeeper

import (
	"encoding/json"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/vclock"
)

// progRun is a node program coordinated by a shell.
type progRun struct {
	coord  *nodeprog.Coordinator
	stamp  vclock.Stamp
	done   func(res any, err error)
	res    any
	err    error
	shards ShardSet // shards that may hold state for it
}

// step takes a shard's report (with the shards it sent batches to) and says
// whether the program is over.
func (r *progRun) step(rep nodeprog.Report, sentTo []nodeprog.Batch) (done bool, err error) {
	r.shards.Add(rep.Shard)
	for _, b := range sentTo {
		r.shards.Add(b.Shard)
	}
	err = r.coord.Step(rep)
	return err != nil || r.coord.Done(), err
}

// settle records the program's outcome: err, else its gathered result.
func (r *progRun) settle(err error) {
	if err != nil {
		r.err = err
		return
	}
	r.res, r.err = r.coord.Result()
}

// ShardSet is a set of shard numbers: a bit per shard below 64, a slice
// above. The zero value is empty.
type ShardSet struct {
	low  uint64
	more []bool
}

// Add puts shard in the set.
func (s *ShardSet) Add(shard int) {
	if shard < 64 {
		s.low |= 1 << shard
		return
	}
	for len(s.more) <= shard-64 {
		s.more = append(s.more, false)
	}
	s.more[shard-64] = true
}

// Has reports whether shard is in the set.
func (s *ShardSet) Has(shard int) bool {
	if shard < 64 {
		return s.low&(1<<shard) != 0
	}
	return shard-64 < len(s.more) && s.more[shard-64]
}

// RunProgram starts node program comp (compiled from name and params) at
// stamp at — nil: a read point or a fresh stamp, registered with the
// program so that the watermark stays below it — sends its start batches
// to their shards (Env.Batch) and calls done once with its result or
// error, once it may be answered (PeerAck). It returns the program's id,
// for Cancel, or ErrProgramsFull without starting it.
func (s *Shell) RunProgram(name string, comp nodeprog.Compiled, params json.RawMessage, at *vclock.Stamp,
	done func(res any, err error)) (nodeprog.ProgID, error) {
	s.mu.Lock()
	if len(s.progs) >= s.cfg.ProgramsMax {
		s.mu.Unlock()
		return 0, ErrProgramsFull
	}
	s.nextProg++
	id := nodeprog.ProgID(uint64(s.id)<<48 | s.nextProg)
	run := &progRun{done: done}
	s.mu.Unlock()
	start := func(ts vclock.Stamp) { s.startProgram(id, run, name, comp, params, ts) }
	switch {
	case at != nil:
		start(*at)
	case s.pointProgram(id, run):
		start(run.stamp)
	default:
		s.freshProgram(id, run, start)
	}
	return id, nil
}

// pointProgram stamps a program at a read point, registered with it, when
// one may be used (PointRead).
func (s *Shell) pointProgram(id nodeprog.ProgID, run *progRun) bool {
	g := s.cfg.Group
	if g == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := g.pointHeld(func(p vclock.Stamp) { run.stamp = p; s.progs[id] = run }, func() { delete(s.progs, id) })
	if ok {
		run.stamp = p
	}
	return ok
}

// freshProgram stamps a program after sync, registering it in the same
// step (so no watermark pass can come between).
func (s *Shell) freshProgram(id nodeprog.ProgID, run *progRun, start func(vclock.Stamp)) {
	s.sync(new(syncer), StepFunc(func() {
		s.mu.Lock()
		run.stamp = s.freshStamp()
		s.progs[id] = run
		s.mu.Unlock()
		start(run.stamp)
	}))
}

func (s *Shell) startProgram(id nodeprog.ProgID, run *progRun, name string, comp nodeprog.Compiled, params json.RawMessage, ts vclock.Stamp) {
	shardOf := func(h string) int { return int(s.cfg.Placement.Dir().ShardOf(h)) }
	s.mu.Lock()
	defer s.mu.Unlock()
	run.stamp = ts
	coord, batches := nodeprog.NewCoordinatorFor(comp, id, name, params, shardOf, nodeprog.CoordinatorConfig{})
	run.coord = coord
	if coord.Done() {
		delete(s.progs, id)
		run.settle(nil)
		s.answer(ts, func() { run.done(run.res, run.err) })
		return
	}
	s.progs[id] = run
	for _, b := range batches {
		run.shards.Add(b.Shard)
	}
	for _, b := range batches {
		s.cfg.Env.Batch(ts, b)
	}
}

// Report takes a shard's report for one of this gatekeeper's programs,
// with the batches it sent on (so that finishing reaches their shards;
// only their Shard is read).
func (s *Shell) Report(rep nodeprog.Report, sentTo []nodeprog.Batch) {
	s.report(rep.Prog, sentTo, func(*progRun) (nodeprog.Report, error) { return rep, nil })
}

// ReportData is Report for a report as the wire carries it (decoded by
// the program's coordinator, nodeprog.Coordinator.DecodeReport); a report
// that does not decode ends the program with the error.
func (s *Shell) ReportData(prog nodeprog.ProgID, data []byte, sentTo []nodeprog.Batch) {
	s.report(prog, sentTo, func(run *progRun) (nodeprog.Report, error) { return run.coord.DecodeReport(data) })
}

func (s *Shell) report(prog nodeprog.ProgID, sentTo []nodeprog.Batch, decode func(*progRun) (nodeprog.Report, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.progs[prog]
	if !ok || run.coord == nil {
		// The program is over (an early answer, a failure, a cancel): tell
		// the shards its late batches go to before the batches arrive, so
		// they keep no state for it.
		for _, b := range sentTo {
			s.cfg.Env.Finish(b.Shard, prog)
		}
		return
	}
	rep, err := decode(run)
	if err != nil {
		s.finish(prog, run, err)
		return
	}
	if done, err := run.step(rep, sentTo); done {
		s.finish(prog, run, err)
	}
}

// Cancel ends program id with err (its caller gave up), if it still runs.
func (s *Shell) Cancel(id nodeprog.ProgID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run, ok := s.progs[id]; ok && run.coord != nil {
		s.finish(id, run, err)
	}
}

// finish ends a program once: state released on every shard it reached,
// its result (or err) answered. Called with mu held.
func (s *Shell) finish(id nodeprog.ProgID, run *progRun, err error) {
	delete(s.progs, id)
	run.settle(err)
	for i := range s.cfg.Core.Shards {
		if run.shards.Has(i) {
			s.cfg.Env.Finish(i, id)
		}
	}
	s.answer(run.stamp, func() { run.done(run.res, run.err) })
}
