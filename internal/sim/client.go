package sim

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// The workload is Elle's list-append over the graph: key k is vertex "k<k>"
// whose property "v" is a list of integers. A transaction reads its keys
// at a snapshot (a read task on each key's shard) and appends by writing
// the extended list, committed with the reads in its read set, so the
// store's OCC validates them.

const propKey = "v"

func vertexOf(k int64) string { return "k" + strconv.FormatInt(k, 10) }

// timeout is how long a client waits for a reply before giving up.
const timeout = 400

type client struct {
	w       *world
	id      int
	op      int // sequence of the current operation; replies of older ones are ignored
	done    int // operations completed
	inv     check.Txn
	mops    []check.Mop
	reads   map[int64]readResult
	waiting int
	sent    bool // the commit went out: a lost reply is indeterminate
	// Cluster mode: a read-only transaction ends only when its gatekeeper
	// says its snapshot is stable (answer); readsIn holds its result.
	stable  bool
	readsIn check.Txn
}

type readResult struct {
	list    []int64
	exists  bool
	version []byte
}

// next starts the client's next operation.
func (c *client) next() {
	w := c.w
	if w.stopping {
		return
	}
	if w.quiescing {
		w.parked = append(w.parked, c) // resumed after the graph check
		return
	}
	c.op++
	op := c.op
	c.mops, c.reads, c.sent = nil, map[int64]readResult{}, false
	c.stable, c.readsIn = w.cfg.AnnounceEvery == 0, nil
	if w.rng.Float64() < w.cfg.Programs {
		// A chain_read program: a read of every key, across shards.
		for k := 0; k < w.cfg.Keys; k++ {
			c.mops = append(c.mops, check.ReadNil(int64(k)))
		}
		c.inv = append(check.Txn(nil), c.mops...)
		w.rec.Invoke(c.id, check.FTxn, c.inv, w.now)
		w.stats.Ops++
		w.stats.Programs++
		g := w.rng.IntN(w.cfg.Gatekeepers)
		w.toServer(c.id, func(s *server) { w.startProgram(s, g, c, op) })
		w.after(timeout, func() { c.timeout(op) })
		return
	}
	n := 1 + w.rng.IntN(3)
	readOnly := w.rng.Float64() < w.cfg.ReadOnly
	for i := 0; i < n; i++ {
		k := int64(w.rng.IntN(w.cfg.Keys))
		if readOnly || w.rng.IntN(2) == 0 {
			c.mops = append(c.mops, check.ReadNil(k))
		} else {
			w.nextVal++
			c.mops = append(c.mops, check.Append(k, w.nextVal))
		}
	}
	c.inv = append(check.Txn(nil), c.mops...)
	w.rec.Invoke(c.id, check.FTxn, c.inv, w.now)
	w.stats.Ops++
	keys := c.keys()
	c.waiting = len(keys)
	g := w.rng.IntN(w.cfg.Gatekeepers)
	w.toServer(c.id, func(s *server) { w.begin(s, g, c, op, keys) })
	w.after(timeout, func() { c.timeout(op) })
}

// keys are the distinct keys the transaction touches, in first-use order.
func (c *client) keys() []int64 {
	var ks []int64
	seen := map[int64]bool{}
	for _, m := range c.mops {
		if !seen[m.Key] {
			seen[m.Key] = true
			ks = append(ks, m.Key)
		}
	}
	return ks
}

// begin: gatekeeper g stamps the snapshot and sends a read task to each
// key's shard.
func (w *world) begin(s *server, g int, c *client, op int, keys []int64) {
	w.syncThen(s, g, func() { w.stampReads(s, g, c, op, keys) })
}

func (w *world) stampReads(s *server, g int, c *client, op int, keys []int64) {
	t := w.readStamp(s, g)
	w.answer(s, g, t, func() { w.toClient(c.id, func() { c.snapshotStable(op) }) })
	for _, k := range keys {
		task := &readTask{w: w, s: s, c: c, op: op, key: k}
		w.submitRead(s, gkNode(g), int(s.dir.ShardOf(vertexOf(k))), t, task)
	}
}

// submitRead sends a read task to shard i (from node from).
func (w *world) submitRead(s *server, from, i int, t vclock.Stamp, task *readTask) {
	n := s.shards[i]
	w.after(w.linkDelay(from, shardID(n.id)), func() {
		if w.srv != s {
			return
		}
		if err := n.core.Submit(shard.Task{Stamp: t, Payload: task}); err != nil {
			panic(fmt.Sprintf("sim: submit: %v", err))
		}
		w.stepShard(s, n)
	})
}

// readTask reads one key at the snapshot on its shard.
type readTask struct {
	w    *world
	s    *server
	c    *client
	op   int
	key  int64
	hops int // forwarded by shards whose unit had moved (moves.go)
}

