package kronos

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weft-db/weft/internal/vclock"
)

// harness runs a Graph and the refModel side by side on one random operation
// sequence and checks, after every operation: identical answers and errors,
// CheckInvariants, identical counters, identical liveness of every id ever
// issued (strict GC), unchanged snapshot bytes after any rejected call, and
// that no logged BEFORE/AFTER answer has changed (monotonicity).
type harness struct {
	cfg    Config
	gs     []*Graph // cores run in lockstep: all must agree with the model and byte for byte with each other
	m      *refModel
	clocks bool // draw clock refs and run the gatekeepers
	ops    int  // operations applied so far

	// log holds every BEFORE/AFTER answer given, by pair; an entry leaves
	// the log only when the pair answers Unknown (an event is gone).
	log map[string]loggedAnswer

	gks      []gatekeeper
	epoch    uint64
	liveMax  int // keep the model small: brute force is quadratic
	coverage *coverage
}

type loggedAnswer struct {
	p Pair
	o Order
}

// gatekeeper issues monotone vector clocks: each stamp ticks its own counter
// after whatever it merged by gossip.
type gatekeeper struct {
	cur    vclock.Clock
	issued []vclock.Clock
}

// coverage counts interesting situations over a whole rapid run, so a test
// can show its generators reach them.
type coverage struct {
	ops, conflicts, reversed, pinned, releasedAlive, restores, rejected, released, collected int
}

func (c *coverage) String() string {
	return fmt.Sprintf("%d ops: %d must conflicts, %d prefer reversals, %d edge-pinned events seen "+
		"(%d of them released clock events), %d restores, %d rejected calls, %d clock events released, "+
		"%d events collected",
		c.ops, c.conflicts, c.reversed, c.pinned, c.releasedAlive, c.restores, c.rejected, c.released, c.collected)
}

// rapidSteps is the -rapid.steps flag (default 30); sequences are about ten
// times as long, so -rapid.steps=300 runs sequences of thousands.
func rapidSteps() int {
	n := 30
	if f := flag.Lookup("rapid.steps"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			n = v
		}
	}
	if raceEnabled || testing.Short() {
		n = max(n/3, 1)
	}
	return n
}

// drawConfig draws a small configuration: tiny caches collide and forget,
// a small PairsMax makes oversized calls reachable.
func drawConfig(t *rapid.T) Config {
	return Config{
		CacheSlots: rapid.SampledFrom([]int{0, 1, 4, 1 << 16}).Draw(t, "cacheSlots"),
		PairsMax:   rapid.SampledFrom([]int{6, 1 << 16}).Draw(t, "pairsMax"),
	}
}

func newHarness(t *rapid.T, clocks bool, cov *coverage) *harness {
	cfg := drawConfig(t)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{cfg: cfg, gs: []*Graph{g}, m: newRefModel(cfg.PairsMax), clocks: clocks,
		log: map[string]loggedAnswer{}, liveMax: 40, coverage: cov}
	if clocks {
		n := rapid.IntRange(1, 4).Draw(t, "gatekeepers")
		for range n {
			h.gks = append(h.gks, gatekeeper{cur: vclock.New(0, n)})
		}
	}
	return h
}

