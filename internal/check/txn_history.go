package check

import (
	"fmt"
	"slices"
)

// kv names a value of a key.
type kv struct{ k, v int64 }

// writeInfo is where a value was appended or written.
type writeInfo struct {
	node int32 // graph node of the writer; -1 if the writer failed
	pair int   // the writer's index in txnHistory.pairs
	mop  int   // the micro-operation's position in the writer's Txn
	last bool  // the writer's last append or write to this key
}

// read is a read of a committed (OK) transaction. txnHistory.reads holds
// external reads: a transaction's first read of a key, with its own earlier
// appends removed (list) or made before any own write (register), which is
// what it observed of other transactions.
type read struct {
	node int32
	key  int64
	list []int64 // list read: the list
	val  int64   // register read: the value, or nilVersion
}

// txnHistory is a transactional history prepared for checking: the graph
// nodes (OK and Info transactions), where each value was written, and the
// reads of OK transactions.
type txnHistory struct {
	pairs   []Pair
	nodes   []Pair // OK and Info pairs; node i is nodes[i]
	nodeTxn []Txn  // what node i did: its completion (OK) or invocation (Info)
	writes  map[kv]writeInfo
	reads   []read // external reads, filled by the internal checks
}

// newTxnHistory indexes transactions and their writes; register selects
// rw-register micro-operations (w, r) instead of list-append (append, r).
func newTxnHistory(pairs []Pair, register bool) (*txnHistory, error) {
	th := &txnHistory{pairs: pairs, writes: make(map[kv]writeInfo)}
	for pi, p := range pairs {
		t, ok := p.Value().(Txn)
		if !ok {
			return nil, malformed("index %d: txn value of type %T, want Txn", p.Invoke.Index, p.Value())
		}
		if err := validTxn(t, register, p.Type() == OK); err != nil {
			return nil, fmt.Errorf("%w: index %d: %v", ErrMalformed, p.Invoke.Index, err)
		}
		node := int32(-1)
		if p.Type() != Fail {
			node = int32(len(th.nodes))
			th.nodes = append(th.nodes, p)
			th.nodeTxn = append(th.nodeTxn, t)
		}
		if err := th.indexWrites(t, node, pi); err != nil {
			return nil, fmt.Errorf("%w: index %d: %v", ErrMalformed, p.Invoke.Index, err)
		}
	}
	return th, nil
}

// validTxn checks a transaction's micro-operations; completed marks an OK
// completion, whose reads must have values of the workload's shape.
func validTxn(t Txn, register, completed bool) error {
	write := MopAppend
	if register {
		write = MopWrite
	}
	for i, m := range t {
		if m.F != write && m.F != MopRead {
			return fmt.Errorf("micro-op %d is %q; this workload has %q and %q", i, m.F, write, MopRead)
		}
		if (m.F == write || !m.Nil) && m.Value == nilVersion || slices.Contains(m.List, nilVersion) {
			return fmt.Errorf("micro-op %d uses the reserved value %d", i, int64(nilVersion))
		}
		if completed && register && m.F == MopRead && m.List != nil {
			return fmt.Errorf("micro-op %d: a register read returned a list", i)
		}
		if completed && !register && m.F == MopRead && m.List == nil && !m.Nil {
			return fmt.Errorf("micro-op %d: a list read returned a number", i)
		}
	}
	return nil
}

func (th *txnHistory) indexWrites(t Txn, node int32, pair int) error {
	lastAt := make(map[int64]int)
	for i, m := range t {
		if m.F != MopRead {
			lastAt[m.Key] = i
		}
	}
	for i, m := range t {
		if m.F == MopRead {
			continue
		}
		id := kv{m.Key, m.Value}
		if w, dup := th.writes[id]; dup {
			return fmt.Errorf("value %d written to key %d again (first at index %d)", m.Value, m.Key,
				th.pairs[w.pair].Invoke.Index)
		}
		th.writes[id] = writeInfo{node: node, pair: pair, mop: i, last: lastAt[m.Key] == i}
	}
	return nil
}

func (th *txnHistory) internal(rep *report, n int, m Mop, what string) {
	rep.add(Anomaly{Type: "internal", Ops: []Pair{th.nodes[n]},
		Explanation: fmt.Sprintf("key %d: the transaction read %s, but %s from its own earlier reads and writes", m.Key, describeMopValue(m), what)})
}

// futureRead reports a read of a value its own transaction writes only later.
func (th *txnHistory) futureRead(node int32, at int, key int64, l []int64, rep *report) bool {
	later := false
	for _, m := range th.nodeTxn[node][at+1:] {
		later = later || (m.F != MopRead && m.Key == key)
	}
	if !later {
		return false
	}
	for _, v := range l {
		if w, ok := th.writes[kv{key, v}]; ok && w.node == node && w.mop > at {
			rep.add(Anomaly{Type: "future-read", Ops: []Pair{th.nodes[node]},
				Explanation: fmt.Sprintf("key %d: the transaction read %d before it wrote it", key, v)})
			return true
		}
	}
	return false
}

// checkReadValue reports a read of v that no transaction wrote, or that a
// failed transaction wrote.
func (th *txnHistory) checkReadValue(rep *report, node int32, k, v int64) {
	w, ok := th.writes[kv{k, v}]
	switch {
	case !ok:
		rep.add(Anomaly{Type: "garbage-read", Ops: []Pair{th.nodes[node]},
			Explanation: fmt.Sprintf("key %d: read %d, which no operation wrote", k, v)})
	case w.node < 0:
		rep.add(Anomaly{Type: "G1a", Ops: []Pair{th.nodes[node], th.pairs[w.pair]},
			Explanation: fmt.Sprintf("aborted read: key %d: read %d, written by a transaction that failed", k, v)})
	}
}

// checkIntermediate reports an external read that observed v, a non-final
// write to k of another transaction.
func (th *txnHistory) checkIntermediate(rep *report, node int32, k, v int64) {
	w, ok := th.writes[kv{k, v}]
	if ok && w.node >= 0 && w.node != node && !w.last {
		rep.add(Anomaly{Type: "G1b", Ops: []Pair{th.nodes[node], th.pairs[w.pair]},
			Explanation: fmt.Sprintf("intermediate read: key %d: observed %d, which its writer later overwrote within the same transaction", k, v)})
	}
}

// writer returns the graph node that wrote v to k, or -1.
func (th *txnHistory) writer(k, v int64) int32 {
	if w, ok := th.writes[kv{k, v}]; ok {
		return w.node
	}
	return -1
}
