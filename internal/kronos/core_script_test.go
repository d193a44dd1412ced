package kronos

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/scripttest"
	"github.com/weft-db/weft/internal/vclock"
)

// TestCoreScripts runs the scripts in testdata/core on the real Graph (the
// pure core, default configuration), one fresh graph per file: each case is
// a command, "----", and the graph's answer. After every command the
// invariants are checked (CheckInvariants); a broken one fails the test.
// -rewrite regenerates the outputs: review the diff like code.
//
// A ref is an event id, #N, or a clock event, gkO@eE:[c0,c1,...] (the
// clock gatekeeper O stamped; Ref.String's form). Commands:
//
//	create N                   CreateEvents: N events with one reference each; their ids
//	acquire #A #B ...          AcquireRefs: one more reference each; "ok" or the error
//	release #A #B ...          ReleaseRefs: one less each; the events collected, or the error
//	query A B; C D; ...        QueryOrder of each pair: before, after, concurrent or unknown
//	assign A ORD B STR; ...    AssignOrder of one batch (ORD before|after, STR must|prefer):
//	                           each pair's resulting order, "reversed" for a contradicted
//	                           prefer; or the error (the batch then changed nothing)
//	cleanup GK CLOCK           Cleanup: gatekeeper GK needs nothing at or below CLOCK;
//	                           the chain entries released and the events collected
//	graph                      the state: Stats, then every live event (id order) with its
//	                           references, in-edges and out-edges, then every gatekeeper
//	                           chain (epoch, owner order) and the cleanup watermark
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
	scripttest.Planted(t, "testdata/core/assign.txt", newCoreScript)
}

// newCoreScript returns the interpreter of one script, over a fresh graph.
func newCoreScript(t testing.TB) func(string) string {
	g, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return func(cmd string) string {
		name, rest, _ := strings.Cut(cmd, " ")
		out := runCoreScript(t, g, name, strings.TrimSpace(rest))
		if err := g.CheckInvariants(); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return out
	}
}

func runCoreScript(t testing.TB, g *Graph, name, rest string) string {
	args := strings.Fields(rest)
	switch name {
	case "create":
		n, err := strconv.Atoi(rest)
		if err != nil {
			t.Fatalf("create %q: %v", rest, err)
		}
		ids, err := g.CreateEvents(nil, n)
		if err != nil {
			return "error: " + err.Error()
		}
		return formatIDs(ids)
	case "acquire":
		if err := g.AcquireRefs(scriptIDs(t, args)); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "release":
		n, err := g.ReleaseRefs(scriptIDs(t, args))
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("collected %d", n)
	case "query":
		return scriptQuery(t, g, rest)
	case "assign":
		return scriptAssign(t, g, rest)
	case "cleanup":
		if len(args) != 2 {
			t.Fatalf("cleanup %q: want GK CLOCK", rest)
		}
		gk, err := strconv.ParseUint(args[0], 10, 32)
		if err != nil {
			t.Fatalf("cleanup %q: %v", rest, err)
		}
		c, err := vclock.Parse(args[1])
		if err != nil {
			t.Fatalf("cleanup %q: %v", rest, err)
		}
		rel, col, err := g.Cleanup(uint32(gk), c)
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("released %d, collected %d", rel, col)
	case "graph":
		return dumpGraph(g)
	}
	t.Fatalf("unknown command %q", name)
	return ""
}

func scriptQuery(t testing.TB, g *Graph, rest string) string {
	var pairs []Pair
	for _, p := range strings.Split(rest, ";") {
		f := strings.Fields(p)
		if len(f) != 2 {
			t.Fatalf("query pair %q: want A B", p)
		}
		pairs = append(pairs, Pair{A: scriptRef(t, f[0]), B: scriptRef(t, f[1])})
	}
	got, err := g.QueryOrder(nil, pairs)
	if err != nil {
		return "error: " + err.Error()
	}
	lines := make([]string, len(pairs))
	for i, p := range pairs {
		lines[i] = fmt.Sprintf("%s %s: %s", p.A, p.B, got[i])
	}
	return strings.Join(lines, "\n")
}

