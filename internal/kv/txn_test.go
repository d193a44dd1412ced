package kv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

var txnSeeds = flag.Int("kv.txn.seeds", 8, "seeds of TestKronosTxnStrictSerializable")

// txnSim runs the Kronos transactional mode (§3.3) in one goroutine:
// servers (Replica + TxnParticipant), clients coordinating one transaction
// at a time, one in-process Kronos (order.Local), and random message and
// Kronos-call delays, so that transactions prepare in different orders on
// different servers. It returns the history in Elle's rw-register form.
type txnSim struct {
	t        *testing.T
	rng      *rand.Rand
	servers  int
	ring     *kvcore.Ring
	reps     []*Replica
	parts    []*TxnParticipant
	oracle   order.Oracle
	noKronos bool // the mutant: every vote is yes, nothing is ordered
	now      int
	queue    []txnEvent
	seq      uint64
	hist     check.History
	commits  int
	aborts   int
	// waiting maps a transaction (stampKey) to its coordinator's handler
	// of a server's applied part.
	waiting map[string]func(server int, reads map[string][]kvcore.Sibling)
}

type txnEvent struct {
	at  int
	seq uint64
	run func()
}

func (s *txnSim) after(d int, f func()) {
	s.seq++
	s.queue = append(s.queue, txnEvent{at: s.now + 1 + s.rng.IntN(d), seq: s.seq, run: f})
}

func (s *txnSim) record(op check.Op) {
	op.Index = len(s.hist)
	s.hist = append(s.hist, op)
}

func newTxnSim(t *testing.T, seed uint64, servers int, noKronos bool) *txnSim {
	s := &txnSim{t: t, rng: rand.New(rand.NewPCG(seed, 0x7478)), servers: servers, noKronos: noKronos,
		waiting: map[string]func(int, map[string][]kvcore.Sibling){}}
	var err error
	if s.ring, err = kvcore.NewRing(servers, 16); err != nil {
		t.Fatal(err)
	}
	if s.oracle, err = order.NewLocal(kronos.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	for i := range servers {
		cfg := DefaultReplicaConfig()
		cfg.Dir, cfg.FS, cfg.Servers, cfg.Self = "kv", vfs.NewMem(), servers, i
		cfg.Now = func() uint64 { return uint64(s.now) }
		rep, err := OpenReplica(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rep.Close() })
		s.reps = append(s.reps, rep)
		s.parts = append(s.parts, NewTxnParticipant(1024))
	}
	return s
}

func (s *txnSim) primary(key string) int { return s.ring.Replicas(nil, key, 1)[0] }

// client runs txns transactions one after another as coordinator c of
// clients, over keys t0..t<keys-1>.
func (s *txnSim) client(c, clients, txns, keys int) {
	seq := uint64(0)
	var next func()
	next = func() {
		if txns == 0 {
			return
		}
		txns--
		seq++
		counters := make([]uint64, clients)
		counters[c] = seq
		id := vclock.Stamp{Owner: uint32(c), Clock: vclock.Clock{Epoch: 1, Counters: counters}}
		var mops check.Txn
		var reads []string
		var writes []TxnWrite
		for _, k := range s.rng.Perm(keys)[:1+s.rng.IntN(3)] {
			reads = append(reads, fmt.Sprintf("t%d", k))
			mops = append(mops, check.ReadNil(int64(k)))
		}
		for i, k := range s.rng.Perm(keys)[:1+s.rng.IntN(2)] {
			v := int64(c)*1_000_000 + int64(seq)*10 + int64(i)
			writes = append(writes, TxnWrite{Key: fmt.Sprintf("t%d", k), Value: strconv.AppendInt(nil, v, 10)})
			mops = append(mops, check.Write(int64(k), v))
		}
		tx, err := NewTxn(id, reads, writes, s.primary)
		if err != nil {
			s.t.Fatal(err)
		}
		s.record(check.Op{Process: c, Type: check.Invoke, F: check.FTxn, Value: mops})
		finish := func(got map[string][]kvcore.Sibling, err error) {
			if err != nil {
				if !errors.Is(err, kvcore.ErrTxnConflict) {
					s.t.Fatalf("txn %s: %v", id, err)
				}
				s.aborts++
				s.record(check.Op{Process: c, Type: check.Fail, F: check.FTxn, Value: mops})
			} else {
				s.commits++
				s.record(check.Op{Process: c, Type: check.OK, F: check.FTxn, Value: s.filled(mops, got)})
			}
			s.after(3, next)
		}
		for _, p := range tx.Parts() {
			s.after(5, func() { s.prepare(tx, p, finish) })
		}
	}
	s.after(3, next)
}

