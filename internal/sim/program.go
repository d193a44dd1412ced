package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/shard"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Node programs in histories. The key vertices form a chain (k0 → k1 → …,
// created before the clients start), and the chain_read program walks it
// from k0, hop by hop across shards, emitting each vertex's list. Its
// result goes into the history as a read-only transaction reading every
// key, so the list-append checker holds it to the same rule as any read:
// it must equal the state at one point of the serial order, after
// everything acknowledged before it began.

const chainEdge = "next"

type chainParams struct {
	Start string `json:"start"`
}

type chainEmit struct {
	Handle string  `json:"handle"`
	List   []int64 `json:"list"`
}

type chainGather struct{ got []chainEmit }

func (g *chainGather) Add(e chainEmit) (bool, error) { g.got = append(g.got, e); return false, nil }
func (g *chainGather) Result() (any, error) {
	out := slices.Clone(g.got)
	slices.SortFunc(out, func(a, b chainEmit) int { return strings.Compare(a.Handle, b.Handle) })
	return out, nil
}

var chainRead = &nodeprog.Def[chainParams, struct{}, chainEmit]{
	ProgName: "chain_read",
	Parse: func(raw json.RawMessage) (*chainParams, error) {
		var p chainParams
		if err := nodeprog.DecodeParams("chain_read", raw, &p); err != nil {
			return nil, err
		}
		return &p, nil
	},
	Start: func(p *chainParams) []nodeprog.Hop { return []nodeprog.Hop{{To: p.Start}} },
	Step: func(c *nodeprog.Ctx, _ *chainParams, v nodeprog.Vertex, _ struct{}) error {
		e := chainEmit{Handle: v.Handle(), List: []int64{}}
		if p, ok := v.Prop(propKey); ok {
			for _, x := range p.List() {
				e.List = append(e.List, x.Int())
			}
		}
		c.Emit(e)
		v.Edges(func(ed nodeprog.Edge) bool {
			c.Hop(ed.Dst(), struct{}{})
			return true
		})
		return nil
	},
	Gather: func(*chainParams) nodeprog.GatherOf[chainEmit] { return &chainGather{} },
}

var registry = func() *nodeprog.Registry {
	r := nodeprog.Builtins()
	if err := r.Register(chainRead); err != nil {
		panic(err)
	}
	return r
}()

// setup creates the key vertices and the chain through gatekeeper 0 before
// the clients start, unless the store already holds them.
func (w *world) setup() error {
	s := w.srv
	st, err := s.st.Begin()
	if err != nil {
		return err
	}
	defer st.Discard()
	ts, err := s.gks[0].BeginCommit()
	if err != nil {
		return err
	}
	var ops []txn.Op
	for k := 0; k < w.cfg.Keys; k++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: vertexOf(int64(k))})
	}
	for k := 0; k+1 < w.cfg.Keys; k++ {
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: vertexOf(int64(k)), Edge: chainEdge, Dst: vertexOf(int64(k + 1))})
	}
	res, err := txn.Exec{Shards: uint32(s.nshards), Dir: s.dir}.Run(st, ts, nil, ops)
	if err == nil {
		err = st.Commit(ctx, func(cr store.Critical) error {
			if err := gatekeeper.CheckFence(cr, s.epoch); err != nil {
				return err
			}
			return gatekeeper.OrderAfterAccess(ctx, s.oracle, cr, ts, res.Access)
		})
	}
	if err != nil {
		return fmt.Errorf("sim: setup: %w", err)
	}
	if err := s.gks[0].Resolve(ts, res.Ops); err != nil {
		return err
	}
	w.dispatch(s, 0)
	return nil
}

// progTask is one batch of a program waiting to run on a shard.
type progTask struct {
	run   *progRun
	batch nodeprog.Batch
}

// progRun is a program in flight at its gatekeeper.
type progRun struct {
	w      *world
	s      *server
	c      *client
	op     int
	id     nodeprog.ProgID
	gk     int
	stamp  vclock.Stamp
	coord  *nodeprog.Coordinator
	shards map[int]bool
	done   bool
}

// startProgram is a client's chain_read: stamped at gatekeeper g, run by
// the shards' runners, gathered at g.
func (w *world) startProgram(s *server, g int, c *client, op int) {
	w.syncThen(s, g, func() {
		t := w.readStamp(s, g)
		s.nextProg++
		id := nodeprog.ProgID(uint64(g)<<48 | s.nextProg)
		coord, batches, err := nodeprog.NewCoordinator(registry, id, "chain_read",
			json.RawMessage(`{"start":"`+vertexOf(0)+`"}`), w.shardOf, nodeprog.CoordinatorConfig{})
		if err != nil {
			panic(err)
		}
		r := &progRun{w: w, s: s, c: c, op: op, id: id, gk: g, stamp: t, coord: coord, shards: map[int]bool{}}
		r.send(gkNode(g), batches)
	})
}

