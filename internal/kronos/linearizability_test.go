package kronos_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/testproc"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// A Porcupine linearizability check of the replicated service: three real
// weft processes (fsync on), concurrent clients creating events, assigning
// orders and querying them, and a nemesis that kill -9s a random replica
// (the leader half the time) and restarts it on the same data dir and port.
// The history is checked against a sequential model of the Kronos core.
//
// Each group of clients works in its own key space (its own events), and a
// key space is retired after linPoolMax creates, so porcupine checks many
// small independent histories (model.Partition) rather than one big one.

var (
	linDurationFlag = flag.Duration("kronos.lin.duration", 0,
		"workload duration of TestLinearizabilityKill9 (default 15s; also $WEFT_LIN_DURATION)")
	linSeedFlag = flag.Uint64("kronos.lin.seed", 0, "seed of TestLinearizabilityKill9's generator (0: from the clock)")
	linSyncFlag = flag.Bool("kronos.lin.sync", true,
		"run TestLinearizabilityKill9's replicas with --sync (false loses acknowledged log writes on kill -9)")
)

const (
	linGroups     = 4  // independent key spaces at a time
	linWorkers    = 3  // clients per key space
	linPoolMax    = 16 // creates per key space generation; the model's rows hold ≤ 64
	linOpTimeout  = 5 * time.Second
	linCheckLimit = 2 * time.Minute
)

func linDuration(t *testing.T) time.Duration {
	if *linDurationFlag > 0 {
		return *linDurationFlag
	}
	if s := os.Getenv("WEFT_LIN_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("WEFT_LIN_DURATION: %v", err)
		}
		return d
	}
	return 15 * time.Second
}

// ---- The sequential model ----

type linKind uint8

const (
	linCreate linKind = iota
	linAssign
	linQuery
)

// linKey names a key space: a group's generation.
type linKey struct{ group, gen int }

// linPair is one pair of an assign (all fields) or a query (A and B).
type linPair struct {
	A, B   uint64
	Before bool // assign: A → B requested, else B → A
	Must   bool
}

type linInput struct {
	Key   linKey
	Kind  linKind
	Count int // create
	Pairs []linPair
}

// linOutput is an operation's outcome. Unknown means the client could not
// tell (timeout, no leader): the operation may or may not have taken effect,
// and its return is placed at the end of the history.
type linOutput struct {
	Unknown bool
	IDs     []uint64          // create
	Results []kc.AssignResult // assign
	Orders  []kc.Order        // query
	Err     kc.Code           // an API error (assign and query): no effect; 0 if none
	Index   int               // MUST_CONFLICT: the pair
	Actual  kc.Order          // MUST_CONFLICT: the order the graph holds
}

// linState is the graph of one key space: its acknowledged events, in
// increasing id order, and the transitive closure of the orders assigned.
// States are values; every step copies what it changes.
type linState struct {
	ids   []uint64
	reach []uint64 // reach[i]>>j&1: ids[i] happens before ids[j]
}

func (s linState) index(id uint64) (int, bool) { return slices.BinarySearch(s.ids, id) }

func (s linState) order(i, j int) kc.Order {
	switch {
	case s.reach[i]>>j&1 == 1:
		return kc.Before
	case s.reach[j]>>i&1 == 1:
		return kc.After
	}
	return kc.Concurrent
}

// addEdge records src → dst (they are concurrent) in a copied closure.
func (s linState) addEdge(src, dst int) {
	add := s.reach[dst] | 1<<dst
	for k := range s.reach {
		if k == src || s.reach[k]>>src&1 == 1 {
			s.reach[k] |= add
		}
	}
}

// check validates a request's pairs as the core does: unknown events, then
// self pairs, change nothing.
func (s linState) check(ps []linPair) kc.Code {
	for _, p := range ps {
		_, okA := s.index(p.A)
		_, okB := s.index(p.B)
		if p.A == p.B {
			return kc.CodeSelfOrder
		}
		if !okA || !okB {
			return kc.CodeUnknownEvent
		}
	}
	return 0
}

