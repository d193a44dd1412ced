package check

import (
	"fmt"
	"maps"
	"slices"
)

// CheckListAppend checks a list-append history (Elle's "append" workload)
// for strict serializability. Transactions are Op{F: FTxn} with Txn values
// of Append and ReadList micro-operations; every appended value must be
// unique per key. A read returns the key's whole list; a nil read in a
// completion is the empty list.
//
// It infers each key's version order from its longest read, then ww, wr and
// rw dependencies, process and real-time order, and reports dependency
// cycles, plus G1a (a read of a failed append), G1b (a read ending in a
// non-final append of another transaction), internal, future-read,
// incompatible-order, duplicate-elements and garbage-read. The error is
// ErrMalformed for histories that break the workload's rules.
func CheckListAppend(h History) (Result, error) {
	pairs, ops, err := selectPairs(h, FTxn)
	if err != nil {
		return Result{}, err
	}
	la, err := newTxnHistory(pairs, false)
	if err != nil {
		return Result{}, err
	}
	rep := &report{}
	la.checkInternalLists(rep)
	all := la.allListReads()
	orders := la.listOrders(rep, all)
	la.checkListReads(rep, all)
	g := newGraph(len(la.nodes))
	keys := la.listKeys()
	for _, k := range slices.Sorted(maps.Keys(orders)) {
		lk := keys[k]
		if lk == nil {
			lk = &listKey{} // only reads that failed internal checks
		}
		la.listEdges(g, k, orders[k], lk)
	}
	g.addOrderEdges(la.nodes)
	g.build()
	g.reportCycles(la.nodes, rep)
	return rep.result(ops, pairs), nil
}

// checkInternalLists checks that each OK transaction's reads agree with its
// own earlier reads and appends, and records its external reads.
func (th *txnHistory) checkInternalLists(rep *report) {
	type state struct {
		known bool
		list  []int64 // the list as the transaction must see it, once known
		own   []int64 // appends before the first read
	}
	for n, p := range th.nodes {
		if p.Type() != OK {
			continue
		}
		keys := make(map[int64]*state)
		for i, m := range th.nodeTxn[n] {
			s := keys[m.Key]
			if s == nil {
				s = &state{}
				keys[m.Key] = s
			}
			switch {
			case m.F == MopAppend && s.known:
				s.list = append(slices.Clip(s.list), m.Value)
			case m.F == MopAppend:
				s.own = append(s.own, m.Value)
			case s.known:
				if !slices.Equal(m.List, s.list) {
					th.internal(rep, n, m, "it expected "+listString(s.list))
				}
			case !hasSuffix(m.List, s.own):
				th.internal(rep, n, m, "it expected a list ending in its own appends "+listString(s.own))
			case !th.futureRead(int32(n), i, m.Key, m.List, rep):
				ext := m.List[:len(m.List)-len(s.own)]
				th.reads = append(th.reads, read{node: int32(n), key: m.Key, list: ext})
			}
			if m.F == MopRead {
				s.known, s.list = true, m.List
			}
		}
	}
}

func hasSuffix(l, suffix []int64) bool {
	return len(l) >= len(suffix) && slices.Equal(l[len(l)-len(suffix):], suffix)
}

// listOrders returns each key's version order, the longest of its reads, for
// keys whose reads are duplicate-free and prefixes of one another.
func (th *txnHistory) listOrders(rep *report, all []read) map[int64][]int64 {
	longest := make(map[int64]read)
	bad := make(map[int64]bool)
	for _, r := range all {
		if bad[r.key] {
			continue
		}
		if d, ok := duplicate(r.list); ok {
			bad[r.key] = true
			rep.add(Anomaly{Type: "duplicate-elements", Ops: []Pair{th.nodes[r.node]},
				Explanation: fmt.Sprintf("key %d: the read %s contains %d more than once", r.key, listString(r.list), d)})
			continue
		}
		l, ok := longest[r.key]
		switch {
		case !ok || isPrefix(l.list, r.list):
			longest[r.key] = r
		case isPrefix(r.list, l.list):
		default:
			bad[r.key] = true
			rep.add(Anomaly{Type: "incompatible-order", Ops: []Pair{th.nodes[l.node], th.nodes[r.node]},
				Explanation: fmt.Sprintf("key %d: the reads %s and %s are not prefixes of one another", r.key,
					listString(l.list), listString(r.list))})
		}
	}
	out := make(map[int64][]int64)
	for k, r := range longest {
		if !bad[k] {
			out[k] = r.list
		}
	}
	return out
}

