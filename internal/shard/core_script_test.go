package shard

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/scripttest"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// TestCoreScripts runs the scripts in testdata/core on the real Core, with
// the real pieces the shell gives it: Apply executes entries on a graph
// partition (Apply, this package), Run reads the partition at the task's
// stamp through a ReadOrderer, and the order resolver asks an in-process
// Kronos (order.Local). Each case is a command, "----", and what the core
// answered, followed by the effects of the core's Step that every input
// command is followed by, in order: "apply ..." for a write executed, "run
// ..." for a task run (with what it read), "ask gkN ..." for a NOP request.
// -rewrite regenerates the outputs: review the diff like code.
//
// A stamp is gkO@eE:[c0,...] (Stamp.String's form), a clock eE:[c0,...].
// Operations: +v creates vertex v, -v deletes it, v.k=x sets property k
// (an integer if x parses as one), v/e->w creates edge e from v to w.
// Reads and node-program batches (a program's hop to this shard) are the
// same thing to the core: a Task at a stamp. Commands:
//
//	new [gatekeepers=G] [reorder=N] [tasks=N]   a fresh shard (defaults 2, 4, 4)
//	entry GK SEQ CLOCK nop | OP...   Deliver gatekeeper GK's entry SEQ stamped CLOCK
//	complete GK CLOCK          Complete: GK will send nothing at or before CLOCK
//	read NAME STAMP            Submit a task at STAMP: it reads every vertex
//	state                      the core's queues and counters (Core.String)
//	positions                  Positions: per queue, a stamp no later than what it will run
//	gc STAMP                   collect the partition at watermark STAMP; the versions freed
//	partition                  the partition's counts (graph.Counts)
//	kronos A B                 the order Kronos holds for two stamps (query, no assign)
func TestCoreScripts(t *testing.T) {
	for _, file := range scripttest.Files(t, "testdata/core/*.txt") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			scripttest.Run(t, file, newCoreScript(t))
		})
	}
}

// TestCoreScriptsPlanted: every expected output of a script, altered, is
// reported, so the scripts above can fail.
func TestCoreScriptsPlanted(t *testing.T) {
	scripttest.Planted(t, "testdata/core/order.txt", newCoreScript)
}

type coreScript struct {
	t      testing.TB
	c      *Core
	oracle *order.Local
	g      *graph.Graph
	alias  *graph.AliasIndex
	out    []string // effects of the current command
}

func newCoreScript(t testing.TB) func(string) string {
	s := &coreScript{t: t}
	s.reset(2, 4, 4)
	return s.run
}

func (s *coreScript) reset(gks, reorder, tasks int) {
	o, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		s.t.Fatal(err)
	}
	s.oracle, s.g, s.alias = o, graph.New(graph.DefaultConfig()), graph.NewAliasIndex(graph.DefaultConfig())
	s.c = New(Config{Gatekeepers: gks, ReorderMax: reorder, TasksMax: tasks}, order.NewResolver(o, 1000))
	s.c.Apply = func(e gatekeeper.Entry) error {
		ops := make([]string, len(e.Ops))
		for i, op := range e.Ops {
			ops[i] = formatOp(op)
		}
		s.out = append(s.out, fmt.Sprintf("apply %s: %s", e.Stamp, strings.Join(ops, " ")))
		return Apply(s.g, s.alias, e.Ops, e.Stamp)
	}
	s.c.Run = func(tk Task) error {
		ord := &ReadOrderer{Res: s.c.Resolver(), T: tk.Stamp}
		var vs []string
		for v := range s.g.Vertices(tk.Stamp, ord) {
			vs = append(vs, formatVertex(v))
		}
		if len(vs) == 0 {
			vs = []string{"nothing"}
		}
		s.out = append(s.out, fmt.Sprintf("run %s at %s: %s", tk.Payload, tk.Stamp, strings.Join(vs, " ")))
		return ord.Err
	}
}

func (s *coreScript) run(cmd string) string {
	f := strings.Fields(cmd)
	s.out = nil
	out := s.command(cmd, f)
	switch f[0] {
	case "entry", "complete", "read":
		if err := s.c.Step(context.Background()); err != nil {
			s.out = append(s.out, "step error: "+err.Error())
		}
		for _, r := range s.c.NopRequests() {
			s.out = append(s.out, fmt.Sprintf("ask gk%d for a NOP after %s", r.GK, r.Clock))
		}
	}
	return strings.Join(append([]string{out}, s.out...), "\n")
}