// assign is the core's AssignOrder: every Must pair first, in request order,
// then every Prefer pair; a contradicted Must rejects the batch, a
// contradicted Prefer is reversed and reported.
func (s linState) assign(ps []linPair) (linState, linOutput) {
	if e := s.check(ps); e != 0 {
		return s, linOutput{Err: e}
	}
	ns := linState{ids: s.ids, reach: slices.Clone(s.reach)}
	res := make([]kc.AssignResult, len(ps))
	for _, must := range []bool{true, false} {
		for i, p := range ps {
			if p.Must != must {
				continue
			}
			ia, _ := ns.index(p.A)
			ib, _ := ns.index(p.B)
			want := kc.After
			if p.Before {
				want = kc.Before
			}
			switch cur := ns.order(ia, ib); {
			case cur == want:
				res[i] = kc.AssignResult{Order: cur}
			case cur == kc.Concurrent:
				if p.Before {
					ns.addEdge(ia, ib)
				} else {
					ns.addEdge(ib, ia)
				}
				res[i] = kc.AssignResult{Order: want}
			case p.Must:
				return s, linOutput{Err: kc.CodeMustConflict, Index: i, Actual: cur}
			default:
				res[i] = kc.AssignResult{Order: cur, Reversed: true}
			}
		}
	}
	return ns, linOutput{Results: res}
}

func (s linState) query(ps []linPair) linOutput {
	out := linOutput{Orders: make([]kc.Order, len(ps))}
	for i, p := range ps {
		if p.A == p.B {
			return linOutput{Err: kc.CodeSelfOrder}
		}
		ia, okA := s.index(p.A)
		ib, okB := s.index(p.B)
		if !okA || !okB {
			out.Orders[i] = kc.Unknown
			continue
		}
		out.Orders[i] = s.order(ia, ib)
	}
	return out
}

// create accepts new ids only: increasing, above every known id (ids are
// handed out in log order, and log order extends real-time order).
func (s linState) create(ids []uint64) (linState, bool) {
	if len(s.ids)+len(ids) > 64 {
		return s, false
	}
	last := uint64(0)
	if len(s.ids) > 0 {
		last = s.ids[len(s.ids)-1]
	}
	for _, id := range ids {
		if id <= last {
			return s, false
		}
		last = id
	}
	ns := linState{ids: append(slices.Clip(s.ids), ids...), reach: append(slices.Clip(s.reach), make([]uint64, len(ids))...)}
	return ns, true
}

func sameOutput(want, got linOutput) bool {
	if want.Err != got.Err {
		return false
	}
	if want.Err == kc.CodeMustConflict {
		return want.Index == got.Index && want.Actual == got.Actual
	}
	return slices.Equal(want.Results, got.Results) && slices.Equal(want.Orders, got.Orders)
}

func linStep(state, input, output any) (bool, any) {
	s, in, out := state.(linState), input.(linInput), output.(linOutput)
	switch in.Kind {
	case linCreate:
		if out.Unknown {
			return true, s // its ids, if any, are never named in this key space
		}
		if out.Err != 0 || len(out.IDs) != in.Count {
			return false, s
		}
		ns, ok := s.create(out.IDs)
		return ok, ns
	case linAssign:
		ns, want := s.assign(in.Pairs)
		if out.Unknown {
			// Took effect here; a linearization that places it last (its
			// return is the end of the history) covers "never happened".
			return true, ns
		}
		return sameOutput(want, out), ns
	case linQuery:
		return out.Unknown || sameOutput(s.query(in.Pairs), out), s
	}
	return false, s
}