func (r *readTask) run(n *shardNode, t vclock.Stamp) error {
	r.w.stats.Reads++
	ord := &shard.ReadOrderer{Res: n.core.Resolver(), T: t}
	h := vertexOf(r.key)
	if to := r.w.locate(r.s, n, h, t, ord); to != n.id {
		if ord.Err != nil {
			return ord.Err
		}
		r.hops++
		if r.hops > forwardsMax {
			panic(fmt.Sprintf("sim: read of %s at %s forwarded %d times", h, t, r.hops))
		}
		r.w.stats.Forwards++
		r.w.submitRead(r.s, shardID(n.id), to, t, r)
		return nil
	}
	res := readResult{version: txn.EncodeStamp(n.part.Graph.LastWrite(h, t, ord))}
	if v, ok := n.part.Graph.View(h, t, ord); ok {
		res.exists = true
		if p, ok := v.Prop(propKey); ok {
			for _, e := range p.List() {
				res.list = append(res.list, e.Int())
			}
		}
	}
	if ord.Err != nil {
		return ord.Err
	}
	c, op, k := r.c, r.op, r.key
	r.w.toClient(c.id, func() { c.readDone(op, k, res) })
	return nil
}

func (c *client) readDone(op int, k int64, res readResult) {
	if op != c.op {
		return
	}
	if _, dup := c.reads[k]; dup {
		return
	}
	c.reads[k] = res
	c.waiting--
	if c.waiting > 0 {
		return
	}
	// Fill in the reads: a read after an append to the same key in this
	// transaction sees the append (the transaction's own write).
	own := map[int64][]int64{}
	out := make(check.Txn, len(c.mops))
	var reads []txn.Read
	var ops []txn.Op
	for _, k := range c.keys() {
		reads = append(reads, txn.Read{Vertex: vertexOf(k), Version: c.reads[k].version})
		own[k] = append([]int64(nil), c.reads[k].list...)
	}
	for i, m := range c.mops {
		if m.F == check.MopAppend {
			own[m.Key] = append(own[m.Key], m.Value)
			out[i] = m
			continue
		}
		out[i] = check.ReadList(m.Key, append([]int64(nil), own[m.Key]...))
	}
	created := map[int64]bool{}
	for _, m := range c.mops {
		if m.F != check.MopAppend {
			continue
		}
		if !c.reads[m.Key].exists && !created[m.Key] {
			created[m.Key] = true
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: vertexOf(m.Key)})
		}
	}
	for _, k := range c.keys() {
		if l := own[k]; len(l) > len(c.reads[k].list) {
			vals := make([]value.Value, len(l))
			for i, x := range l {
				vals[i] = value.I64(x)
			}
			ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: vertexOf(k), Key: propKey, Value: value.ListOf(vals...)})
		}
	}
	w := c.w
	if len(ops) == 0 {
		if !c.stable {
			c.readsIn = out // until the gatekeeper says the snapshot is stable
			return
		}
		c.finish(check.OK, out)
		return
	}
	c.sent = true
	op = c.op
	g := w.rng.IntN(w.cfg.Gatekeepers)
	w.toServer(c.id, func(s *server) { w.commit(s, g, c, op, reads, ops, out) })
}

// commit runs the engine's commit path at gatekeeper g: stamp, execute on
// a store transaction, order after the last accesses (Kronos when
// concurrent) inside the commit section, then, in a later event, resolve
// and hand the writes to the shards; the client hears back once they are
// handed (gatekeeper.Core.Acked).
func (w *world) commit(s *server, g int, c *client, op int, reads []txn.Read, ops []txn.Op, out check.Txn) {
	w.syncThen(s, g, func() { w.commitStamped(s, g, c, op, reads, ops, out) })
}

func (w *world) commitStamped(s *server, g int, c *client, op int, reads []txn.Read, ops []txn.Op, out check.Txn) {
	reply := func(t check.Type) { w.toClient(c.id, func() { c.committed(op, t, out) }) }
	st, err := s.st.Begin()
	if err != nil {
		panic(err)
	}
	ts, err := s.gks[g].BeginCommit()
	if err != nil {
		st.Discard()
		reply(check.Fail) // overloaded: nothing happened
		return
	}
	res, err := txn.Exec{Shards: uint32(s.nshards), Dir: s.dir}.Run(st, ts, reads, ops)
	if err != nil {
		st.Discard()
		w.aborted(s, g, ts, err, reply)
		return
	}
	// As the engine does: the shards it writes are declared before the
	// durable commit, so NOPs to others pass it.
	declared := txn.ShardsOf(res.Ops)
	if w.cfg.PlantBadDeclare {
		declared = nil
	}
	if err := s.gks[g].Declare(ts, declared); err != nil {
		panic(err)
	}
	w.dispatch(s, g)
	p := &pendingCommit{s: s, g: g, st: st, ts: ts, res: res, reply: reply, dir: s.dir}
	if w.cfg.ReconfigEvery == 0 && w.cfg.CommitDelayMax == 0 {
		w.critical(p) // in the same event, as before reconfigurations existed
		return
	}
	// On its way to the store: an epoch change may come first (reconfig).
	w.addPending(s, p)
	w.after(int64(w.rng.IntN(max(w.cfg.DelayMax, w.cfg.CommitDelayMax))), func() {
		if !p.zombie {
			w.critical(p)
		}
	})
}