// step draws and applies one operation, then checks everything.
func (h *harness) step(t *rapid.T) {
	ops := []string{"create", "acquire", "release", "query", "assign", "assign", "assign", "snapshot"}
	if h.clocks {
		ops = append(ops, "stamp", "stamp", "gossip", "cleanup", "epoch", "mustAgainstClocks")
	}
	op := rapid.SampledFrom(ops).Draw(t, "op")
	if len(h.m.ev) > h.liveMax && (op == "create" || op == "assign") {
		op = "shrink"
	}
	switch op {
	case "create":
		h.opCreate(t)
	case "acquire":
		h.opAcquire(t)
	case "release":
		h.opRelease(t, h.drawRelease(t))
	case "query":
		h.opQuery(t, h.drawPairs(t))
	case "assign":
		h.opAssign(t, h.drawAssignments(t))
	case "snapshot":
		h.opSnapshot(t)
	case "stamp":
		h.opStamp(t)
	case "gossip":
		i := rapid.IntRange(0, len(h.gks)-1).Draw(t, "gossipTo")
		j := rapid.IntRange(0, len(h.gks)-1).Draw(t, "gossipFrom")
		h.gks[i].cur.Merge(h.gks[j].cur)
	case "cleanup":
		h.opCleanup(t)
	case "epoch":
		if rapid.IntRange(0, 3).Draw(t, "epochBump") == 0 {
			h.newEpoch()
		}
	case "mustAgainstClocks":
		h.opMustAgainstClocks(t)
	case "shrink":
		h.opShrink(t)
	}
	h.ops++
	h.coverage.ops++
	h.check(t)
}

// ---- drawing ----

func (h *harness) drawID(t *rapid.T, label string) EventID {
	live := h.m.liveIDs()
	switch k := rapid.IntRange(0, 99).Draw(t, label+"Kind"); {
	case k < 90 && len(live) > 0:
		return rapid.SampledFrom(live).Draw(t, label)
	case k < 99:
		// Dead, never created, or (rarely) live.
		return rapid.Uint64Range(1, h.m.nextID+1).Draw(t, label)
	}
	return 0
}

func (h *harness) drawRef(t *rapid.T, label string) Ref {
	if h.clocks && rapid.IntRange(0, 9).Draw(t, label+"IsClock") < 6 {
		return h.drawClockRef(t, label)
	}
	return ID(h.drawID(t, label))
}

// drawClockRef names a clock some gatekeeper issued, mostly a recent one;
// rarely it forges one (a counter of another gatekeeper raised), which
// may contradict the owner's chain.
func (h *harness) drawClockRef(t *rapid.T, label string) Ref {
	gk := rapid.IntRange(0, len(h.gks)-1).Draw(t, label+"Gk")
	k := &h.gks[gk]
	if len(k.issued) == 0 {
		h.stamp(gk)
	}
	n := len(k.issued)
	var i int
	if rapid.IntRange(0, 4).Draw(t, label+"Old") == 0 {
		i = rapid.IntRange(0, n-1).Draw(t, label+"Idx")
	} else {
		i = n - 1 - rapid.IntRange(0, min(n, 6)-1).Draw(t, label+"Recent")
	}
	c := k.issued[i].Clone()
	if len(h.gks) > 1 && rapid.IntRange(0, 49).Draw(t, label+"Forge") == 0 {
		j := (gk + 1 + rapid.IntRange(0, len(h.gks)-2).Draw(t, label+"ForgeAt")) % len(h.gks)
		c.Counters[j]++
	}
	return ClockRef(uint32(gk), c)
}

func (h *harness) drawPairs(t *rapid.T) []Pair {
	n := h.drawBatchLen(t, "pairs")
	ps := make([]Pair, n)
	for i := range ps {
		ps[i] = Pair{A: h.drawRef(t, "a"), B: h.drawRef(t, "b")}
	}
	return ps
}

func (h *harness) drawBatchLen(t *rapid.T, label string) int {
	switch k := rapid.IntRange(0, 49).Draw(t, label+"LenKind"); {
	case k == 0:
		return 0
	case k == 1 && h.cfg.PairsMax < 64: // oversized, when cheap to draw
		return h.cfg.PairsMax + 1
	}
	return rapid.IntRange(1, min(6, h.cfg.PairsMax)).Draw(t, label+"Len")
}