// linModel is the sequential specification, one partition per key space.
var linModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[linKey][]porcupine.Operation{}
		var keys []linKey
		for _, op := range history {
			k := op.Input.(linInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return linState{} },
	Step: linStep,
	Equal: func(a, b any) bool {
		x, y := a.(linState), b.(linState)
		return slices.Equal(x.ids, y.ids) && slices.Equal(x.reach, y.reach)
	},
	Hash: func(state any) uint64 {
		s := state.(linState)
		h := fnv.New64a()
		var b [8]byte
		for _, v := range append(slices.Clip(s.ids), s.reach...) {
			for i := range b {
				b[i] = byte(v >> (8 * i))
			}
			h.Write(b[:])
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		var b strings.Builder
		switch in.Kind {
		case linCreate:
			fmt.Fprintf(&b, "create(%d)", in.Count)
		case linAssign:
			b.WriteString("assign(")
			for i, p := range in.Pairs {
				if i > 0 {
					b.WriteString(", ")
				}
				rel, st := "<", "must"
				if !p.Before {
					rel = ">"
				}
				if !p.Must {
					st = "prefer"
				}
				fmt.Fprintf(&b, "%s %d%s%d", st, p.A, rel, p.B)
			}
			b.WriteString(")")
		case linQuery:
			b.WriteString("query(")
			for i, p := range in.Pairs {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d?%d", p.A, p.B)
			}
			b.WriteString(")")
		}
		b.WriteString(" -> ")
		switch {
		case out.Unknown:
			b.WriteString("unknown")
		case out.Err == kc.CodeMustConflict:
			fmt.Fprintf(&b, "MUST_CONFLICT pair %d holds %s", out.Index, out.Actual)
		case out.Err != 0:
			b.WriteString(out.Err.String())
		case in.Kind == linCreate:
			fmt.Fprint(&b, out.IDs)
		case in.Kind == linAssign:
			fmt.Fprint(&b, out.Results)
		default:
			fmt.Fprint(&b, out.Orders)
		}
		return b.String()
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		var edges []string
		for i := range s.ids {
			for j := range s.ids {
				if s.reach[i]>>j&1 == 1 {
					edges = append(edges, fmt.Sprintf("%d<%d", s.ids[i], s.ids[j]))
				}
			}
		}
		return fmt.Sprintf("events %v; %s", s.ids, strings.Join(edges, " "))
	},
}

// checkHistory runs porcupine. On failure, if visualize, it writes the
// visualization of the first failing key spaces (a whole history's would run
// to hundreds of megabytes) to temporary files that outlive the test.
func checkHistory(t *testing.T, ops []porcupine.Operation, visualize bool) porcupine.CheckResult {
	t.Helper()
	res := porcupine.CheckOperationsTimeout(linModel, ops, linCheckLimit)
	if res == porcupine.Ok || !visualize {
		return res
	}
	shown := 0
	for _, part := range linModel.Partition(ops) {
		pres, info := porcupine.CheckOperationsVerbose(linModel, part, linCheckLimit)
		if pres == porcupine.Ok {
			continue
		}
		key := part[0].Input.(linInput).Key
		f, err := os.CreateTemp("", fmt.Sprintf("kronos-linearizability-g%d-%d-*.html", key.group, key.gen))
		if err == nil {
			err = porcupine.Visualize(linModel, info, f)
			f.Close()
		}
		if err != nil {
			t.Logf("key space %v: %s; no visualization: %v", key, pres, err)
		} else {
			t.Logf("key space %v (%d operations): %s; porcupine visualization: %s", key, len(part), pres, f.Name())
		}
		if shown++; shown == 3 {
			break
		}
	}
	return res
}

// ---- The model's own tests: the checker must be able to fail ----

func op(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func createOp(client int, call, ret int64, ids ...uint64) porcupine.Operation {
	return op(client, call, ret, linInput{Kind: linCreate, Count: len(ids)}, linOutput{IDs: ids})
}

func assignOp(client int, call, ret int64, out linOutput, ps ...linPair) porcupine.Operation {
	return op(client, call, ret, linInput{Kind: linAssign, Pairs: ps}, out)
}

func queryOp(client int, call, ret int64, a, b uint64, o kc.Order) porcupine.Operation {
	return op(client, call, ret, linInput{Kind: linQuery, Pairs: []linPair{{A: a, B: b}}}, linOutput{Orders: []kc.Order{o}})
}

func TestLinearizabilityModel(t *testing.T) {
	ok := func(rs ...kc.AssignResult) linOutput { return linOutput{Results: rs} }
	mustBefore := func(a, b uint64) linPair { return linPair{A: a, B: b, Before: true, Must: true} }
	preferBefore := func(a, b uint64) linPair { return linPair{A: a, B: b, Before: true} }
	before := kc.AssignResult{Order: kc.Before}
	unknown := linOutput{Unknown: true}
	const end = 1000 // return of an unknown operation: after everything
	// Events 1, 2 and 3 exist from time 3 on.
	setup := []porcupine.Operation{createOp(0, 0, 1, 1), createOp(0, 2, 3, 2, 3)}
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"concurrent before any assign", []porcupine.Operation{queryOp(1, 4, 5, 1, 2, kc.Concurrent)}, porcupine.Ok},
		{"ordered after an acknowledged assign", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			queryOp(1, 6, 7, 2, 1, kc.After)}, porcupine.Ok},
		// The deliberately broken history: a stale CONCURRENT after the
		// assign was acknowledged (a follower or deposed leader answering
		// from an old copy) must be rejected.
		{"stale concurrent after an acknowledged assign", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			queryOp(1, 6, 7, 1, 2, kc.Concurrent)}, porcupine.Illegal},
		{"concurrent while the assign is in flight", []porcupine.Operation{
			assignOp(0, 4, 8, ok(before), mustBefore(1, 2)),
			queryOp(1, 5, 6, 1, 2, kc.Concurrent)}, porcupine.Ok},
		{"transitive order", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before, before), mustBefore(1, 2), preferBefore(2, 3)),
			queryOp(1, 6, 7, 3, 1, kc.After)}, porcupine.Ok},
		{"lost transitive order", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before, before), mustBefore(1, 2), preferBefore(2, 3)),
			queryOp(1, 6, 7, 1, 3, kc.Concurrent)}, porcupine.Illegal},
		{"unknown assign seen", []porcupine.Operation{
			assignOp(0, 4, end, unknown, mustBefore(1, 2)),
			queryOp(1, 6, 7, 1, 2, kc.Before)}, porcupine.Ok},
		{"unknown assign not seen", []porcupine.Operation{
			assignOp(0, 4, end, unknown, mustBefore(1, 2)),
			queryOp(1, 6, 7, 1, 2, kc.Concurrent)}, porcupine.Ok},
		{"unknown assign seen then unseen", []porcupine.Operation{
			assignOp(0, 4, end, unknown, mustBefore(1, 2)),
			queryOp(1, 6, 7, 1, 2, kc.Before),
			queryOp(1, 8, 9, 1, 2, kc.Concurrent)}, porcupine.Illegal},
		{"must conflict reported", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			assignOp(0, 6, 7, linOutput{Err: kc.CodeMustConflict, Index: 0, Actual: kc.After}, mustBefore(2, 1))}, porcupine.Ok},
		{"must conflict ignored", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			assignOp(0, 6, 7, ok(before), mustBefore(2, 1))}, porcupine.Illegal},
		{"prefer reversed", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			assignOp(0, 6, 7, ok(kc.AssignResult{Order: kc.After, Reversed: true}), preferBefore(2, 1))}, porcupine.Ok},
		// Musts run first: the later Must conflicts, so the Prefer before it
		// in the request is not applied either.
		{"rejected batch has no effect", []porcupine.Operation{
			assignOp(0, 4, 5, ok(before), mustBefore(1, 2)),
			assignOp(0, 6, 7, linOutput{Err: kc.CodeMustConflict, Index: 1, Actual: kc.After}, preferBefore(1, 3), mustBefore(2, 1)),
			queryOp(1, 8, 9, 1, 3, kc.Before)}, porcupine.Illegal},
		{"id handed out twice", []porcupine.Operation{createOp(1, 4, 5, 3)}, porcupine.Illegal},
		{"id below an earlier one", []porcupine.Operation{createOp(1, 4, 5, 9), createOp(1, 6, 7, 8)}, porcupine.Illegal},
		{"overlapping creates in either order", []porcupine.Operation{createOp(1, 4, 7, 9), createOp(2, 5, 6, 8)}, porcupine.Ok},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops := append(slices.Clone(setup), tc.ops...)
			if got := checkHistory(t, ops, false); got != tc.want {
				t.Fatalf("porcupine says %s, want %s", got, tc.want)
			}
		})
	}
}

