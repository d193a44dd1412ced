package check

import (
	"maps"
	"math/rand/v2"
	"slices"

	"pgregory.net/rapid"
)

// fataler is what the oracle helpers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// chooser supplies the generator's decisions: rapid (shrinkable) or a seeded
// PRNG.
type chooser interface{ intn(n int) int }

type rapidChooser struct{ t *rapid.T }

func (c rapidChooser) intn(n int) int { return rapid.IntRange(0, n-1).Draw(c.t, "choice") }

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// genConfig shapes a generated transactional history.
type genConfig struct {
	procs, keys, txns, mopsMax int
	register                   bool
	// crashes allows Info outcomes (possibly committing later) and aborts;
	// with crashOneIn > 1 they are offered at one step in crashOneIn.
	crashes    bool
	crashOneIn int
	// timeStep is the time between events (ns), for Op.Time.
	timeStep int64
}

// simTxn is a transaction in the simulated database.
type simTxn struct {
	proc      int
	mops      Txn // as invoked
	result    Txn // as executed (reads filled)
	committed bool
	aborted   bool
}

// simulator executes transactions atomically at a commit point between
// invocation and completion, so every history it records is strictly
// serializable. An Info transaction may commit after its Info completion or
// never.
type simulator struct {
	cfg     genConfig
	c       chooser
	db      map[int64][]int64
	h       History
	running map[int]*simTxn // process → its pending transaction
	limbo   []*simTxn       // reported Info, not yet committed
	idle    []int           // processes with nothing pending
	nextP   int
	nextV   int64
	started int
}

func genHistory(c chooser, cfg genConfig) History {
	s := &simulator{cfg: cfg, c: c, db: map[int64][]int64{}, running: map[int]*simTxn{}}
	for p := range cfg.procs {
		s.idle = append(s.idle, p)
	}
	s.nextP = cfg.procs
	for s.step() {
	}
	return s.h
}

// step performs one enabled action; false when none is left.
func (s *simulator) step() bool {
	type action struct {
		kind int
		proc int
	}
	var acts []action
	if s.started < s.cfg.txns {
		for _, p := range s.idle {
			acts = append(acts, action{0, p})
		}
	}
	crash := s.cfg.crashes && (s.cfg.crashOneIn <= 1 || s.c.intn(s.cfg.crashOneIn) == 0)
	for _, p := range slices.Sorted(maps.Keys(s.running)) {
		t := s.running[p]
		if !t.committed && !t.aborted {
			acts = append(acts, action{1, p}) // commit
			if crash {
				acts = append(acts, action{2, p}, action{4, p}) // abort, crash (info)
			}
		} else {
			acts = append(acts, action{3, p}) // complete
		}
	}
	for i := range s.limbo {
		acts = append(acts, action{5, i}) // a crashed transaction commits late
	}
	if len(acts) == 0 {
		return false
	}
	a := acts[s.c.intn(len(acts))]
	s.do(a.kind, a.proc)
	return true
}

func (s *simulator) do(kind, p int) {
	switch kind {
	case 0:
		s.invoke(p)
	case 1:
		s.commit(s.running[p])
	case 2:
		s.running[p].aborted = true
	case 3:
		s.complete(p)
	case 4:
		t := s.running[p]
		s.record(Op{Process: p, Type: Info, F: FTxn, Value: t.mops})
		delete(s.running, p)
		s.limbo = append(s.limbo, t)
		s.idle = append(s.idle, s.nextP) // Jepsen: a crashed process is replaced
		s.nextP++
	case 5:
		t := s.limbo[p]
		s.limbo = slices.Delete(s.limbo, p, p+1)
		if s.c.intn(2) == 0 { // or never
			s.commit(t)
		}
	}
}

func (s *simulator) record(op Op) {
	op.Index = len(s.h)
	op.Time = int64(len(s.h)) * max(s.cfg.timeStep, 1)
	s.h = append(s.h, op)
}

func (s *simulator) invoke(p int) {
	i := slices.Index(s.idle, p)
	s.idle = slices.Delete(s.idle, i, i+1)
	n := 1 + s.c.intn(s.cfg.mopsMax)
	t := &simTxn{proc: p}
	for range n {
		k := int64(s.c.intn(s.cfg.keys))
		switch {
		case s.c.intn(2) == 0:
			t.mops = append(t.mops, ReadNil(k))
		case s.cfg.register:
			s.nextV++
			t.mops = append(t.mops, Write(k, s.nextV))
		default:
			s.nextV++
			t.mops = append(t.mops, Append(k, s.nextV))
		}
	}
	s.running[p] = t
	s.started++
	s.record(Op{Process: p, Type: Invoke, F: FTxn, Value: t.mops})
}