// pendingCommit is a commit executed on its store transaction and declared
// to its gatekeeper whose critical section has not run yet.
type pendingCommit struct {
	s     *server
	g     int
	st    store.Txn
	ts    vclock.Stamp
	res   *txn.Result
	dir   *txn.Directory // the directory the execution routed by
	reply func(check.Type)
	// done: the critical section ran (or the process died); zombie: the
	// epoch changed first and left it to the fence (reconfig).
	done, zombie bool
}

// critical is the commit's critical section on the store: the epoch fence
// (unless PlantNoFence), the order after the last accesses (Kronos when
// concurrent), durability; then, in a later event, the hand-off to the
// shards, and the client hears back once it is handed
// (gatekeeper.Core.Acked). A zombie — a commit of an epoch that has ended
// — runs the same code: the fence refuses it.
func (w *world) critical(p *pendingCommit) {
	if p.done {
		return
	}
	p.done = true
	s, g, ts := p.s, p.g, p.ts
	if w.st != s.st {
		return // the process crashed with it: nothing reached the store
	}
	err := p.st.Commit(ctx, func(cr store.Critical) error {
		if !w.cfg.PlantNoFence {
			if err := gatekeeper.CheckFence(cr, s.epoch); err != nil {
				return err
			}
		}
		if w.cfg.PlantNoUnitCheck {
			// Trust the routing directory as if no move were in flight.
			return gatekeeper.OrderCommit(ctx, s.oracle, cr, ts, p.res, p.dir, true)
		}
		return gatekeeper.OrderCommit(ctx, s.oracle, cr, ts, p.res, p.dir, s.movesInFlight == 0 && s.dir == p.dir)
	})
	p.st.Discard()
	if err != nil {
		w.aborted(s, g, ts, err, p.reply)
		return
	}
	w.stats.Commits++
	if w.srv != s {
		w.stats.ZombiesLanded++ // only without the fence: durable, yet no shard of the new epoch will see it
	}
	// The commit is durable; the hand-off to the shards is a later event,
	// so a crash or an epoch change can fall between them (the client then
	// never hears), and so can other commits' whole lives (a gatekeeper
	// goroutine preempted before its resolve, ResolveDelayMax).
	w.after(w.resolveDelay(), func() {
		if w.srv != s {
			return
		}
		s.acks[g][ts.Seq()] = func() { p.reply(check.OK) }
		if err := s.gks[g].Resolve(ts, p.res.Ops); err != nil {
			panic(err)
		}
		w.dispatch(s, g)
	})
}

// aborted resolves a commit that wrote nothing (an OCC abort, a retryable
// store error, or the epoch fence) and tells its client: a definite failure.
func (w *world) aborted(s *server, g int, ts vclock.Stamp, err error, reply func(check.Type)) {
	switch {
	case errors.Is(err, gatekeeper.ErrFenced):
		w.stats.Fenced++
	case errors.Is(err, txn.ErrAborted) || store.IsRetryable(err):
	default:
		panic(fmt.Sprintf("sim: commit: %v", err))
	}
	w.stats.Aborts++
	if err := s.gks[g].Resolve(ts, nil); err != nil {
		panic(err)
	}
	w.dispatch(s, g)
	reply(check.Fail)
}

// snapshotStable: every gatekeeper has merged the snapshot's stamp, so a
// read-only transaction may end.
func (c *client) snapshotStable(op int) {
	if op != c.op {
		return
	}
	c.stable = true
	if c.readsIn != nil {
		c.finish(check.OK, c.readsIn)
	}
}

func (c *client) committed(op int, t check.Type, out check.Txn) {
	if op != c.op {
		return
	}
	if t == check.OK {
		c.finish(check.OK, out)
		return
	}
	c.finish(t, c.inv)
}

// timeout ends an operation that got no answer: indeterminate once its
// commit was sent, failed (nothing happened) before.
func (c *client) timeout(op int) {
	if op != c.op {
		return
	}
	if c.sent {
		c.finish(check.Info, c.inv)
		return
	}
	c.finish(check.Fail, c.inv)
}

func (c *client) finish(t check.Type, v check.Txn) {
	w := c.w
	w.rec.Complete(c.id, t, check.FTxn, v, w.now)
	switch t {
	case check.OK:
		w.stats.OK++
	case check.Fail:
		w.stats.Fail++
	default:
		w.stats.Info++
	}
	c.op++ // later replies to this operation are ignored
	c.done++
	w.after(int64(w.rng.IntN(5)), c.next)
}