// shardOf places h by the current process's directory (the programs of an
// older configuration's server are dropped with it).
func (w *world) shardOf(h string) int { return int(w.srv.dir.ShardOf(h)) }

// send delivers batches to their shards as tasks at the program's stamp.
func (r *progRun) send(from int, batches []nodeprog.Batch) {
	w, s := r.w, r.s
	for _, b := range batches {
		r.shards[b.Shard] = true
		n := s.shards[b.Shard]
		task := &progTask{run: r, batch: b}
		w.after(w.linkDelay(from, shardID(b.Shard)), func() {
			if w.srv != s {
				return
			}
			if err := n.core.Submit(shard.Task{Stamp: r.stamp, Payload: task}); err != nil {
				panic(fmt.Sprintf("sim: submit: %v", err))
			}
			w.stepShard(s, n)
		})
	}
}

// runBatch runs one batch on shard n; the report goes back to the
// gatekeeper and the new batches on to their shards.
func (t *progTask) runBatch(n *shardNode, at vclock.Stamp) error {
	r, w := t.run, t.run.w
	ord := &shard.ReadOrderer{Res: n.core.Resolver(), T: at}
	lookup := func(h string) (nodeprog.Vertex, bool) {
		v, ok := n.part.Graph.View(h, at, ord)
		if !ok {
			return nil, false
		}
		return shard.ProgramVertex(v), true
	}
	// A hop to a vertex whose unit was not here at the program's stamp
	// leaves as a batch for the shard that had it, even when the
	// directory now places it here (the runner passes hops on too).
	shardOf := func(h string) int { return w.locate(r.s, n, h, at, ord) }
	for _, h := range t.batch.Hops {
		if shardOf(h.To) != n.id {
			w.stats.Forwards++ // arrived here, passed on by the runner
		}
	}
	out, rep, err := n.runner.Run([]nodeprog.Batch{t.batch}, lookup, shardOf)
	if ord.Err != nil {
		return ord.Err
	}
	if errors.Is(err, nodeprog.ErrFinished) {
		return nil
	}
	s := r.s
	w.after(w.linkDelay(shardID(n.id), gkNode(r.gk)), func() {
		if w.srv == s {
			r.report(rep)
		}
	})
	r.send(shardID(n.id), out)
	return nil
}

// report is the coordinator taking a shard's report; when the program is
// done the client hears the result and the shards release its state.
func (r *progRun) report(rep nodeprog.Report) {
	if r.done {
		return
	}
	w := r.w
	err := r.coord.Step(rep)
	if err == nil && !r.coord.Done() {
		return
	}
	r.done = true
	for sh := range r.shards {
		n := r.s.shards[sh]
		w.after(w.linkDelay(gkNode(r.gk), shardID(sh)), func() {
			if w.srv == r.s {
				n.runner.Finish(r.id)
			}
		})
	}
	c, op := r.c, r.op
	if err != nil {
		panic(fmt.Sprintf("sim: chain_read failed: %v", err))
	}
	res, err := r.coord.Result()
	if err != nil {
		panic(fmt.Sprintf("sim: chain_read result: %v", err))
	}
	got := res.([]chainEmit)
	w.answer(r.s, r.gk, r.stamp, func() { w.toClient(c.id, func() { c.programDone(op, got) }) })
}

// programDone records the program's result as reads of every key.
func (c *client) programDone(op int, got []chainEmit) {
	if op != c.op {
		return
	}
	lists := map[int64][]int64{}
	for _, e := range got {
		k, err := strconv.ParseInt(strings.TrimPrefix(e.Handle, "k"), 10, 64)
		if err != nil {
			panic(err)
		}
		lists[k] = e.List
	}
	out := make(check.Txn, 0, len(c.mops))
	for _, m := range c.mops {
		l, ok := lists[m.Key]
		if !ok {
			// The walk did not reach the key: the chain is created before
			// any client starts, so this is a wrong answer. Recording a
			// read of an empty list makes the checker say so unless the
			// key really was empty.
			l = []int64{}
		}
		out = append(out, check.ReadList(m.Key, l))
	}
	c.w.stats.ProgramsOK++
	c.finish(check.OK, out)
}