// commit applies t atomically, filling in its reads.
func (s *simulator) commit(t *simTxn) {
	t.committed = true
	t.result = make(Txn, len(t.mops))
	for i, m := range t.mops {
		cur := s.db[m.Key]
		switch {
		case m.F == MopAppend:
			s.db[m.Key] = append(slices.Clip(cur), m.Value)
		case m.F == MopWrite:
			s.db[m.Key] = []int64{m.Value}
		case s.cfg.register && len(cur) == 0:
			m = ReadNil(m.Key)
		case s.cfg.register:
			m = ReadReg(m.Key, cur[0])
		default:
			m = ReadList(m.Key, append([]int64{}, cur...))
		}
		t.result[i] = m
	}
}

func (s *simulator) complete(p int) {
	t := s.running[p]
	delete(s.running, p)
	s.idle = append(s.idle, p)
	if t.aborted {
		s.record(Op{Process: p, Type: Fail, F: FTxn, Value: t.mops})
		return
	}
	s.record(Op{Process: p, Type: OK, F: FTxn, Value: t.result})
}

// perturb makes one random change that may break strict serializability:
// a read result, an outcome, or the order of two adjacent operations.
func perturb(c chooser, h History, register bool) History {
	h = cloneHistory(h)
	var reads, oks, fails [][2]int
	for i, op := range h {
		switch op.Type {
		case OK:
			oks = append(oks, [2]int{i, 0})
			for j, m := range op.Value.(Txn) {
				if m.F == MopRead {
					reads = append(reads, [2]int{i, j})
				}
			}
		case Fail:
			fails = append(fails, [2]int{i, 0})
		}
	}
	switch kind := c.intn(4); {
	case kind == 0 && len(reads) > 0:
		at := reads[c.intn(len(reads))]
		t := h[at[0]].Value.(Txn)
		t[at[1]] = perturbRead(c, h, t[at[1]], register)
	case kind == 1 && len(oks) > 0:
		at := oks[c.intn(len(oks))][0]
		h[at].Type = []Type{Fail, Info}[c.intn(2)]
	case kind == 2 && len(fails) > 0:
		at := fails[c.intn(len(fails))][0]
		h[at].Type = OK
		h[at].Value = fillReads(h[at].Value.(Txn), register)
	case len(h) > 1:
		i := c.intn(len(h) - 1)
		if h[i].Process != h[i+1].Process {
			h[i], h[i+1] = h[i+1], h[i]
			h[i].Index, h[i+1].Index = i, i+1
		}
	}
	return h
}

// perturbRead changes a read's result to something else plausible: a
// shorter or reordered list, another value written to the key, or nil.
func perturbRead(c chooser, h History, m Mop, register bool) Mop {
	var written []int64
	for _, op := range h {
		if t, ok := op.Value.(Txn); ok && op.Type == Invoke {
			for _, x := range t {
				if x.F != MopRead && x.Key == m.Key {
					written = append(written, x.Value)
				}
			}
		}
	}
	if register {
		if len(written) == 0 || c.intn(3) == 0 {
			return ReadNil(m.Key)
		}
		return ReadReg(m.Key, written[c.intn(len(written))])
	}
	l := slices.Clone(m.List)
	switch c.intn(4) {
	case 0:
		if len(l) > 0 {
			l = slices.Delete(l, c.intn(len(l)), len(l)) // truncate
		}
	case 1:
		if len(l) > 1 {
			i := c.intn(len(l) - 1)
			l[i], l[i+1] = l[i+1], l[i]
		}
	case 2:
		if len(written) > 0 {
			l = append(l, written[c.intn(len(written))])
		}
	default:
		if len(l) > 0 {
			i := c.intn(len(l))
			l = slices.Delete(l, i, i+1)
		}
	}
	return ReadList(m.Key, append([]int64{}, l...))
}

// fillReads gives an invocation's reads empty results, for a Fail turned OK.
func fillReads(t Txn, register bool) Txn {
	out := slices.Clone(t)
	for i, m := range out {
		if m.F == MopRead && !register {
			out[i] = ReadList(m.Key, []int64{})
		}
	}
	return out
}

func cloneHistory(h History) History {
	out := slices.Clone(h)
	for i, op := range out {
		if t, ok := op.Value.(Txn); ok {
			out[i].Value = slices.Clone(t)
		}
	}
	return out
}