func (h *harness) drawAssignments(t *rapid.T) []Assignment {
	n := h.drawBatchLen(t, "assignments")
	as := make([]Assignment, n)
	for i := range as {
		o := rapid.SampledFrom([]Order{Before, Before, After, After, Concurrent}).Draw(t, "order")
		if o == Concurrent && rapid.IntRange(0, 9).Draw(t, "badOrder") > 0 {
			o = Before
		}
		s := rapid.SampledFrom([]Strength{Must, Prefer, Prefer}).Draw(t, "strength")
		if rapid.IntRange(0, 59).Draw(t, "badStrength") == 0 {
			s = 0
		}
		as[i] = Assignment{A: h.drawRef(t, "a"), Order: o, B: h.drawRef(t, "b"), Strength: s}
	}
	return as
}

// drawRefIDs draws a reference call's ids from a small pool, so duplicates
// are common.
func (h *harness) drawRefIDs(t *rapid.T, pool []EventID) []EventID {
	n := h.drawBatchLen(t, "ids")
	ids := make([]EventID, n)
	for i := range ids {
		if len(pool) > 0 && rapid.IntRange(0, 9).Draw(t, "fromPool") > 0 {
			ids[i] = rapid.SampledFrom(pool).Draw(t, "id")
		} else {
			ids[i] = h.drawID(t, "id")
		}
	}
	return ids
}

func (h *harness) drawRelease(t *rapid.T) []EventID {
	var held []EventID
	for _, id := range h.m.liveIDs() {
		if h.m.ev[id].refs > 0 {
			held = append(held, id)
		}
	}
	if len(held) > 3 {
		start := rapid.IntRange(0, len(held)-3).Draw(t, "poolAt")
		held = held[start : start+3]
	}
	return h.drawRefIDs(t, held)
}

// ---- operations ----

func (h *harness) opCreate(t *rapid.T) {
	if rapid.Bool().Draw(t, "single") {
		want, _ := h.m.create(1)
		for _, g := range h.gs {
			if got := g.CreateEvent(); got != want[0] {
				t.Fatalf("CreateEvent = %d, model %d", got, want[0])
			}
		}
		return
	}
	n := rapid.IntRange(0, 4).Draw(t, "count")
	if rapid.IntRange(0, 19).Draw(t, "tooMany") == 0 {
		n = h.cfg.PairsMax + 1
	}
	want, werr := h.m.create(n)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		got, err := g.CreateEvents(nil, n)
		h.sameErr(t, g, fmt.Sprintf("CreateEvents(%d)", n), err, werr, before)
		if err == nil && !slices.Equal(got, want) {
			t.Fatalf("CreateEvents(%d) = %v, model %v", n, got, want)
		}
	}
}

func (h *harness) opAcquire(t *rapid.T) {
	ids := h.drawRefIDs(t, nil)
	werr := h.m.acquire(ids)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		err := g.AcquireRefs(ids)
		h.sameErr(t, g, fmt.Sprintf("AcquireRefs(%v)", ids), err, werr, before)
	}
}

func (h *harness) opRelease(t *rapid.T, ids []EventID) {
	wn, werr := h.m.release(ids)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		n, err := g.ReleaseRefs(ids)
		h.sameErr(t, g, fmt.Sprintf("ReleaseRefs(%v)", ids), err, werr, before)
		if err == nil && n != wn {
			t.Fatalf("ReleaseRefs(%v) collected %d, model %d", ids, n, wn)
		}
	}
	h.coverage.collected += wn
}

func (h *harness) opQuery(t *rapid.T, pairs []Pair) {
	want, werr := h.m.query(pairs)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		got, err := g.QueryOrder(nil, pairs)
		h.sameErr(t, g, "QueryOrder("+fmtPairs(pairs)+")", err, werr, before)
		if !bytes.Equal(before, g.AppendSnapshot(nil)) {
			t.Fatalf("QueryOrder changed the graph")
		}
		if err != nil {
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("QueryOrder(%s) = %v, model %v", fmtPairs(pairs), got, want)
		}
	}
	if werr == nil {
		for i, p := range pairs {
			h.logAnswer(t, p, want[i])
		}
	}
}

