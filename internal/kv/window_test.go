package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

// manualClock is a physical clock the test sets.
type manualClock struct{ t uint64 }

func (c *manualClock) now() uint64 { return c.t }

func windowReplica(t *testing.T, self int, clk *manualClock, hook PutHook, windowMax int) *Replica {
	t.Helper()
	cfg := DefaultReplicaConfig()
	cfg.Dir, cfg.FS, cfg.Servers, cfg.Self, cfg.Hook = "r", vfs.NewMem(), 2, self, hook
	cfg.Epsilon, cfg.Now, cfg.WindowMax = 10, clk.now, windowMax
	r, err := OpenReplica(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func valueOf(t *testing.T, r *Replica, key string) string {
	t.Helper()
	sibs, _, err := r.Get(key, vclock.HVC{})
	if err != nil {
		t.Fatal(err)
	}
	return currentValue(sibs)
}

// TestRollbackRestoresCutBeforeViolation (§IV, Retroscope-style): two
// servers, ¬P = x@0=1 ∧ y@1=1. A violation happens; the monitor reports it
// with Since; every replica restores C(Since). At the restored cut P holds,
// exactly the PUTs with a stamp entry ≥ Since are gone (acknowledged or
// not), and every PUT wholly before Since is still there.
func TestRollbackRestoresCutBeforeViolation(t *testing.T) {
	spec, err := monitor.ParseJSON([]byte(`{"servers": 2, "predicates": [{"name": "xy", "type": "conjunctive",
	  "clauses": [{"vars": [{"server": 0, "key": "x", "value": 1}, {"server": 1, "key": "y", "value": 1}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	clk := [2]*manualClock{{t: 100}, {t: 100}}
	var dets [2]*Detector
	var reps [2]*Replica
	for i := range reps {
		if dets[i], err = NewDetector(spec, i, vclock.HVC{}, 64); err != nil {
			t.Fatal(err)
		}
		reps[i] = windowReplica(t, i, clk[i], dets[i], 1024)
	}
	actor := uint64(0)
	put := func(i int, at uint64, key, val string, from vclock.HVC) vclock.HVC {
		t.Helper()
		clk[i].t = at
		actor++
		_, h, err := reps[i].Put(key, sib(kvcore.Version{Entries: []kvcore.Entry{{Actor: actor, Counter: 1}}}, val), from)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// Before the violation: both flags 0, a base value.
	put(0, 110, "x", "0", vclock.HVC{})
	put(1, 110, "y", "0", vclock.HVC{})
	put(0, 120, "base", "b", vclock.HVC{})
	// The violation: x=1 at 200, y=1 at 250; more work after it.
	put(0, 200, "x", "1", vclock.HVC{})
	put(1, 250, "y", "1", vclock.HVC{})
	put(0, 300, "after", "a", vclock.HVC{})
	put(0, 320, "x", "0", vclock.HVC{})
	put(1, 330, "y", "0", vclock.HVC{})

	set, err := monitor.NewSet(monitor.Config{Epsilon: 10, QueueMax: 64, ViolationsMax: 8}, spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dets {
		cs, _ := dets[i].Candidates(0, 64)
		for _, c := range cs {
			if err := set.Step(c.Outbound); err != nil {
				t.Fatal(err)
			}
		}
	}
	vs := set.Ready()
	if len(vs) != 1 {
		t.Fatalf("want one violation, got %v", vs)
	}
	since := vs[0].Since
	if since != 240 {
		t.Fatalf("Since = %d, want the latest start 250 − ε", since)
	}
	for i := range reps {
		res, err := reps[i].Restore(since, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2; res.Undone != want { // after, x=0 on 0; y=1, y=0 on 1
			t.Errorf("server %d undid %d PUTs, want %d", i, res.Undone, want)
		}
	}
	x, y := valueOf(t, reps[0], "x"), valueOf(t, reps[1], "y")
	if x == "1" && y == "1" {
		t.Fatalf("the restored cut still violates P: x=%s y=%s", x, y)
	}
	// x=1 (200) is before Since and kept; y=1 (250) and everything after is gone.
	for _, c := range []struct {
		r         *Replica
		key, want string
	}{{reps[0], "x", "1"}, {reps[1], "y", "0"}, {reps[0], "base", "b"}, {reps[0], "after", ""}} {
		if got := valueOf(t, c.r, c.key); got != c.want {
			t.Errorf("%s = %q after rollback, want %q", c.key, got, c.want)
		}
	}
	if g := reps[0].Gen(); g != 1 {
		t.Fatalf("generation %d", g)
	}
	if _, err := reps[0].Restore(since, 1, nil); !errors.Is(err, kvcore.ErrInvalid) {
		t.Fatalf("a repeated generation must be refused: %v", err)
	}
}

// TestRollbackCutIsCausallyClosed: the cut keeps a PUT only if every entry
// of its stamp is below T. A client reads at server 0 (clock 400) and then
// writes at server 1, whose clock is 5 behind (395 < T = 398): the write
// depends on the read of a value written at 400, so it must go with it,
// though its own time is before T.
func TestRollbackCutIsCausallyClosed(t *testing.T) {
	clk := [2]*manualClock{{t: 100}, {t: 100}}
	var reps [2]*Replica
	for i := range reps {
		reps[i] = windowReplica(t, i, clk[i], nil, 1024)
	}
	clk[0].t = 400
	if _, _, err := reps[0].Put("z", sib(ver(1, 1), "z"), vclock.HVC{}); err != nil {
		t.Fatal(err)
	}
	_, read, err := reps[0].Get("z", vclock.HVC{})
	if err != nil {
		t.Fatal(err)
	}
	clk[1].t = 395
	_, at, err := reps[1].Put("w", sib(ver(2, 1), "depends-on-z"), read)
	if err != nil {
		t.Fatal(err)
	}
	if at.Own() >= 398 || CutTime(at) < 398 {
		t.Fatalf("setup: stamp %v should have own < 398 ≤ CutTime", at)
	}
	clk[1].t = 380
	for _, r := range reps {
		if _, err := r.Restore(398, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if z, w := valueOf(t, reps[0], "z"), valueOf(t, reps[1], "w"); z != "" || w != "" {
		t.Fatalf("z=%q w=%q: the write depending on z survived its rollback", z, w)
	}
}

// TestRollbackWindowBound: the window keeps about WindowMax records; a
// rollback reaching before the floor fails with ErrWindow and changes
// nothing, and one within it undoes exactly the newer PUTs.
func TestRollbackWindowBound(t *testing.T) {
	clk := &manualClock{t: 1000}
	r := windowReplica(t, 0, clk, nil, 8)
	for i := range 40 {
		clk.t += 10
		if _, _, err := r.Put("k", sib(ver(1, uint64(i+1)), fmt.Sprint("v", i)), vclock.HVC{}); err != nil {
			t.Fatal(err)
		}
	}
	w := r.Window()
	if w.Records < 8 || w.Records > 9 || w.Floor == 0 {
		t.Fatalf("window %+v, want 8 or 9 records (WindowMax 8, trimmed in steps) and a floor", w)
	}
	if _, err := r.Restore(w.Floor, 1, nil); !errors.Is(err, kvcore.ErrWindow) {
		t.Fatalf("restore before the floor: %v", err)
	}
	if v := valueOf(t, r, "k"); v != "v39" {
		t.Fatalf("a refused restore changed the key: %q", v)
	}
	res, err := r.Restore(clk.t-25, 1, nil) // the last three PUTs (at t-20, t-10, t)
	if err != nil || res.Undone != 3 {
		t.Fatalf("restore within the window: %+v %v", res, err)
	}
	if v := valueOf(t, r, "k"); v != "v36" {
		t.Fatalf("%q after undoing 3 of 40 PUTs, want v36", v)
	}
}

// TestRollbackKeepsWritesThatStraddleTheCut: a logical write applied on
// one replica before T and on another after T took effect before the cut,
// so it stays on both (it would otherwise survive on one and come back by
// read repair); writes that took effect nowhere before T go, including one
// applied below a kept write on the same key, whose state is rebuilt by
// replaying the kept writes.
func TestRollbackKeepsWritesThatStraddleTheCut(t *testing.T) {
	clk := [2]*manualClock{{t: 100}, {t: 100}}
	var reps [2]*Replica
	for i := range reps {
		reps[i] = windowReplica(t, i, clk[i], nil, 1024)
	}
	put := func(i int, at uint64, key string, s kvcore.Sibling) {
		t.Helper()
		clk[i].t = at
		if _, _, err := reps[i].Put(key, s, vclock.HVC{}); err != nil {
			t.Fatal(err)
		}
	}
	a := sib(ver(1, 1), "a") // straddles: r0 at 200, r1 at 300
	b := sib(ver(1, 2), "b") // supersedes a, only on r1 after T
	c := sib(ver(2, 1), "c") // only on r1 after T
	d := sib(ver(3, 1), "d") // r1, after T, on k2 below the straddler e
	e := sib(ver(4, 1), "e") // straddles on k2: r0 at 210, r1 at 330
	put(0, 200, "k", a)
	put(0, 210, "k2", e)
	put(1, 300, "k", a)
	put(1, 310, "k", b)
	put(1, 320, "k3", c)
	put(1, 325, "k2", d)
	put(1, 330, "k2", e)
	const T = 250
	var late []kvcore.Version
	for _, r := range reps {
		vs, err := r.LateVersions(T)
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, vs...)
	}
	var keep []kvcore.Version
	for _, r := range reps {
		vs, _, err := r.EarlyVersions(T, late)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, vs...)
	}
	if len(late) != 5 || len(keep) != 2 {
		t.Fatalf("late %v keep %v: want 5 late on r1, a and e kept", late, keep)
	}
	res, err := reps[1].Restore(T, 1, keep)
	if err != nil || res.Undone != 3 {
		t.Fatalf("restore r1: %+v %v (want b, c, d undone)", res, err)
	}
	if _, err := reps[0].Restore(T, 1, keep); err != nil {
		t.Fatal(err)
	}
	for i, r := range reps {
		for key, want := range map[string]string{"k": "a", "k2": "e", "k3": ""} {
			sibs, _, err := r.Get(key, vclock.HVC{})
			if err != nil {
				t.Fatal(err)
			}
			if got := currentValue(sibs); got != want || len(sibs) > 1 {
				t.Errorf("replica %d: %s = %v, want just %q", i, key, sibs, want)
			}
		}
	}
	// The kept write's undo record was rewritten: a second rollback to
	// before everything restores k2 to absent, not to a state holding d.
	if _, err := reps[1].Restore(150, 2, nil); err != nil {
		t.Fatal(err)
	}
	if v := valueOf(t, reps[1], "k2"); v != "" {
		t.Fatalf("k2 = %q after rolling back past every write: the discarded d came back", v)
	}
}
