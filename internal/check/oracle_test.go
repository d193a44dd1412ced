package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// oracle decides strict serializability of a small transactional history by
// brute force: is there an order of the OK transactions and some of the Info
// ones, consistent with real time, in which every OK transaction's reads see
// exactly the state produced by the transactions before it? register selects
// rw-register semantics (absent = nil), else list-append.
func oracle(tb fataler, h History, register bool) bool {
	tb.Helper()
	pairs, _, err := selectPairs(h, FTxn)
	if err != nil {
		tb.Fatalf("oracle: %v", err)
	}
	var txns []Pair
	for _, p := range pairs {
		if p.Type() != Fail {
			txns = append(txns, p)
		}
	}
	if len(txns) > 16 {
		tb.Fatalf("oracle: %d transactions is too many to enumerate", len(txns))
	}
	o := &oracleSearch{txns: txns, register: register, dead: make(map[string]bool)}
	o.preds = make([]uint32, len(txns))
	for i := range txns {
		if txns[i].Type() == OK {
			o.required |= 1 << i
		}
		for j := range txns {
			if txns[j].Before(txns[i]) {
				o.preds[i] |= 1 << j
			}
		}
	}
	return o.search(0, map[int64][]int64{})
}

type oracleSearch struct {
	txns     []Pair
	preds    []uint32
	required uint32
	register bool
	dead     map[string]bool // (placed, state) already shown hopeless
}

func (o *oracleSearch) search(placed uint32, state map[int64][]int64) bool {
	if placed&o.required == o.required {
		return true
	}
	id := fmt.Sprint(placed, stateKey(state))
	if o.dead[id] {
		return false
	}
	for i := range o.txns {
		if placed&(1<<i) != 0 || o.preds[i]&^placed != 0 {
			continue
		}
		next, ok := o.apply(o.txns[i], state)
		if ok && o.search(placed|1<<i, next) {
			return true
		}
	}
	o.dead[id] = true
	return false
}

// apply runs a transaction on a copy of state; reads are checked only for
// OK transactions (an Info transaction's reads are unknown).
func (o *oracleSearch) apply(p Pair, state map[int64][]int64) (map[int64][]int64, bool) {
	next := maps.Clone(state)
	check := p.Type() == OK
	t, _ := p.Value().(Txn)
	for _, m := range t {
		cur := next[m.Key]
		switch {
		case m.F == MopAppend:
			next[m.Key] = append(slices.Clip(cur), m.Value)
		case m.F == MopWrite:
			next[m.Key] = []int64{m.Value}
		case !check:
		case o.register && m.Nil:
			if len(cur) != 0 {
				return nil, false
			}
		case o.register:
			if len(cur) != 1 || cur[0] != m.Value {
				return nil, false
			}
		case !slices.Equal(m.List, cur) && (len(m.List) > 0 || len(cur) > 0):
			return nil, false
		}
	}
	return next, true
}

func stateKey(s map[int64][]int64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprint(&b, k, s[k], ";")
	}
	return b.String()
}

func TestOracleBasics(t *testing.T) {
	valid := hist(inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1, 1)))
	stale := hist(inv(0, ap(1, 1)), ok(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1)))
	concurrent := hist(inv(0, ap(1, 1)), inv(1, r(1)), ok(0, ap(1, 1)), ok(1, rl(1)))
	infoMaybe := hist(inv(0, ap(1, 1)), info(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1)),
		inv(2, r(1)), ok(2, rl(1, 1)))
	infoNotBack := hist(inv(0, ap(1, 1)), info(0, ap(1, 1)), inv(1, r(1)), ok(1, rl(1, 1)),
		inv(2, r(1)), ok(2, rl(1)))
	for _, tc := range []struct {
		name string
		h    History
		want bool
	}{{"valid", valid, true}, {"stale", stale, false}, {"concurrent", concurrent, true},
		{"info-commits-late", infoMaybe, true}, {"info-seen-then-gone", infoNotBack, false}} {
		if got := oracle(t, tc.h, false); got != tc.want {
			t.Errorf("%s: oracle %v, want %v", tc.name, got, tc.want)
		}
	}
	reg := hist(inv(0, w(1, 1)), ok(0, w(1, 1)), inv(1, r(1)), ok(1, ReadNil(1)))
	if oracle(t, reg, true) {
		t.Errorf("register stale read: oracle says valid")
	}
}