func (h *harness) opAssign(t *rapid.T, as []Assignment) ([]AssignResult, error) {
	want, werr := h.m.assign(as)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		got, err := g.AssignOrder(nil, as)
		h.sameErr(t, g, "AssignOrder("+fmtAssignments(as)+")", err, werr, before)
		if err == nil {
			h.checkApplied(t, g, as, got, want)
		}
	}
	if errors.Is(werr, ErrMustConflict) {
		h.coverage.conflicts++
	}
	return want, werr
}

// checkApplied compares an applied batch's results with the model's and
// checks the all of all-or-nothing: every pair now holds its reported order.
func (h *harness) checkApplied(t *rapid.T, g *Graph, as []Assignment, got, want []AssignResult) {
	if !slices.Equal(got, want) {
		t.Fatalf("AssignOrder(%s) = %v, model %v", fmtAssignments(as), got, want)
	}
	// All of all-or-nothing: every pair now holds the order it reported.
	pairs := make([]Pair, len(as))
	for i, a := range as {
		pairs[i] = Pair{a.A, a.B}
		if got[i].Reversed {
			h.coverage.reversed++
			if a.Strength != Prefer || got[i].Order != a.Order.Reverse() {
				t.Fatalf("pair %d %+v reversed to %+v", i, a, got[i])
			}
		} else if got[i].Order != a.Order {
			t.Fatalf("pair %d %+v answered %+v", i, a, got[i])
		}
	}
	held, err := g.QueryOrder(nil, pairs)
	if err != nil {
		t.Fatalf("querying an applied batch: %v", err)
	}
	for i := range as {
		if held[i] != got[i].Order {
			t.Fatalf("pair %d of an applied batch holds %s, reported %s", i, held[i], got[i].Order)
		}
		h.logAnswer(t, pairs[i], got[i].Order)
	}
}

// opSnapshot round-trips the graph through AppendSnapshot and Restore and
// sometimes carries on with the restored copy (cold cache, rebuilt arena).
func (h *harness) opSnapshot(t *rapid.T) {
	i := rapid.IntRange(0, len(h.gs)-1).Draw(t, "snapshotCore")
	r := h.restore(t, h.gs[i], h.cfg)
	if rapid.Bool().Draw(t, "useRestored") {
		h.gs[i] = r
	}
}

// restore round-trips g through AppendSnapshot and Restore (with cfg).
func (h *harness) restore(t *rapid.T, g *Graph, cfg Config) *Graph {
	snap := g.AppendSnapshot(nil)
	r, err := Restore(cfg, snap)
	if err != nil {
		t.Fatalf("Restore of a live snapshot: %v", err)
	}
	if again := r.AppendSnapshot(nil); !bytes.Equal(again, snap) {
		t.Fatalf("snapshot round trip differs:\n%x\n%x", snap, again)
	}
	if r.Stats() != g.Stats() {
		t.Fatalf("restored stats %+v, original %+v", r.Stats(), g.Stats())
	}
	h.coverage.restores++
	return r
}

func (h *harness) stamp(gk int) {
	k := &h.gks[gk]
	k.cur.Tick(gk)
	k.issued = append(k.issued, k.cur.Clone())
}

func (h *harness) opStamp(t *rapid.T) {
	h.stamp(rapid.IntRange(0, len(h.gks)-1).Draw(t, "stampGk"))
}

// newEpoch restarts every gatekeeper at zero in the next epoch.
func (h *harness) newEpoch() {
	h.epoch++
	for i := range h.gks {
		h.gks[i].cur = vclock.New(h.epoch, len(h.gks))
	}
}

func (h *harness) opCleanup(t *rapid.T) {
	gk := rapid.IntRange(0, len(h.gks)-1).Draw(t, "cleanupGk")
	k := &h.gks[gk]
	c := k.cur.Clone()
	if n := len(k.issued); n > 0 && rapid.Bool().Draw(t, "reportIssued") {
		c = k.issued[rapid.IntRange(0, n-1).Draw(t, "reportIdx")].Clone()
	}
	h.cleanup(t, uint32(gk), c)
}

