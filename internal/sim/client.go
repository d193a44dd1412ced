package sim

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/coord"
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
	// chase are the keys of its last acknowledged commit it reads next, at
	// once (ReadAfterAck); commitGK is the gatekeeper that commit went to.
	chase    []int64
	commitGK int
	// Cluster mode: a read-only transaction ends only when its gatekeeper
	// says its snapshot is stable (answer); readsIn holds its result.
	stable  bool
	readsIn check.Txn
	// With leases (lease.go), a pinned client sends to the server it last
	// reached (srv) while that one's processes run, even after its epoch
	// ended, until a gatekeeper there refuses it.
	pinned bool
	srv    *server
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
	if c.chase != nil {
		c.readAfterAck(op)
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

// readAfterAck starts a read-only transaction of the keys the client's
// acknowledged commit appended to (c.chase), through another gatekeeper
// than the commit's.
func (c *client) readAfterAck(op int) {
	w := c.w
	for _, k := range c.chase {
		c.mops = append(c.mops, check.ReadNil(k))
	}
	c.chase = nil
	c.inv = append(check.Txn(nil), c.mops...)
	w.rec.Invoke(c.id, check.FTxn, c.inv, w.now)
	w.stats.Ops++
	w.stats.ReadsAfterAck++
	keys := c.keys()
	c.waiting = len(keys)
	g := c.commitGK
	if w.cfg.Gatekeepers > 1 {
		g = (g + 1 + w.rng.IntN(w.cfg.Gatekeepers-1)) % w.cfg.Gatekeepers
	}
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

// begin: gatekeeper g stamps the snapshot (its shell: a read point, or a
// fresh stamp after its sync) and sends a read task to each key's shard;
// the client may end a read-only transaction once the gatekeeper says the
// snapshot may be answered (at once in one process; with PeerAck once
// every peer merged it).
func (w *world) begin(s *server, g int, c *client, op int, keys []int64) {
	if s.gkDown(g) {
		return // lost with the process
	}
	if s.gks[g].Serving() != nil {
		w.refuse(c, op, false)
		return
	}
	s.gks[g].StampRead(func(t vclock.Stamp, key uint64) {
		s.gks[g].EndRead(key) // the simulation collects no garbage
		s.gks[g].Answer(t, func() {
			if s.gks[g].Serving() != nil {
				w.refuse(c, op, false)
				return
			}
			w.toClient(c.id, func() { c.snapshotStable(op) })
		})
		for _, k := range keys {
			task := &readTask{w: w, s: s, c: c, op: op, key: k}
			w.submitRead(s, gkNode(g), int(s.dirOf(g).ShardOf(vertexOf(k))), t, task)
		}
	})
}

// submitRead sends a read task to shard i (from node from): a read at
// stamp t on the shard's shell, by the key's name, so that a shard whose
// unit moved away at t forwards it.
func (w *world) submitRead(s *server, from, i int, t vclock.Stamp, task *readTask) {
	n := s.shards[i]
	w.link(s, from, shardID(n.id), func() {
		// Registered at the snapshot's gatekeeper while it runs, as the
		// engine's reads at a snapshot are (refused once the watermark
		// passed the snapshot).
		g := s.gks[t.Owner]
		s.nextRead++
		key := 1<<63 | s.nextRead
		if !g.HoldRead(t, key, s.readable) {
			task.tooOld()
			return
		}
		h := vertexOf(task.key)
		var res readResult
		n.Push(shard.ReadMsg{Stamp: t, Name: h, Fn: func(r *shard.Reader) { res = task.read(r, h, t) },
			W: &shard.Waiter{Then: func(err error) { g.EndRead(key); task.done(n, t, res, err) }}})
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

// tooOld answers the client that its snapshot is below the watermark.
func (r *readTask) tooOld() {
	r.w.stats.TooOld++
	c, op := r.c, r.op
	r.w.toClient(c.id, func() { c.snapshotTooOld(op) })
}

// snapshotTooOld fails the operation: nothing was written.
func (c *client) snapshotTooOld(op int) {
	if op == c.op {
		c.finish(check.Fail, c.inv)
	}
}

// read is the read itself, on the shard's graph at t.
func (r *readTask) read(rd *shard.Reader, h string, t vclock.Stamp) readResult {
	r.w.stats.Reads++
	g := rd.S.G
	res := readResult{version: txn.EncodeStamp(g.LastWrite(h, t, rd.Ord))}
	if v, ok := g.View(h, t, rd.Ord); ok {
		res.exists = true
		if p, ok := v.Prop(propKey); ok {
			for _, e := range p.List() {
				res.list = append(res.list, e.Int())
			}
		}
	}
	return res
}

// done answers the client, or follows a forwarding answer.
func (r *readTask) done(n *shardNode, t vclock.Stamp, res readResult, err error) {
	var mv *shard.MovedError
	switch {
	case errors.As(err, &mv):
		r.hops++
		if r.hops > forwardsMax {
			panic(fmt.Sprintf("sim: read of %s at %s forwarded %d times", vertexOf(r.key), t, r.hops))
		}
		r.w.stats.Forwards++
		r.w.submitRead(r.s, shardID(n.id), mv.Shard, t, r)
	case errors.Is(err, shard.ErrTooOld):
		r.tooOld()
	case err != nil:
		panic(fmt.Sprintf("sim: read of %s at %s: %v", vertexOf(r.key), t, err))
	default:
		// The answer goes through the snapshot's gatekeeper, which answers
		// only inside its lease.
		w, s, c, op, k := r.w, r.s, r.c, r.op, r.key
		if s.leases == nil && w.cfg.RoleFailEvery == 0 {
			w.toClient(c.id, func() { c.readDone(op, k, res) })
			return
		}
		w.link(s, shardID(n.id), gkNode(int(t.Owner)), func() {
			if s.gks[t.Owner].Serving() != nil {
				w.refuse(c, op, false)
				return
			}
			w.toClient(c.id, func() { c.readDone(op, k, res) })
		})
	}
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
	c.commitGK = g
	w.toServer(c.id, func(s *server) { w.commit(s, g, c, op, reads, ops, out) })
}

// commit runs the transaction through gatekeeper g's shell (the engine's
// commit path: stamp, execute on a store transaction, declare, the commit
// section with the epoch fence, the order after the last accesses and the
// directory check, resolve and hand-off); the client hears back once its
// writes are handed to the shards.
func (w *world) commit(s *server, g int, c *client, op int, reads []txn.Read, ops []txn.Op, out check.Txn) {
	reply := func(t check.Type) { w.toClient(c.id, func() { c.committed(op, t, out) }) }
	if s.gkDown(g) {
		return // lost with the process
	}
	// The shell asks the lease (ShellConfig.Serving) before it takes the
	// commit and before it acknowledges it.
	s.gks[g].Commit(ctx, reads, ops, func(vclock.Stamp) { w.durable(s) }, func(_ *txn.Result, _ vclock.Stamp, err error) {
		if err != nil {
			switch {
			case errors.Is(err, gatekeeper.ErrUnacknowledged):
				w.refuse(c, op, true) // durable, answered only inside the lease
				return
			case errors.Is(err, coord.ErrLeaseExpired):
				w.refuse(c, op, false)
				return
			}
			if errors.Is(err, store.ErrFailed) {
				// INTERNAL to the client (api.CodeOf): may have committed.
				reply(check.Info)
				return
			}
			if errors.Is(err, gatekeeper.ErrUnitMoved) && s.copies != nil && w.srv == s {
				s.reloadCopy(g) // routed by a stale copy: the client's retry goes by the store's
			}
			w.aborted(err)
			reply(check.Fail)
			return
		}
		reply(check.OK)
	})
}

// durable counts a commit whose commit section succeeded: a zombie's too
// (only without the fence: durable, yet no shard of the new epoch will see
// it).
func (w *world) durable(s *server) {
	w.stats.Commits++
	if w.srv != s {
		w.stats.ZombiesLanded++
	}
}

// pendingCommit is a commit section (of a commit or a move) a shell has
// reached and the simulation has not run yet: an epoch change may come
// first (reconfig.go).
type pendingCommit struct {
	s  *server
	fn func()
	// done: the critical section ran (or the process died); zombie: the
	// epoch changed first and left it to the fence (reconfig).
	done, zombie bool
}

// critical runs a commit section unless it ran, or its process crashed
// (nothing of it reached the store then). A zombie — a commit of an epoch
// that has ended — runs the same code: the fence refuses it.
func (w *world) critical(p *pendingCommit) {
	if p.done {
		return
	}
	p.done = true
	if w.st != p.s.st {
		return
	}
	p.fn()
}

// aborted counts a commit that wrote nothing (an OCC abort, a retryable
// store error, the epoch fence, too many in flight): a definite failure.
func (w *world) aborted(err error) {
	switch {
	case errors.Is(err, gatekeeper.ErrFenced):
		w.stats.Fenced++
	case errors.Is(err, gatekeeper.ErrOverloaded):
		return // refused before it was stamped
	case errors.Is(err, txn.ErrAborted) || store.IsRetryable(err):
	default:
		panic(fmt.Sprintf("sim: commit: %v", err))
	}
	w.stats.Aborts++
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
		if c.w.rng.Float64() < c.w.cfg.ReadAfterAck {
			// Read what it wrote at once, through another gatekeeper: the
			// real-time edge a stale read point or clock would break.
			for _, m := range c.mops {
				if m.F == check.MopAppend {
					c.chase = append(c.chase, m.Key)
				}
			}
		}
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
	if c.chase != nil {
		w.after(0, c.next)
		return
	}
	w.after(int64(w.rng.IntN(5)), c.next)
}
