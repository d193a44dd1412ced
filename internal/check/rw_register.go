package check

import (
	"cmp"
	"maps"
	"slices"
)

// CheckRWRegister checks a read-write register history (Elle's
// "rw-register" workload) for strict serializability. Transactions are
// Op{F: FTxn} with Txn values of Write and ReadReg/ReadNil micro-operations;
// every written value must be unique per key, and nil is the initial state.
//
// Register reads reveal less of the version order than list reads, so it
// infers only what strict serializability forces: the initial nil precedes
// every version; a transaction that read x and then wrote y orders x before
// y; and a version visible (its writer or a reader completed) before another
// version's writer was invoked precedes it. Orders of the last kind make
// ww-realtime and rw-realtime edges, so cycles needing them are named
// -realtime. It reports the same anomalies as CheckListAppend except the
// list-only ones.
func CheckRWRegister(h History) (Result, error) {
	pairs, ops, err := selectPairs(h, FTxn)
	if err != nil {
		return Result{}, err
	}
	th, err := newTxnHistory(pairs, true)
	if err != nil {
		return Result{}, err
	}
	rep := &report{}
	th.checkInternalRegisters(rep)
	for _, r := range th.reads {
		if r.val != nilVersion {
			th.checkReadValue(rep, r.node, r.key, r.val)
			th.checkIntermediate(rep, r.node, r.key, r.val)
		}
	}
	g := newGraph(len(th.nodes))
	th.registerEdges(g)
	g.addOrderEdges(th.nodes)
	g.build()
	g.reportCycles(th.nodes, rep)
	return rep.result(ops, pairs), nil
}

// checkInternalRegisters checks that each OK transaction reads back its own
// writes and earlier reads, and records its external reads (the first read
// of a key, before any own write to it).
func (th *txnHistory) checkInternalRegisters(rep *report) {
	type state struct {
		known bool
		val   int64 // the value the transaction must see, once known
	}
	for n, p := range th.nodes {
		if p.Type() != OK {
			continue
		}
		keys := make(map[int64]state)
		for i, m := range th.nodeTxn[n] {
			s := keys[m.Key]
			v := m.Value
			if m.F == MopRead && m.Nil {
				v = nilVersion
			}
			switch {
			case m.F == MopWrite:
			case s.known && v != s.val:
				th.internal(rep, n, m, "it expected "+version(s.val))
			case s.known:
			case v == nilVersion || !th.futureRead(int32(n), i, m.Key, []int64{v}, rep):
				th.reads = append(th.reads, read{node: int32(n), key: m.Key, val: v})
			}
			keys[m.Key] = state{known: true, val: v}
		}
	}
}

// regKey gathers one key's versions and their readers.
type regKey struct {
	versions []int64           // values installed by OK or Info transactions, ascending
	reads    []read            // external reads of versions or of nil
	readers  map[int64][]int32 // version (or nilVersion) → OK transactions that read it externally
	plain    map[int64]bool    // versions with a non-nil predecessor read by their own writer
}

// registerEdges adds wr edges and the ww and rw edges of every inferred
// version order fact.
func (th *txnHistory) registerEdges(g *graph) {
	keys := make(map[int64]*regKey)
	get := func(k int64) *regKey {
		if keys[k] == nil {
			keys[k] = &regKey{readers: make(map[int64][]int32), plain: make(map[int64]bool)}
		}
		return keys[k]
	}
	for _, id := range slices.SortedFunc(maps.Keys(th.writes), kvCompare) {
		if w := th.writes[id]; w.last && w.node >= 0 {
			rk := get(id.k)
			rk.versions = append(rk.versions, id.v)
		}
	}
	for _, r := range th.reads {
		if r.val != nilVersion && !th.installed(r.key, r.val) {
			continue // garbage, aborted or intermediate: reported, orders nothing
		}
		rk := get(r.key)
		rk.reads = append(rk.reads, r)
		rk.readers[r.val] = append(rk.readers[r.val], r.node)
		if w := th.writer(r.key, r.val); r.val != nilVersion && w != r.node {
			g.add(rawEdge{from: w, to: r.node, label: lWR, why: whyRegRead, key: r.key, a: r.val})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		th.registerKeyEdges(g, k, keys[k])
	}
}

func kvCompare(a, b kv) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.v, b.v)) }

// installed reports whether v is the final write to k of an OK or Info
// transaction.
func (th *txnHistory) installed(k, v int64) bool {
	w, ok := th.writes[kv{k, v}]
	return ok && w.last && w.node >= 0
}

// registerKeyEdges adds the version-order facts of key k: a transaction's
// read-then-write, the initial nil, and real-time visibility.
func (th *txnHistory) registerKeyEdges(g *graph, k int64, rk *regKey) {
	for _, r := range rk.reads {
		for _, m := range th.nodeTxn[r.node] {
			if m.F == MopWrite && m.Key == k && th.installed(k, m.Value) && th.writer(k, m.Value) == r.node {
				th.versionFact(g, k, rk, r.val, m.Value, whyRegWFR, lWW, lRW)
				if r.val != nilVersion {
					rk.plain[m.Value] = true
				}
				break
			}
		}
	}
	for _, y := range rk.versions {
		if !rk.plain[y] {
			th.versionFact(g, k, rk, nilVersion, y, whyRegInit, lWW, lRW)
		}
	}
	starts := make([]int, len(rk.versions))
	ends := make([]int, len(rk.versions))
	for i, x := range rk.versions {
		starts[i], ends[i] = th.visibility(k, x, rk)
	}
	frontier(starts, ends, func(i, j int) {
		th.versionFact(g, k, rk, rk.versions[i], rk.versions[j], whyRegRT, lWWRT, lRWRT)
	})
}

// visibility returns when version x's writer was invoked and the first
// completion that shows x committed (its OK writer or an OK reader), or -1.
func (th *txnHistory) visibility(k, x int64, rk *regKey) (start, end int) {
	w := th.nodes[th.writer(k, x)]
	end = -1
	if w.Type() == OK {
		end = w.CompletePos
	}
	for _, r := range rk.readers[x] {
		if c := th.nodes[r].CompletePos; end < 0 || c < end {
			end = c
		}
	}
	if end >= 0 && end < w.InvokePos {
		// Read before its writer was invoked: a cycle reports that. A
		// later end orders less and keeps intervals proper, as frontier
		// needs.
		end = w.InvokePos
	}
	return w.InvokePos, end
}

// versionFact adds the edges of "version x of k precedes version y": ww
// from x's writer and rw from each reader of x, to y's writer.
func (th *txnHistory) versionFact(g *graph, k int64, rk *regKey, x, y int64, w why, ww, rw label) {
	to := th.writer(k, y)
	if x != nilVersion {
		from := th.writer(k, x)
		assertf(from >= 0 && to >= 0, "version fact %d < %d of key %d without writers", x, y, k)
		g.add(rawEdge{from: from, to: to, label: ww, why: w, key: k, a: x, b: y})
	}
	for _, r := range rk.readers[x] {
		g.add(rawEdge{from: r, to: to, label: rw, why: w, key: k, a: x, b: y})
	}
}