func (s *coreScript) command(cmd string, f []string) string {
	arg := func(i int) string {
		if i >= len(f) {
			s.t.Fatalf("%q: missing argument %d", cmd, i)
		}
		return f[i]
	}
	num := func(i int) uint64 {
		n, err := strconv.ParseUint(arg(i), 10, 64)
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		return n
	}
	clock := func(i int) vclock.Clock {
		c, err := vclock.Parse(arg(i))
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		return c
	}
	switch f[0] {
	case "new":
		return s.newCore(cmd, f[1:])
	case "entry":
		e := gatekeeper.Entry{GK: uint32(num(1)), Seq: num(2)}
		e.Stamp = vclock.Stamp{Clock: clock(3), Owner: e.GK}
		if arg(4) == "nop" {
			e.Nop = true
		} else {
			for _, a := range f[4:] {
				e.Ops = append(e.Ops, s.parseOp(cmd, a))
			}
		}
		if err := s.c.Deliver(e); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "complete":
		s.c.Complete(uint32(num(1)), clock(2))
		return "ok"
	case "read":
		if err := s.c.Submit(Task{Stamp: s.stamp(cmd, arg(2)), Payload: arg(1)}); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "state":
		return s.c.String()
	case "positions":
		var ps []string
		for i, p := range s.c.Positions(make([]vclock.Stamp, len(s.c.q))) {
			if p.IsZero() {
				ps = append(ps, fmt.Sprintf("gk%d none", i))
				continue
			}
			ps = append(ps, fmt.Sprintf("gk%d %s", i, p))
		}
		return strings.Join(ps, "\n")
	case "gc":
		return fmt.Sprintf("freed %d", s.g.Collect(s.stamp(cmd, arg(1))))
	case "partition":
		st := s.g.Counts()
		return fmt.Sprintf("vertices %d, edges %d, versions %d, tombstones %d, handles %d, stamps %d",
			st.Vertices, st.Edges, st.Versions, st.Tombstones, st.Handles, st.Stamps)
	case "kronos":
		o, err := s.oracle.Query(s.stamp(cmd, arg(1)), s.stamp(cmd, arg(2)))
		if err != nil {
			return "error: " + err.Error()
		}
		return o.String()
	}
	s.t.Fatalf("unknown command %q", cmd)
	return ""
}

func (s *coreScript) newCore(cmd string, opts []string) string {
	gks, reorder, tasks := 2, 4, 4
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			s.t.Fatalf("%q: %v", cmd, err)
		}
		switch k {
		case "gatekeepers":
			gks = n
		case "reorder":
			reorder = n
		case "tasks":
			tasks = n
		default:
			s.t.Fatalf("%q: unknown option %q", cmd, o)
		}
	}
	s.reset(gks, reorder, tasks)
	return fmt.Sprintf("shard 0 of %d gatekeepers, reorder %d, tasks %d", gks, reorder, tasks)
}

// stamp parses gkO@eE:[...].
func (s *coreScript) stamp(cmd, a string) vclock.Stamp {
	owner, c, ok := strings.Cut(strings.TrimPrefix(a, "gk"), "@")
	if !ok || !strings.HasPrefix(a, "gk") {
		s.t.Fatalf("%q: stamp %q is not gkO@eE:[...]", cmd, a)
	}
	o, err := strconv.ParseUint(owner, 10, 32)
	if err != nil {
		s.t.Fatalf("%q: %v", cmd, err)
	}
	cl, err := vclock.Parse(c)
	if err != nil {
		s.t.Fatalf("%q: %v", cmd, err)
	}
	return vclock.Stamp{Clock: cl, Owner: uint32(o)}
}

func (s *coreScript) parseOp(cmd, a string) txn.ShardOp {
	switch {
	case strings.HasPrefix(a, "+"):
		return txn.ShardOp{Kind: txn.OpCreateVertex, Vertex: a[1:]}
	case strings.HasPrefix(a, "-"):
		return txn.ShardOp{Kind: txn.OpDeleteVertex, Vertex: a[1:]}
	case strings.Contains(a, "->"):
		src, dst, _ := strings.Cut(a, "->")
		v, e, ok := strings.Cut(src, "/")
		if ok {
			return txn.ShardOp{Kind: txn.OpCreateEdge, Vertex: v, Edge: e, Dst: dst}
		}
	case strings.Contains(a, "="):
		lhs, x, _ := strings.Cut(a, "=")
		v, k, ok := strings.Cut(lhs, ".")
		if ok {
			val := value.Str(x)
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				val = value.I64(n)
			}
			return txn.ShardOp{Kind: txn.OpSetVertexProp, Vertex: v, Key: k, Value: val}
		}
	}
	s.t.Fatalf("%q: operation %q is not +v, -v, v.k=x or v/e->w", cmd, a)
	return txn.ShardOp{}
}

func formatOp(op txn.ShardOp) string {
	switch op.Kind {
	case txn.OpCreateVertex:
		return "+" + op.Vertex
	case txn.OpDeleteVertex:
		return "-" + op.Vertex
	case txn.OpCreateEdge:
		return fmt.Sprintf("%s/%s->%s", op.Vertex, op.Edge, op.Dst)
	case txn.OpSetVertexProp:
		return fmt.Sprintf("%s.%s=%s", op.Vertex, op.Key, op.Value)
	}
	return fmt.Sprintf("op%d(%s)", op.Kind, op.Vertex)
}

// formatVertex prints a vertex as read: v(k=x e->w), properties by key,
// then edges by handle.
func formatVertex(v graph.VertexView) string {
	var fs []string
	for k, x := range v.Props() {
		fs = append(fs, fmt.Sprintf("%s=%s", k, x))
	}
	slices.Sort(fs)
	var es []string
	for e := range v.Edges() {
		es = append(es, fmt.Sprintf("%s->%s", e.Handle(), e.Dst()))
	}
	slices.Sort(es)
	return fmt.Sprintf("%s(%s)", v.Handle(), strings.Join(append(fs, es...), " "))
}
