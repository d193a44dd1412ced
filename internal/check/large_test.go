package check

import (
	"math/rand/v2"
	"testing"
	"time"
)

// largeHistory is a strictly serializable history of about n operations from
// the simulator: 10 concurrent processes, crashes, 500 keys.
func largeHistory(n int, register bool) History {
	c := randChooser{rand.New(rand.NewPCG(1, 2))}
	return genHistory(c, genConfig{procs: 10, keys: 500, txns: n / 2, mopsMax: 4, register: register,
		crashes: true, crashOneIn: 20, timeStep: 1000})
}

// TestLargeHistory: a large valid history checks quickly and stays valid; planting one stale
// read at its end is caught. The time bound is loose (the check takes a few
// hundred milliseconds) and skipped under the race detector.
func TestLargeHistory(t *testing.T) {
	for _, register := range []bool{false, true} {
		n := 50_000
		if raceEnabled {
			n = 10_000 // the race detector slows checking about tenfold
		}
		h := largeHistory(n, register)
		check := checkerFor(register)
		start := time.Now()
		res, err := check(h)
		elapsed := time.Since(start)
		if err != nil || !res.Valid {
			t.Fatalf("register=%v: %v\n%.2000s", register, err, res)
		}
		t.Logf("register=%v: %d ops (%d ok, %d fail, %d info) checked in %v", register, res.Ops, res.OK, res.Fail,
			res.Info, elapsed)
		if !raceEnabled && elapsed > 5*time.Second {
			t.Errorf("register=%v: %d ops took %v", register, len(h), elapsed)
		}
		stale := plantStaleRead(h, register)
		res, err = check(stale)
		if err != nil || res.Valid {
			t.Fatalf("register=%v: a planted stale read is not caught: %v %v", register, err, res.Types())
		}
		for _, typ := range res.Types() {
			if typ != "G-single-realtime" {
				t.Errorf("register=%v: planted stale read reported as %v", register, res.Types())
			}
		}
	}
}

// plantStaleRead appends a write to a fresh key and, after it completes, a
// read of that key that misses it.
func plantStaleRead(h History, register bool) History {
	h = cloneHistory(h)
	const k, v, p = 1 << 40, 1 << 40, 1 << 20
	wr, rd := Append(k, v), ReadList(k, []int64{})
	if register {
		wr, rd = Write(k, v), ReadNil(k)
	}
	for _, op := range []Op{inv(p, wr), ok(p, wr), inv(p+1, ReadNil(k)), ok(p+1, rd)} {
		op.Index = len(h)
		h = append(h, op)
	}
	return h
}

func BenchmarkListAppend50k(b *testing.B) { benchmarkCheck(b, false) }

func BenchmarkRWRegister50k(b *testing.B) { benchmarkCheck(b, true) }

func benchmarkCheck(b *testing.B, register bool) {
	h := largeHistory(50_000, register)
	check := checkerFor(register)
	b.ResetTimer()
	for b.Loop() {
		if res, err := check(h); err != nil || !res.Valid {
			b.Fatal(err, res.Types())
		}
	}
}