// TestLinearizabilityModelMatchesCore runs random batches through the model
// and the real core (Graph) side by side: the model must encode exactly the
// core's semantics, or the check would be of something else.
func TestLinearizabilityModelMatchesCore(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for round := range 50 {
		g, err := kronos.New(kronos.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		ids, err := g.CreateEvents(nil, 2+rng.IntN(10))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := linState{}.create(ids)
		for step := range 30 {
			ps := make([]linPair, 1+rng.IntN(4))
			as := make([]kronos.Assignment, len(ps))
			for i := range ps {
				a, b := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
				if rng.IntN(20) == 0 {
					b = 1 << 30 // unknown
				}
				ps[i] = linPair{A: a, B: b, Before: rng.IntN(2) == 0, Must: rng.IntN(2) == 0}
				as[i] = kronos.Assignment{A: kronos.ID(a), B: kronos.ID(b), Order: kronos.After, Strength: kronos.Prefer}
				if ps[i].Before {
					as[i].Order = kronos.Before
				}
				if ps[i].Must {
					as[i].Strength = kronos.Must
				}
			}
			var want linOutput
			s, want = s.assign(ps)
			res, err := g.AssignOrder(nil, as)
			got := linOutput{Err: kc.Code(kronos.WireError(err).GetCode())}
			var ce *kronos.ConflictError
			if errors.As(err, &ce) {
				got.Index, got.Actual = ce.Index, coreOrder(ce.Actual)
			}
			for _, r := range res {
				got.Results = append(got.Results, kc.AssignResult{Order: coreOrder(r.Order), Reversed: r.Reversed})
			}
			if !sameOutput(want, got) {
				t.Fatalf("round %d step %d: assign %+v: model %+v, core %+v", round, step, ps, want, got)
			}
			for _, a := range ids {
				for _, b := range ids {
					if a == b {
						continue
					}
					o, err := g.QueryOrder(nil, []kronos.Pair{{A: kronos.ID(a), B: kronos.ID(b)}})
					if err != nil {
						t.Fatal(err)
					}
					if m := s.query([]linPair{{A: a, B: b}}).Orders[0]; m != coreOrder(o[0]) {
						t.Fatalf("round %d step %d: %d?%d model %s, core %s", round, step, a, b, m, o[0])
					}
				}
			}
		}
	}
}

func coreOrder(o kronos.Order) kc.Order {
	switch o {
	case kronos.Before:
		return kc.Before
	case kronos.After:
		return kc.After
	case kronos.Concurrent:
		return kc.Concurrent
	}
	return kc.Unknown
}

// ---- The test against real processes ----

// linCluster is three weft kronos processes on loopback.
type linCluster struct {
	addrs []string
	procs []*testproc.Proc
}

func startLinCluster(t *testing.T, bin string, sync bool) *linCluster {
	t.Helper()
	addrs, err := testproc.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, a))
	}
	c := &linCluster{addrs: addrs}
	logs := t.TempDir()
	for i, a := range addrs {
		id := strconv.Itoa(i + 1)
		c.procs = append(c.procs, testproc.Start(t, testproc.Spec{
			Name: "kronos-" + id, Path: bin, Ready: "serving on",
			Args: []string{"kronos", "--id", id, "--addr", a, "--peers", strings.Join(peers, ","),
				"--data-dir", filepath.Join(t.TempDir(), "kronos-"+id), "--sync=" + strconv.FormatBool(sync)},
			LogPath: filepath.Join(logs, "kronos-"+id+".log"),
		}))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.procs {
				t.Logf("--- last lines of %s:\n%s", p.Name(), p.Tail(30))
			}
		}
	})
	return c
}

