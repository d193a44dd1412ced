package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/nodeprog"
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
// the clients start, running the world until the commit is handed off.
func (w *world) setup() error {
	s := w.srv
	var ops []txn.Op
	for k := 0; k < w.cfg.Keys; k++ {
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: vertexOf(int64(k))})
	}
	for k := 0; k+1 < w.cfg.Keys; k++ {
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: vertexOf(int64(k)), Edge: chainEdge, Dst: vertexOf(int64(k + 1))})
	}
	for s.leases != nil && !s.leases[0].MayServe() { // the first grant (lease.go)
		if !w.step() {
			return errors.New("sim: setup: no lease was granted")
		}
	}
	done := false
	var err error
	s.gks[0].Commit(ctx, nil, ops, nil, func(_ *txn.Result, _ vclock.Stamp, e error) { done, err = true, e })
	for !done {
		if !w.step() {
			return errors.New("sim: setup: the commit never finished")
		}
	}
	if err != nil {
		return fmt.Errorf("sim: setup: %w", err)
	}
	return nil
}

// startProgram is a client's chain_read, coordinated by gatekeeper g's
// shell (stamped at a read point or fresh, its batches run by the shards'
// runners, gathered and answered there).
func (w *world) startProgram(s *server, g int, c *client, op int) {
	if s.gkDown(g) {
		return // lost with the process
	}
	if s.gks[g].Serving() != nil {
		w.refuse(c, op, false)
		return
	}
	params := json.RawMessage(`{"start":"` + vertexOf(0) + `"}`)
	comp, err := registry.Compile("chain_read", params)
	if err != nil {
		panic(err)
	}
	_, err = s.gks[g].RunProgram("chain_read", comp, params, nil, func(res any, err error) {
		if errors.Is(err, nodeprog.ErrSnapshotTooOld) {
			w.stats.TooOld++
			w.toClient(c.id, func() { c.snapshotTooOld(op) })
			return
		}
		if err != nil {
			panic(fmt.Sprintf("sim: chain_read failed: %v", err))
		}
		got := res.([]chainEmit)
		if s.gks[g].Serving() != nil {
			w.refuse(c, op, false)
			return
		}
		w.toClient(c.id, func() { c.programDone(op, got) })
	})
	if err != nil {
		panic(fmt.Sprintf("sim: chain_read refused: %v", err))
	}
}

// shardOf places h by the current process's directory.
func (w *world) shardOf(h string) int { return int(w.srv.dir.ShardOf(h)) }

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