func scriptAssign(t testing.TB, g *Graph, rest string) string {
	var as []Assignment
	for _, p := range strings.Split(rest, ";") {
		f := strings.Fields(p)
		if len(f) != 4 {
			t.Fatalf("assign %q: want A before|after B must|prefer", p)
		}
		a := Assignment{A: scriptRef(t, f[0]), B: scriptRef(t, f[2])}
		switch f[1] {
		case "before":
			a.Order = Before
		case "after":
			a.Order = After
		default:
			t.Fatalf("assign %q: order %q", p, f[1])
		}
		switch f[3] {
		case "must":
			a.Strength = Must
		case "prefer":
			a.Strength = Prefer
		default:
			t.Fatalf("assign %q: strength %q", p, f[3])
		}
		as = append(as, a)
	}
	rs, err := g.AssignOrder(nil, as)
	if err != nil {
		return "error: " + err.Error()
	}
	lines := make([]string, len(as))
	for i, a := range as {
		lines[i] = fmt.Sprintf("%s %s %s", a.A, rs[i].Order, a.B)
		if rs[i].Reversed {
			lines[i] += " (prefer reversed)"
		}
	}
	return strings.Join(lines, "\n")
}

// scriptRef parses #N or gkO@eE:[...].
func scriptRef(t testing.TB, s string) Ref {
	if id, ok := strings.CutPrefix(s, "#"); ok {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			t.Fatalf("ref %q: %v", s, err)
		}
		return ID(n)
	}
	owner, clock, ok := strings.Cut(strings.TrimPrefix(s, "gk"), "@")
	if !ok || !strings.HasPrefix(s, "gk") {
		t.Fatalf("ref %q: want #N or gkO@eE:[...]", s)
	}
	o, err := strconv.ParseUint(owner, 10, 32)
	if err != nil {
		t.Fatalf("ref %q: %v", s, err)
	}
	c, err := vclock.Parse(clock)
	if err != nil {
		t.Fatalf("ref %q: %v", s, err)
	}
	return ClockRef(uint32(o), c)
}

func scriptIDs(t testing.TB, args []string) []EventID {
	ids := make([]EventID, len(args))
	for i, a := range args {
		r := scriptRef(t, a)
		if r.Clock != nil {
			t.Fatalf("%q: reference calls take ids", a)
		}
		ids[i] = r.ID
	}
	return ids
}

func formatIDs(ids []EventID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprintf("#%d", id)
	}
	return strings.Join(s, " ")
}

// dumpGraph prints the graph's state deterministically: ids in order,
// out-edges in insertion order, chains in key order.
func dumpGraph(g *Graph) string {
	st := g.Stats()
	lines := []string{fmt.Sprintf("events %d, edges %d, clock events %d; created %d, collected %d, next #%d",
		st.Events, st.Edges, st.ClockEvents, st.Created, st.Collected, st.NextID)}
	for id := EventID(1); id < st.NextID; id++ {
		if !g.tab.alive(id) {
			continue
		}
		ch, s := g.tab.slot(id)
		refs := fmt.Sprintf("refs %d", ch.refs[s]&^clockFlag)
		if ch.refs[s]&clockFlag != 0 {
			refs += " +chain"
		}
		l := fmt.Sprintf("#%d %s, in %d", id, refs, ch.indeg[s])
		if es := g.edges(id); len(es) > 0 {
			l += " -> " + formatIDs(es)
		}
		lines = append(lines, l)
	}
	for _, k := range g.clocks.keys {
		ch := g.clocks.chains[k]
		var es []string
		for i, e := range ch.entries {
			s := fmt.Sprintf("%s #%d", entryClock(k, e), e.id)
			if i < ch.rel {
				s += " (released)"
			}
			es = append(es, s)
		}
		lines = append(lines, fmt.Sprintf("chain e%d gk%d: %s", k.epoch, k.owner, strings.Join(es, ", ")))
	}
	if w := g.clocks.watermark; w != nil {
		lines = append(lines, "watermark "+w.String())
	}
	return strings.Join(lines, "\n")
}