// leader returns the index of the running replica that says it leads, or -1.
func (c *linCluster) leader(cl *kc.Client) int {
	for i, p := range c.procs {
		if !p.Running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		st, err := cl.Stats(ctx, c.addrs[i])
		cancel()
		if err == nil && st.IsLeader {
			return i
		}
	}
	return -1
}

// converged waits until every replica reports the same applied index and
// graph counters.
func (c *linCluster) converged(cl *kc.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var sts []*pb.StatsResponse
		var err error
		for _, a := range c.addrs {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			var st *pb.StatsResponse
			st, err = cl.Stats(ctx, a)
			cancel()
			if err != nil {
				break
			}
			sts = append(sts, st)
		}
		if err == nil {
			same := true
			for _, st := range sts[1:] {
				if st.AppliedIndex != sts[0].AppliedIndex || st.Created != sts[0].Created ||
					st.Edges != sts[0].Edges || st.NextId != sts[0].NextId || st.Events != sts[0].Events {
					same = false
				}
			}
			if same {
				return nil
			}
			err = fmt.Errorf("replicas differ: %v", sts)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// linHistory collects operations from every client.
type linHistory struct {
	t0      time.Time
	mu      sync.Mutex
	ops     []porcupine.Operation
	unknown []int // indexes of ops whose return is the end of the history
	stats   linStats
}

type linStats struct {
	ok, unknown, creates, assigns, conflicts, reversed, queries, concurrent, ordered int
	// Pairs a chosen replica answered itself, pairs it left UNRESOLVED, and
	// reads that fell back to the client (replica down or deposed).
	direct, unresolved, fallbacks int
}

func (h *linHistory) count(f func(*linStats)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.stats)
}

func (h *linHistory) now() int64 { return time.Since(h.t0).Nanoseconds() }

func (h *linHistory) add(client int, call int64, in linInput, out linOutput) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := &h.stats
	if out.Unknown {
		st.unknown++
		if in.Kind == linQuery {
			return // no effect and no answer: nothing to check
		}
		h.unknown = append(h.unknown, len(h.ops))
	} else {
		st.ok++
		switch in.Kind {
		case linCreate:
			st.creates++
		case linAssign:
			st.assigns++
			if out.Err == kc.CodeMustConflict {
				st.conflicts++
			}
			for _, r := range out.Results {
				if r.Reversed {
					st.reversed++
				}
			}
		case linQuery:
			st.queries++
			for _, o := range out.Orders {
				if o == kc.Concurrent {
					st.concurrent++
				} else {
					st.ordered++
				}
			}
		}
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: h.now()})
}

// finish places every unknown operation's return after everything else.
func (h *linHistory) finish() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := h.now() + 1
	for _, i := range h.unknown {
		h.ops[i].Return = end
	}
	return h.ops
}

// outcome classifies a client error: API errors are definite answers,
// anything else (deadline, no leader reachable) leaves the outcome unknown.
func outcome(err error) linOutput {
	var ke *kc.Error
	if errors.As(err, &ke) {
		return linOutput{Err: ke.Code, Index: ke.PairIndex, Actual: ke.Actual}
	}
	return linOutput{Unknown: true}
}

