package check

import (
	"fmt"
	"slices"
)

// CheckSideband checks out-of-band causality. A writer transaction commits;
// its client then tells another client, outside the database, which invokes
// a reader transaction whose invocation sets Op.After to the Index of the
// writer's invocation or completion. Under strict serializability the
// reader must observe the writer's writes: for each key the writer wrote
// and the reader reads (its first read of the key, before any write of its
// own), a list read must contain the writer's last append, and a register
// read must return the writer's last write or a version that is not known
// to be older. A register version is known older when it is nil or its
// writer completed before the sideband writer was invoked.
//
// Transactions are Op{F: FTxn}, list-append or rw-register. A reference to
// no operation, to a writer that is not OK, to a reader invoked before the
// writer completed, or between transactions that share no key is an
// ErrMalformed error: the harness broke the protocol. Violations are
// reported as stale-read.
func CheckSideband(h History) (Result, error) {
	pairs, ops, err := selectPairs(h, FTxn)
	if err != nil {
		return Result{}, err
	}
	byIndex := make(map[int]int) // Op.Index of an invocation or completion → pair
	writers := make(map[kv]int)  // key and value → pair that wrote it
	for i, p := range pairs {
		byIndex[p.Invoke.Index] = i
		if p.CompletePos >= 0 {
			byIndex[p.Complete.Index] = i
		}
		t, _ := p.Invoke.Value.(Txn)
		for _, m := range t {
			if m.F != MopRead {
				writers[kv{m.Key, m.Value}] = i
			}
		}
	}
	rep := &report{}
	for _, rd := range pairs {
		if rd.Invoke.After == nil || rd.Type() != OK {
			continue
		}
		wi, ok := byIndex[*rd.Invoke.After]
		if !ok {
			return Result{}, malformed("index %d: after %d names no transaction", rd.Invoke.Index, *rd.Invoke.After)
		}
		if err := checkSidebandPair(rep, pairs, writers, pairs[wi], rd); err != nil {
			return Result{}, err
		}
	}
	return rep.result(ops, pairs), nil
}

func checkSidebandPair(rep *report, pairs []Pair, writers map[kv]int, wr, rd Pair) error {
	if wr.Type() != OK || wr.CompletePos > rd.InvokePos {
		return malformed("index %d follows index %d, which is %s and completed at position %d, after the reader's invocation at %d",
			rd.Invoke.Index, wr.Invoke.Index, wr.Type(), wr.CompletePos, rd.InvokePos)
	}
	wt, _ := wr.Value().(Txn)
	rt, _ := rd.Value().(Txn)
	last := make(map[int64]Mop) // the writer's last write per key
	for _, m := range wt {
		if m.F != MopRead {
			last[m.Key] = m
		}
	}
	shared := false
	seen := make(map[int64]bool) // keys the reader has read or written
	for _, m := range rt {
		w, wrote := last[m.Key]
		if m.F != MopRead || seen[m.Key] || !wrote {
			seen[m.Key] = true
			continue
		}
		seen[m.Key], shared = true, true
		if why := sidebandStale(pairs, writers, wr, w, m); why != "" {
			rep.add(Anomaly{Type: "stale-read", Ops: []Pair{wr, rd}, Explanation: fmt.Sprintf(
				"key %d: the reader, invoked at time %d after the writer's %s of %d completed at time %d, %s",
				m.Key, rd.Invoke.Time, w.F, w.Value, wr.Complete.Time, why)})
		}
	}
	if !shared {
		return malformed("index %d follows index %d but reads none of its keys", rd.Invoke.Index, wr.Invoke.Index)
	}
	return nil
}

// sidebandStale says why read m misses write w, or "" if it does not.
func sidebandStale(pairs []Pair, writers map[kv]int, wr Pair, w, m Mop) string {
	switch {
	case w.F == MopAppend && !slices.Contains(m.List, w.Value):
		return fmt.Sprintf("read %s without it", listString(m.List))
	case w.F == MopAppend, m.Value == w.Value && !m.Nil:
		return ""
	case m.Nil:
		return "read the initial nil"
	}
	if i, ok := writers[kv{m.Key, m.Value}]; ok && pairs[i].Before(wr) {
		return fmt.Sprintf("read %d, written by a transaction that completed before the writer was invoked", m.Value)
	}
	return ""
}