// prepare runs at p.Server: Prepare, then (after a delay: Kronos is a
// remote service) the vote, back to the coordinator.
func (s *txnSim) prepare(tx *Txn, p TxnPart, finish func(map[string][]kvcore.Sibling, error)) {
	prevs, err := s.parts[p.Server].Prepare(tx.ID, p.Reads, p.Writes)
	if err != nil {
		s.t.Fatal(err)
	}
	s.after(5, func() {
		var vote error
		if !s.noKronos {
			vote = Vote(context.Background(), s.oracle, prevs, tx.ID)
		}
		s.after(5, func() { s.vote(tx, p.Server, vote, finish) })
	})
}

func (s *txnSim) vote(tx *Txn, server int, vote error, finish func(map[string][]kvcore.Sibling, error)) {
	commit, decided := tx.Vote(server, vote)
	if !decided {
		return
	}
	for _, p := range tx.Parts() {
		s.after(5, func() {
			if err := s.parts[p.Server].Decide(tx.ID, commit); err != nil {
				s.t.Fatal(err)
			}
			s.execReady(p.Server, tx, finish)
		})
	}
	if !commit {
		_, _, err := tx.Done()
		finish(nil, err)
	}
}

func (s *txnSim) execReady(server int, tx *Txn, finish func(map[string][]kvcore.Sibling, error)) {
	s.waiting[stampKey(tx.ID)] = func(server int, reads map[string][]kvcore.Sibling) {
		s.after(5, func() {
			tx.Applied(server, reads)
			if got, done, err := tx.Done(); done {
				delete(s.waiting, stampKey(tx.ID))
				finish(got, err)
			}
		})
	}
	p := s.parts[server]
	for _, e := range p.Ready() {
		reads, err := s.reps[server].ExecTxn(e)
		if err != nil {
			s.t.Fatal(err)
		}
		if f := s.waiting[stampKey(e.Txn)]; f != nil {
			f(server, reads)
		}
	}
	p.Advance()
}

// filled returns mops with the reads' values.
func (s *txnSim) filled(mops check.Txn, got map[string][]kvcore.Sibling) check.Txn {
	out := slices.Clone(mops)
	for i, m := range out {
		if m.F != check.MopRead {
			continue
		}
		sibs := got[fmt.Sprintf("t%d", m.Key)]
		switch len(sibs) {
		case 0:
			out[i] = check.ReadNil(m.Key)
		case 1:
			v, err := strconv.ParseInt(string(sibs[0].Value), 10, 64)
			if err != nil {
				s.t.Fatal(err)
			}
			out[i] = check.ReadReg(m.Key, v)
		default:
			s.t.Fatalf("transactional key t%d has %d siblings", m.Key, len(sibs))
		}
	}
	return out
}

func (s *txnSim) run() {
	for s.now = 0; len(s.queue) > 0 && s.now < 1_000_000; s.now++ {
		var due []txnEvent
		rest := s.queue[:0]
		for _, e := range s.queue {
			if e.at <= s.now {
				due = append(due, e)
			} else {
				rest = append(rest, e)
			}
		}
		s.queue = rest
		slices.SortFunc(due, func(a, b txnEvent) int { return int(a.seq) - int(b.seq) })
		for _, e := range due {
			e.run()
		}
	}
	for i, p := range s.parts {
		if p.Pending() != 0 {
			s.t.Fatalf("server %d: %d transactions still pending", i, p.Pending())
		}
	}
}