// linSpace is a group's current key space.
type linSpace struct {
	mu       sync.Mutex
	gen      int
	reserved int      // creates issued in gen, answered or not
	pool     []uint64 // acknowledged events of gen, in creation order
}

type linWorker struct {
	id    int
	group int
	space *linSpace
	cl    *kc.Client
	stubs []pb.KronosClient // one per replica, for reads that start at a follower
	rng   *rand.Rand
	h     *linHistory
}

func (w *linWorker) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		w.step()
	}
}

// step issues one operation: a create while the key space is small (or now
// and then), otherwise an assign or a query on its acknowledged events.
func (w *linWorker) step() {
	sp := w.space
	sp.mu.Lock()
	key := linKey{w.group, sp.gen}
	pool := slices.Clone(sp.pool)
	r := w.rng.IntN(100)
	if len(pool) < 2 || r < 20 {
		count := 1 + w.rng.IntN(2)
		if sp.reserved+count > linPoolMax {
			if len(pool) >= 2 && r >= 10 {
				count = 0 // full: work on what there is
			} else {
				sp.gen, sp.reserved, sp.pool = sp.gen+1, 0, nil
				key = linKey{w.group, sp.gen}
			}
		}
		if count > 0 {
			sp.reserved += count
			sp.mu.Unlock()
			w.create(key, count)
			return
		}
	}
	sp.mu.Unlock()
	if r < 60 {
		w.assign(key, pool)
	} else {
		w.query(key, pool)
	}
}

// opContext bounds one operation: linOpTimeout, or now and then a deadline
// short enough to be abandoned mid-flight (an unknown outcome, and a session
// sequence number the client never retries).
func (w *linWorker) opContext() (context.Context, context.CancelFunc) {
	d := linOpTimeout
	if w.rng.IntN(20) == 0 {
		d = time.Duration(20+w.rng.IntN(200)) * time.Millisecond
	}
	return context.WithTimeout(context.Background(), d)
}

func (w *linWorker) create(key linKey, count int) {
	in := linInput{Key: key, Kind: linCreate, Count: count}
	ctx, cancel := w.opContext()
	defer cancel()
	call := w.h.now()
	ids, err := w.cl.CreateEvents(ctx, count)
	out := linOutput{IDs: ids}
	if err != nil {
		out = outcome(err)
	}
	w.h.add(w.id, call, in, out)
	if err == nil {
		// Only now may other clients name the events: their operations start
		// after this create returned.
		w.space.mu.Lock()
		if w.space.gen == key.gen {
			w.space.pool = append(w.space.pool, ids...)
		}
		w.space.mu.Unlock()
	}
}

// pairs draws n pairs of distinct events, half of them involving one of the
// newest events (still concurrent with most, so answers change).
func (w *linWorker) pairs(pool []uint64, n int) []linPair {
	ps := make([]linPair, n)
	for i := range ps {
		var a uint64
		if w.rng.IntN(2) == 0 {
			a = pool[len(pool)-1-w.rng.IntN(min(3, len(pool)))]
		} else {
			a = pool[w.rng.IntN(len(pool))]
		}
		b := a
		for b == a {
			b = pool[w.rng.IntN(len(pool))]
		}
		if w.rng.IntN(2) == 0 {
			a, b = b, a
		}
		ps[i] = linPair{A: a, B: b, Before: w.rng.IntN(2) == 0, Must: w.rng.IntN(2) == 0}
	}
	return ps
}

func (w *linWorker) assign(key linKey, pool []uint64) {
	n := 1
	if w.rng.IntN(3) == 0 {
		n = 2 + w.rng.IntN(3)
	}
	in := linInput{Key: key, Kind: linAssign, Pairs: w.pairs(pool, n)}
	as := make([]kc.Assignment, n)
	for i, p := range in.Pairs {
		as[i] = kc.Assignment{A: kc.ID(p.A), B: kc.ID(p.B), Order: kc.After, Strength: kc.Prefer}
		if p.Before {
			as[i].Order = kc.Before
		}
		if p.Must {
			as[i].Strength = kc.Must
		}
	}
	ctx, cancel := w.opContext()
	defer cancel()
	call := w.h.now()
	res, err := w.cl.AssignOrder(ctx, as)
	out := linOutput{Results: res}
	if err != nil {
		out = outcome(err)
	}
	w.h.add(w.id, call, in, out)
}