// allListReads returns the full lists read by OK transactions (own appends
// included), in node order.
func (th *txnHistory) allListReads() []read {
	var out []read
	for n, p := range th.nodes {
		if p.Type() != OK {
			continue
		}
		for _, m := range th.nodeTxn[n] {
			if m.F == MopRead {
				out = append(out, read{node: int32(n), key: m.Key, list: m.List})
			}
		}
	}
	return out
}

func duplicate(l []int64) (int64, bool) {
	seen := make(map[int64]bool, len(l))
	for _, v := range l {
		if seen[v] {
			return v, true
		}
		seen[v] = true
	}
	return 0, false
}

func isPrefix(a, b []int64) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

// checkListReads reports reads of values never appended (garbage-read), of
// failed appends (G1a), and external reads ending in another transaction's
// non-final append (G1b).
func (th *txnHistory) checkListReads(rep *report, all []read) {
	for _, r := range all {
		for _, v := range r.list {
			th.checkReadValue(rep, r.node, r.key, v)
		}
	}
	for _, r := range th.reads {
		if len(r.list) == 0 {
			continue
		}
		th.checkIntermediate(rep, r.node, r.key, r.list[len(r.list)-1])
	}
}

// listKey gathers one key's external reads and OK appends, in node order.
type listKey struct {
	reads   []read
	appends []unread
}

// unread is an OK transaction's append, unread when no read observed it.
type unread struct {
	node int32
	v    int64
}

func (th *txnHistory) listKeys() map[int64]*listKey {
	keys := make(map[int64]*listKey)
	get := func(k int64) *listKey {
		if keys[k] == nil {
			keys[k] = &listKey{}
		}
		return keys[k]
	}
	for _, r := range th.reads {
		get(r.key).reads = append(get(r.key).reads, r)
	}
	for n, p := range th.nodes {
		if p.Type() != OK {
			continue
		}
		for _, m := range th.nodeTxn[n] {
			if m.F == MopAppend {
				get(m.Key).appends = append(get(m.Key).appends, unread{node: int32(n), v: m.Value})
			}
		}
	}
	return keys
}

// listEdges adds the ww, wr and rw edges of key k with version order order.
func (th *txnHistory) listEdges(g *graph, k int64, order []int64, lk *listKey) {
	last := int32(-1) // writer of the last element with a committed writer
	var lastV int64
	for _, v := range order {
		w := th.writer(k, v)
		if w < 0 {
			continue
		}
		if last >= 0 && last != w {
			g.add(rawEdge{from: last, to: w, label: lWW, why: whyListNext, key: k, a: lastV, b: v})
		}
		last, lastV = w, v
	}
	unread := unreadAppends(order, lk.appends)
	for _, u := range unread {
		if last >= 0 && u.node != last {
			g.add(rawEdge{from: last, to: u.node, label: lWW, why: whyListUnread, key: k, a: lastV, b: u.v})
		}
	}
	for _, r := range lk.reads {
		th.readEdges(g, r, order, unread)
	}
}

// unreadAppends returns, per OK transaction with an append not in order,
// its first such append. Such a value follows all of order.
func unreadAppends(order []int64, appends []unread) []unread {
	in := make(map[int64]bool, len(order))
	for _, v := range order {
		in[v] = true
	}
	var out []unread
	for _, a := range appends {
		if !in[a.v] && (len(out) == 0 || out[len(out)-1].node != a.node) {
			out = append(out, a)
		}
	}
	return out
}

// readEdges adds the wr edge into an external read and the rw edge out of it:
// to the writer of the next element by another transaction, or, if the read
// saw every element read anywhere, to each transaction with an unread append.
func (th *txnHistory) readEdges(g *graph, r read, order []int64, unread []unread) {
	prev, prevV := int32(-1), int64(nilVersion)
	if n := len(r.list); n > 0 {
		prevV = r.list[n-1]
		prev = th.writer(r.key, prevV)
		if prev >= 0 {
			g.add(rawEdge{from: prev, to: r.node, label: lWR, why: whyListRead, key: r.key, a: prevV})
		}
	}
	for _, v := range order[len(r.list):] {
		w := th.writer(r.key, v)
		if w >= 0 && w != prev {
			g.add(rawEdge{from: r.node, to: w, label: lRW, why: whyListAnti, key: r.key, a: prevV, b: v})
			return
		}
	}
	for _, u := range unread {
		if u.node != prev {
			g.add(rawEdge{from: r.node, to: u.node, label: lRW, why: whyListAntiUnread, key: r.key, a: prevV, b: u.v})
		}
	}
}

func listString(l []int64) string {
	b, _ := marshalValue(l)
	if l == nil {
		return "[]"
	}
	return string(b)
}

func describeMopValue(m Mop) string {
	switch {
	case m.Nil:
		return "nil"
	case m.List != nil:
		return listString(m.List)
	}
	return fmt.Sprint(m.Value)
}