func runTxnSim(t *testing.T, seed uint64, noKronos bool) (check.Result, *txnSim) {
	s := newTxnSim(t, seed, 3, noKronos)
	const clients = 4
	for c := range clients {
		s.client(c, clients, 40, 5)
	}
	s.run()
	res, err := check.CheckRWRegister(s.hist)
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}

// TestKronosTxnStrictSerializable (Kronos §3.3): multi-key transactions
// over three servers, prepared in different orders on different servers,
// serialised by Kronos must-orders; Elle's rw-register checker finds no
// anomaly (strict serializability) in any seed, and Kronos refuses some
// orders (aborts), so the conflict path is exercised.
func TestKronosTxnStrictSerializable(t *testing.T) {
	commits, aborts := 0, 0
	for seed := uint64(1); seed <= uint64(*txnSeeds); seed++ {
		res, s := runTxnSim(t, seed, false)
		if !res.Valid {
			t.Fatalf("seed %d: %s", seed, res)
		}
		commits += s.commits
		aborts += s.aborts
	}
	if commits < 60**txnSeeds || aborts == 0 {
		t.Fatalf("%d commits, %d aborts: the simulation did not exercise conflicts", commits, aborts)
	}
	t.Logf("%d seeds: %d transactions committed, %d aborted by Kronos (%.1f%%)", *txnSeeds, commits, aborts, 100*float64(aborts)/float64(commits+aborts))
}

// TestKronosTxnWithoutKronosIsNotSerializable is the mutant: the same
// protocol with every vote yes (no Kronos ordering) must show anomalies,
// or the test above proves nothing.
func TestKronosTxnWithoutKronosIsNotSerializable(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		if res, _ := runTxnSim(t, seed, true); !res.Valid {
			t.Logf("seed %d without Kronos: %v", seed, res.Types())
			return
		}
	}
	t.Fatal("no anomaly in 8 seeds without Kronos ordering")
}

func TestTxnParticipantOrder(t *testing.T) {
	p := NewTxnParticipant(8)
	st := func(owner uint32, seq uint64) vclock.Stamp {
		c := make([]uint64, 2)
		c[owner] = seq
		return vclock.Stamp{Owner: owner, Clock: vclock.Clock{Epoch: 1, Counters: c}}
	}
	t1, t2, t3 := st(0, 1), st(1, 1), st(0, 2)
	if prevs, _ := p.Prepare(t1, []string{"a"}, []TxnWrite{{Key: "b", Value: []byte("1")}}); len(prevs) != 0 {
		t.Fatalf("first transaction has prevs %v", prevs)
	}
	prevs, _ := p.Prepare(t2, nil, []TxnWrite{{Key: "b", Value: []byte("2")}})
	if len(prevs) != 1 || stampKey(prevs[0]) != stampKey(t1) {
		t.Fatalf("t2 prevs %v, want t1", prevs)
	}
	p.Prepare(t3, []string{"c"}, nil)
	// t2 is decided first but waits for t1 on b; t3 (disjoint) runs at once.
	p.Decide(t2, true)
	p.Decide(t3, true)
	if got := p.Ready(); len(got) != 1 || stampKey(got[0].Txn) != stampKey(t3) {
		t.Fatalf("ready %v, want t3 only", got)
	}
	p.Advance()
	p.Decide(t1, false) // aborted: t2 may go
	if got := p.Ready(); len(got) != 1 || stampKey(got[0].Txn) != stampKey(t2) {
		t.Fatalf("ready %v, want t2", got)
	}
	if p.Pending() != 0 {
		t.Fatalf("%d pending", p.Pending())
	}
	// A later transaction on b is ordered after t2, the last applied.
	t4 := st(1, 2)
	if prevs, _ := p.Prepare(t4, []string{"b"}, nil); len(prevs) != 1 || stampKey(prevs[0]) != stampKey(t2) {
		t.Fatalf("t4 prevs %v, want t2", prevs)
	}
}