func (w *linWorker) query(key linKey, pool []uint64) {
	in := linInput{Key: key, Kind: linQuery, Pairs: w.pairs(pool, 1+w.rng.IntN(3))}
	ctx, cancel := w.opContext()
	defer cancel()
	call := w.h.now()
	var orders []kc.Order
	var err error
	if w.rng.IntN(2) == 0 {
		orders, err = queryPairs(ctx, w.cl, in.Pairs)
	} else {
		orders, err = w.queryAt(ctx, w.rng.IntN(len(w.stubs)), in.Pairs)
	}
	out := linOutput{Orders: orders}
	if err != nil {
		out = outcome(err)
	}
	w.h.add(w.id, call, in, out)
}

// queryAt asks replica i, follower or not, and merges as the client does:
// the pairs it leaves UNRESOLVED are asked of the leader. The client itself
// sticks to the leader, so without this the follower read path would see
// little traffic; restarted replicas catching up are where stale answers hide.
func (w *linWorker) queryAt(ctx context.Context, i int, ps []linPair) ([]kc.Order, error) {
	req := &pb.QueryOrderRequest{Pairs: make([]*pb.Pair, len(ps))}
	for j, p := range ps {
		req.Pairs[j] = &pb.Pair{A: &pb.Ref{Ref: &pb.Ref_Id{Id: p.A}}, B: &pb.Ref{Ref: &pb.Ref_Id{Id: p.B}}}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	r, err := w.stubs[i].QueryOrder(cctx, req)
	cancel()
	switch code := r.GetError().GetCode(); {
	case err != nil || code == pb.ErrorCode_NOT_LEADER || code == pb.ErrorCode_SHUTTING_DOWN || code == pb.ErrorCode_OVERLOADED:
		w.h.count(func(st *linStats) { st.fallbacks++ })
		return queryPairs(ctx, w.cl, ps)
	case code != pb.ErrorCode_OK:
		e := r.GetError()
		return nil, &kc.Error{Code: kc.Code(code), Message: e.GetMessage(), PairIndex: int(e.GetPairIndex())}
	case len(r.Orders) != len(ps):
		return nil, fmt.Errorf("%d answers for %d pairs", len(r.Orders), len(ps))
	}
	out := make([]kc.Order, len(ps))
	var again []linPair
	var idx []int
	for j, o := range r.Orders {
		switch o {
		case pb.Order_BEFORE:
			out[j] = kc.Before
		case pb.Order_AFTER:
			out[j] = kc.After
		case pb.Order_CONCURRENT:
			out[j] = kc.Concurrent
		case pb.Order_UNRESOLVED:
			again, idx = append(again, ps[j]), append(idx, j)
		default:
			out[j] = kc.Unknown
		}
	}
	w.h.count(func(st *linStats) { st.direct += len(ps) - len(again); st.unresolved += len(again) })
	if len(again) > 0 {
		rest, err := queryPairs(ctx, w.cl, again)
		if err != nil {
			return nil, err
		}
		for k, j := range idx {
			out[j] = rest[k]
		}
	}
	return out, nil
}

func queryPairs(ctx context.Context, cl *kc.Client, ps []linPair) ([]kc.Order, error) {
	pairs := make([]kc.Pair, len(ps))
	for i, p := range ps {
		pairs[i] = kc.Pair{A: kc.ID(p.A), B: kc.ID(p.B)}
	}
	return cl.QueryOrder(ctx, pairs)
}

func dialLin(t *testing.T, addrs []string) *kc.Client {
	t.Helper()
	cl, err := kc.Dial(addrs, kc.Options{CallTimeout: time.Second, Attempts: 1000, Backoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// nemesis kill -9s a replica (the leader half the time), waits, and restarts
// it on the same data dir and port, until stop; it leaves every replica up.
func nemesis(c *linCluster, cl *kc.Client, rng *rand.Rand, stop <-chan struct{}, kills *atomic.Int64, slowest *time.Duration) error {
	pause := func(lo, hi time.Duration) bool {
		select {
		case <-stop:
			return false
		case <-time.After(lo + time.Duration(rng.Int64N(int64(hi-lo)))):
			return true
		}
	}
	for pause(300*time.Millisecond, 1200*time.Millisecond) {
		victim := rng.IntN(len(c.procs))
		if rng.IntN(2) == 0 {
			if l := c.leader(cl); l >= 0 {
				victim = l
			}
		}
		p := c.procs[victim]
		if err := p.Kill(); err != nil {
			return err
		}
		kills.Add(1)
		pause(100*time.Millisecond, 800*time.Millisecond)
		start := time.Now()
		if err := p.Start(); err != nil {
			return fmt.Errorf("restart %s: %w", p.Name(), err)
		}
		*slowest = max(*slowest, time.Since(start))
	}
	return nil
}

func TestLinearizabilityKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes for 15s or more")
	}
	dur := linDuration(t)
	seed := *linSeedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("duration %v, seed %d (-kronos.lin.seed), sync %v", dur, seed, *linSyncFlag)
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	c := startLinCluster(t, bin, *linSyncFlag)
	admin := dialLin(t, c.addrs)
	for deadline := time.Now().Add(15 * time.Second); c.leader(admin) < 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no leader elected")
		}
	}

	var stubs []pb.KronosClient
	for _, a := range c.addrs {
		stubs = append(stubs, rawStub(t, a))
	}
	h := &linHistory{t0: time.Now()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range linGroups {
		sp := &linSpace{}
		for i := range linWorkers {
			w := &linWorker{id: g*linWorkers + i, group: g, space: sp, cl: dialLin(t, c.addrs),
				stubs: stubs, rng: rand.New(rand.NewPCG(seed, uint64(g*linWorkers+i))), h: h}
			wg.Go(func() { w.run(stop) })
		}
	}
	var kills atomic.Int64
	var nemErr error
	var slowest time.Duration // the longest restart, until the replica serves
	nemDone := make(chan struct{})
	go func() {
		defer close(nemDone)
		nemErr = nemesis(c, admin, rand.New(rand.NewPCG(seed, 1<<32)), stop, &kills, &slowest)
	}()
	// On a slow machine restarts take longer: go on (for up to another dur)
	// until the nemesis has done its share.
	minKills := max(3, int64(dur/(4*time.Second)))
	time.Sleep(dur)
	for extra := time.After(dur); kills.Load() < minKills; {
		select {
		case <-extra:
		case <-nemDone:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	close(stop)
	<-nemDone
	wg.Wait()
	if nemErr != nil {
		t.Fatalf("nemesis: %v", nemErr)
	}
	for _, p := range c.procs {
		if !p.Running() { // the nemesis leaves every replica up: this one died by itself
			t.Errorf("%s exited on its own", p.Name())
		}
	}

	// With every replica back, the replicas converge, and a final read of
	// every pair of every key space joins the history: acknowledged writes
	// must all be there.
	if err := c.converged(admin, 15*time.Second); err != nil {
		t.Errorf("replicas did not converge after the nemesis stopped: %v", err)
	}
	finalReads(t, h, admin)
	ops := h.finish()
	st := h.stats
	t.Logf("%d operations: %d ok (%d creates, %d assigns with %d must conflicts and %d reversed prefers, "+
		"%d queries answering %d ordered and %d concurrent pairs), %d unknown; %d kills, slowest restart %v; "+
		"reads at a chosen replica: %d pairs answered there, %d unresolved, %d fell back",
		len(ops), st.ok, st.creates, st.assigns, st.conflicts, st.reversed, st.queries, st.ordered, st.concurrent,
		st.unknown, kills.Load(), slowest.Round(time.Millisecond), st.direct, st.unresolved, st.fallbacks)

	start := time.Now()
	res := checkHistory(t, ops, true)
	t.Logf("porcupine: %s in %v", res, time.Since(start).Round(time.Millisecond))
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (porcupine: %s)", len(ops), res)
	}
	// Not vacuous: enough of every kind happened, under enough faults.
	secs := int(dur / time.Second)
	if st.ok < 20*secs || st.creates < secs || st.assigns < 5*secs || st.queries < 5*secs ||
		st.conflicts == 0 || st.concurrent == 0 || st.ordered == 0 || st.direct == 0 || st.unresolved == 0 {
		t.Errorf("too little was checked in %v: %+v", dur, st)
	}
	if kills.Load() < minKills {
		t.Errorf("%d kills in %v and more, want at least %d", kills.Load(), dur, minKills)
	}
}

// finalReads queries every pair of acknowledged events in every key space.
func finalReads(t *testing.T, h *linHistory, cl *kc.Client) {
	t.Helper()
	events := map[linKey][]uint64{}
	h.mu.Lock()
	for _, o := range h.ops {
		in, out := o.Input.(linInput), o.Output.(linOutput)
		if in.Kind == linCreate && !out.Unknown {
			events[in.Key] = append(events[in.Key], out.IDs...)
		}
	}
	h.mu.Unlock()
	client := linGroups * linWorkers
	for key, ids := range events {
		var ps []linPair
		for _, p := range allPairs(ids) {
			ps = append(ps, linPair{A: p[0], B: p[1]})
		}
		if len(ps) == 0 {
			continue
		}
		in := linInput{Key: key, Kind: linQuery, Pairs: ps}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		call := h.now()
		orders, err := queryPairs(ctx, cl, ps)
		cancel()
		if err != nil {
			t.Fatalf("final read of %v: %v", key, err)
		}
		h.add(client, call, in, linOutput{Orders: orders})
	}
}