func (h *harness) cleanup(t *rapid.T, gk uint32, c vclock.Clock) {
	wrel, wcol, werr := h.m.cleanup(gk, c)
	for _, g := range h.gs {
		before := g.AppendSnapshot(nil)
		rel, col, err := g.Cleanup(gk, c)
		h.sameErr(t, g, fmt.Sprintf("Cleanup(%d, %s)", gk, c), err, werr, before)
		if rel != wrel || col != wcol {
			t.Fatalf("Cleanup(%d, %s) released %d collected %d, model %d and %d", gk, c, rel, col, wrel, wcol)
		}
	}
	h.coverage.released += wrel
	h.coverage.collected += wcol
}

// opMustAgainstClocks asks for a must order against vector-clock order,
// inside a batch of other pairs: it is never accepted. The early side is a
// clock below a new stamp, or by id a live event that happens before (or
// is) a live clock event below it — one Cleanup released, pinned by an
// edge, included: the new stamp is above it, so the must would close a
// cycle in the true order.
func (h *harness) opMustAgainstClocks(t *rapid.T) {
	gk := rapid.IntRange(0, len(h.gks)-1).Draw(t, "lateGk")
	h.stamp(gk)
	late := h.gks[gk].issued[len(h.gks[gk].issued)-1]
	var early Ref
	if rapid.Bool().Draw(t, "earlyByID") {
		var ok bool
		if early, ok = h.drawBefore(t, late); !ok {
			return
		}
	} else if early = h.drawClockRef(t, "early"); vclock.Compare(early.Clock.Clock, late) != vclock.Before {
		return
	}
	as := h.drawAssignments(t)
	if len(as) == 0 || len(as) > h.cfg.PairsMax {
		as = nil
	}
	bad := Assignment{A: ClockRef(uint32(gk), late), Order: Before, B: early, Strength: Must}
	if rapid.Bool().Draw(t, "flip") {
		bad = Assignment{A: early, Order: After, B: ClockRef(uint32(gk), late), Strength: Must}
	}
	at := rapid.IntRange(0, len(as)).Draw(t, "badAt")
	as = slices.Insert(as, at, bad)
	if len(as) > h.cfg.PairsMax {
		as = as[:h.cfg.PairsMax]
		if at >= len(as) {
			return
		}
	}
	if _, err := h.opAssign(t, as); err == nil {
		t.Fatalf("must against vector-clock order accepted: %s", fmtAssignments(as))
	}
}

// drawBefore draws, by id, a live event that is or happens before (in the
// model) a live clock event, released or not, whose clock is below c.
func (h *harness) drawBefore(t *rapid.T, c vclock.Clock) (Ref, bool) {
	live := h.m.liveIDs()
	var below []EventID
	for _, id := range live {
		if e := h.m.ev[id]; e.clock != nil && vclock.Compare(e.clock.Clock, c) == vclock.Before {
			below = append(below, id)
		}
	}
	if len(below) == 0 {
		return Ref{}, false
	}
	e := rapid.SampledFrom(below).Draw(t, "belowLate")
	before := []EventID{e}
	for _, id := range live {
		if id != e && h.m.reaches(id, e) {
			before = append(before, id)
		}
	}
	return ID(rapid.SampledFrom(before).Draw(t, "beforeIt")), true
}

// opShrink brings the model back under liveMax: clients release what they
// hold and the gatekeepers clean up everything below a new epoch.
func (h *harness) opShrink(t *rapid.T) {
	var ids []EventID
	for _, id := range h.m.liveIDs() {
		for range min(h.m.ev[id].refs, 3) {
			ids = append(ids, id)
		}
	}
	for len(ids) > 0 {
		n := min(len(ids), h.cfg.PairsMax)
		h.opRelease(t, ids[:n])
		ids = ids[n:]
	}
	if h.clocks {
		h.newEpoch()
		for gk := range h.gks {
			h.cleanup(t, uint32(gk), h.gks[gk].cur.Clone())
		}
	}
}

// drain releases every client reference and cleans up every clock; strict
// GC must then have collected everything.
func (h *harness) drain(t *rapid.T) {
	for {
		var ids []EventID
		for _, id := range h.m.liveIDs() {
			for range h.m.ev[id].refs {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			break
		}
		for len(ids) > 0 {
			n := min(len(ids), h.cfg.PairsMax)
			h.opRelease(t, ids[:n])
			ids = ids[n:]
		}
	}
	if h.clocks {
		h.newEpoch()
		for gk := range h.gks {
			h.cleanup(t, uint32(gk), h.gks[gk].cur.Clone())
		}
	}
	h.check(t)
	for _, g := range h.gs {
		st, x := g.Stats(), &g.clocks
		if st.Events != 0 || st.Edges != 0 || st.ClockEvents != 0 || g.tab.chunks() != 0 ||
			len(x.keys)+len(x.chains)+len(x.released)+len(x.width) != 0 {
			t.Fatalf("after releasing everything: %+v, %d chunks, %d chains, %d released entries",
				st, g.tab.chunks(), len(x.chains), len(x.released))
		}
	}
}

// ---- checks ----

// sameErr compares a core error with the model's by sentinel (and the
// ConflictError's fields), and checks that a rejected call changed nothing.
func (h *harness) sameErr(t *rapid.T, g *Graph, op string, got, want error, before []byte) {
	if errKind(got) != errKind(want) {
		t.Fatalf("%s: core error %v, model %v", op, got, want)
	}
	if got == nil {
		return
	}
	h.coverage.rejected++
	var gce, wce *ConflictError
	if errors.As(want, &wce) {
		if !errors.As(got, &gce) || *gce != *wce {
			t.Fatalf("%s: core conflict %v, model %+v", op, got, wce)
		}
		msg := got.Error()
		if !strings.Contains(msg, fmt.Sprintf("pair %d ", wce.Index)) || !strings.Contains(msg, wce.Actual.String()) {
			t.Fatalf("%s: conflict error %q does not name pair %d and %s", op, msg, wce.Index, wce.Actual)
		}
	}
	if after := g.AppendSnapshot(nil); !bytes.Equal(before, after) {
		t.Fatalf("%s: rejected (%v) but the graph changed", op, got)
	}
}

func pairKey(p Pair) string { return p.A.String() + "|" + p.B.String() }

func (h *harness) logAnswer(t *rapid.T, p Pair, o Order) {
	if o != Before && o != After {
		return
	}
	k := pairKey(p)
	if old, ok := h.log[k]; ok && old.o != o {
		t.Fatalf("%s answered %s, earlier %s", k, o, old.o)
	}
	h.log[k] = loggedAnswer{p: p, o: o}
}

func (h *harness) check(t *rapid.T) {
	for i, g := range h.gs {
		h.checkCore(t, g)
		if i > 0 && !bytes.Equal(g.AppendSnapshot(nil), h.gs[0].AppendSnapshot(nil)) {
			t.Fatalf("after op %d: core %d's snapshot differs from core 0's", h.ops, i)
		}
	}
	for id := EventID(1); id < h.m.nextID; id++ {
		if h.m.pinned(id) {
			h.coverage.pinned++
			if h.m.ev[id].clock != nil {
				h.coverage.releasedAlive++
			}
		}
	}
}

func (h *harness) checkCore(t *rapid.T, g *Graph) {
	if err := g.CheckInvariants(); err != nil {
		t.Fatalf("after op %d: %v", h.ops, err)
	}
	st, m := g.Stats(), h.m
	if st.Events != uint64(len(m.ev)) || st.ClockEvents != m.clockEvents() || st.Created != m.created ||
		st.Collected != m.collected || st.NextID != m.nextID || !h.clocks && st.Edges != m.relations() {
		t.Fatalf("after op %d: stats %+v; model: %d events, %d clock events, %d created, %d collected, next %d, %d edges",
			h.ops, st, len(m.ev), m.clockEvents(), m.created, m.collected, m.nextID, m.relations())
	}
	// Strict GC, exactly: an id lives iff it is referenced or reachable
	// from a referenced event.
	for id := EventID(1); id < m.nextID; id++ {
		if g.Exists(id) != (m.ev[id] != nil) {
			t.Fatalf("after op %d: event %d exists=%v, model %v", h.ops, id, g.Exists(id), m.ev[id] != nil)
		}
	}
	h.checkLog(t, g)
	if h.ops%16 == 0 {
		h.checkAllPairs(t, g)
	}
}

// checkLog re-asks every logged answer: it may only have become Unknown.
func (h *harness) checkLog(t *rapid.T, g *Graph) {
	for k, la := range h.log {
		got, err := g.QueryOrder(nil, []Pair{la.p})
		if err != nil {
			// A forged clock may since have made a logged clock invalid.
			if h.clocks && errors.Is(err, ErrClockInvalid) {
				delete(h.log, k)
				continue
			}
			t.Fatalf("re-asking %s: %v", k, err)
		}
		switch got[0] {
		case la.o:
		case Unknown:
			delete(h.log, k)
		default:
			t.Fatalf("monotonicity: %s answered %s, earlier %s", k, got[0], la.o)
		}
	}
}

// checkAllPairs compares the order of every two live events (by id) with the
// model's transitive closure, checks the model is acyclic, and that vector
// clock order is graph order for every two live clock events — released by
// Cleanup or not, since a released event that lives still has its place in
// the true order.
func (h *harness) checkAllPairs(t *rapid.T, g *Graph) {
	live := h.m.liveIDs()
	reach := map[EventID]map[EventID]bool{}
	for _, a := range live {
		reach[a] = h.m.reachSet(a)
		if reach[a][a] {
			t.Fatalf("model cycle through %d", a)
		}
	}
	for i, a := range live {
		for _, b := range live[i+1:] {
			want := Concurrent
			if reach[a][b] {
				want = Before
			} else if reach[b][a] {
				want = After
			}
			o, err := g.QueryOrder(nil, []Pair{{ID(a), ID(b)}})
			if err != nil || o[0] != want {
				t.Fatalf("order(%d, %d) = %v %v, model %s", a, b, o, err, want)
			}
			ea, eb := h.m.ev[a], h.m.ev[b]
			if ea.clock == nil || eb.clock == nil {
				continue
			}
			// Both stamped by gatekeepers: the graph respects vector-clock
			// order. (Equal clocks of two owners — only forged ones — are
			// refused as a self pair.)
			ra, rb := Ref{Clock: ea.clock}, Ref{Clock: eb.clock}
			rel := vclock.Compare(ea.clock.Clock, eb.clock.Clock)
			if rel == vclock.Before && want != Before || rel == vclock.After && want != After {
				t.Fatalf("clock %s (#%d) is %s %s (#%d) but the graph holds %s", ra, a, rel, rb, b, want)
			}
			if !ea.inChain || !eb.inChain || rel == vclock.Equal {
				continue
			}
			// Both still named by their clocks: asked by clock or by id,
			// the answer is the graph's.
			o, err = g.QueryOrder(nil, []Pair{{ra, rb}})
			if err != nil || o[0] != want {
				t.Fatalf("order(%s, %s) = %v %v, by id %s", ra, rb, o, err, want)
			}
		}
	}
}

func fmtPairs(ps []Pair) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%s, %s)", p.A, p.B)
	}
	return b.String()
}

func fmtAssignments(as []Assignment) string {
	var b strings.Builder
	for i, a := range as {
		if i > 0 {
			b.WriteString(", ")
		}
		s := "must"
		if a.Strength == Prefer {
			s = "prefer"
		} else if a.Strength != Must {
			s = fmt.Sprintf("strength(%d)", a.Strength)
		}
		fmt.Fprintf(&b, "(%s %s %s %s)", a.A, a.Order, a.B, s)
	}
	return b.String()
}
