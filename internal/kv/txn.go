package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

// The Kronos transactional mode (Kronos paper §3.3): multi-key ACID
// transactions on the same store, serialised by Kronos events instead of
// locks or a total order.
//
//   - Each transaction is one Kronos event, named by a clock stamp of its
//     coordinator (vclock.Stamp: owner = coordinator, own counter = its
//     sequence number, other entries 0, so stamps of different coordinators
//     are concurrent and only Kronos orders them).
//   - The coordinator (Txn) sends each key's part to the key's primary
//     server (the first of its preference list). That server's participant
//     (TxnParticipant) makes the transaction the key's last one at once and
//     asks Kronos to order it after the previous last transaction of every
//     key it touches — one atomic assign_order batch of must pairs
//     (order.Must). If Kronos refuses (the opposite order is already
//     established through other servers), the server votes no.
//   - With every vote yes the coordinator commits, else aborts; either way
//     it tells every participant. A participant applies a committed
//     transaction once it heads the queue of every key it touches there
//     (earlier transactions on those keys applied or aborted): reads see the
//     state after all predecessors, writes supersede every sibling.
//
// Why it is serialisable: on each server, every two committed transactions
// on a key are ordered in Kronos as the server prepared them (see Prepare),
// and each server applies in that order. Kronos keeps the union of all chains acyclic, refusing the
// edge that would close a cycle, so any topological order of the event
// graph is a serial order agreeing with every server (the paper: "any
// topological sort of the event dependency graph will yield a schedule ...
// equivalent to the actual execution"). Transactions on disjoint keys are
// never ordered. It is also strict: a transaction that begins after another
// ended is prepared after it on every shared key.
//
// These cores hold no durable state; the shell (txn_server.go,
// txn_store.go) stores prepared parts and commit decisions and recovers
// them after a crash, and replicate each write to the key's other N−1
// replicas through a durable outbox (txn_outbox.go); the Kronos clock events are not yet
// released (order.Local.Cleanup) — participants would first have to forget
// applied-transaction entries below the watermark. The participant keeps
// one entry per key ever used transactionally (and the shell one record
// each in Pebble).

// TxnWrite is one write of a transaction: Value replaces the key's value,
// or, with Add, Value is a signed decimal integer added to the key's
// current value read as one (absent: 0) at the transaction's place in the
// serial order — what a transfer between accounts needs, since a
// transaction's writes are fixed before it runs.
type TxnWrite struct {
	Key   string
	Value []byte
	Add   bool
}

// TxnExec is a committed transaction's part for one server, handed out in
// the order the server must run them: read Reads, then write Writes.
type TxnExec struct {
	Txn    vclock.Stamp
	Reads  []string
	Writes []TxnWrite
}

// TxnParticipant is one server's transactional core (pure: no I/O, no
// clocks; the shell calls Kronos and the store). Not safe for concurrent
// use.
type TxnParticipant struct {
	pendingMax int
	applied    map[string]vclock.Stamp // last committed transaction applied on the key
	queues     map[string][]string     // per key: pending transactions in prepare order
	txns       map[string]*ptxn        // pending, by stampKey
	ready      []TxnExec
}

type ptxn struct {
	id      vclock.Stamp
	keys    []string // sorted, distinct
	reads   []string
	writes  []TxnWrite
	decided bool
	commit  bool
}

// NewTxnParticipant returns a participant holding at most pendingMax
// undecided or unapplied transactions (beyond: ErrOverloaded).
func NewTxnParticipant(pendingMax int) *TxnParticipant {
	return &TxnParticipant{pendingMax: pendingMax, applied: map[string]vclock.Stamp{}, queues: map[string][]string{}, txns: map[string]*ptxn{}}
}

func stampKey(s vclock.Stamp) string { return fmt.Sprintf("%d/%d/%d", s.Clock.Epoch, s.Owner, s.Seq()) }

// Prepare queues transaction t's part here (reads and writes of keys this
// server is primary for) and returns the transactions Kronos must order
// before it: for each key, every transaction still queued on it (undecided,
// or committed and waiting to run) and the last committed one applied. The
// shell passes them to order.Must and reports the answer to the
// coordinator as t's vote.
//
// Not just "the previous transaction": that one may abort because Kronos
// refused one of its own orders, and a chain C1 → A → C2 through an aborted
// A whose edge C1 → A was refused would leave C1 and C2 unordered in Kronos
// although this server runs C1 first. Ordering t after each queued
// transaction directly, and after the last applied one (whose own orders
// all held, since it committed), keeps every pair of committed
// transactions on a key ordered in Kronos as this server runs them.
func (p *TxnParticipant) Prepare(t vclock.Stamp, reads []string, writes []TxnWrite) ([]vclock.Stamp, error) {
	id := stampKey(t)
	if _, dup := p.txns[id]; dup {
		return nil, fmt.Errorf("%w: transaction %s prepared twice", kvcore.ErrInvalid, t)
	}
	if len(p.txns) >= p.pendingMax {
		return nil, fmt.Errorf("%w: %d transactions pending", kvcore.ErrOverloaded, len(p.txns))
	}
	keys := slices.Clone(reads)
	for _, w := range writes {
		keys = append(keys, w.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: transaction %s has no keys here", kvcore.ErrInvalid, t)
	}
	var prevs []vclock.Stamp
	add := func(s vclock.Stamp) {
		if !slices.ContainsFunc(prevs, func(q vclock.Stamp) bool { return stampKey(q) == stampKey(s) }) {
			prevs = append(prevs, s)
		}
	}
	for _, k := range keys {
		if prev, ok := p.applied[k]; ok {
			add(prev)
		}
		for _, q := range p.queues[k] {
			add(p.txns[q].id)
		}
		p.queues[k] = append(p.queues[k], id)
	}
	p.txns[id] = &ptxn{id: t, keys: keys, reads: slices.Clone(reads), writes: slices.Clone(writes)}
	return prevs, nil
}

// Decide records the coordinator's decision on t and queues, in Ready, every
// transaction that can now run.
func (p *TxnParticipant) Decide(t vclock.Stamp, commit bool) error {
	x, ok := p.txns[stampKey(t)]
	if !ok {
		return fmt.Errorf("%w: decision on transaction %s, which is not pending here", kvcore.ErrInvalid, t)
	}
	x.decided, x.commit = true, commit
	if !commit {
		// An aborted transaction has no effect and no place in the order:
		// it leaves every queue now. The others keep their prepare order.
		id := stampKey(t)
		for _, k := range x.keys {
			p.queues[k] = slices.DeleteFunc(p.queues[k], func(q string) bool { return q == id })
			if len(p.queues[k]) == 0 {
				delete(p.queues, k)
			}
		}
		delete(p.txns, id)
	}
	p.drain(x.keys)
	return nil
}

// drain runs what heads its queues, starting from keys, until nothing moves.
func (p *TxnParticipant) drain(keys []string) {
	work := slices.Clone(keys)
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		q := p.queues[k]
		if len(q) == 0 {
			continue
		}
		x := p.txns[q[0]]
		if !x.decided || !p.heads(x) {
			continue
		}
		p.ready = append(p.ready, TxnExec{Txn: x.id, Reads: x.reads, Writes: x.writes})
		for _, xk := range x.keys {
			p.applied[xk] = x.id
			p.queues[xk] = p.queues[xk][1:]
			if len(p.queues[xk]) == 0 {
				delete(p.queues, xk)
			}
			work = append(work, xk)
		}
		delete(p.txns, stampKey(x.id))
	}
}

// heads reports whether x is first in the queue of every key it touches.
func (p *TxnParticipant) heads(x *ptxn) bool {
	id := stampKey(x.id)
	for _, k := range x.keys {
		if q := p.queues[k]; len(q) == 0 || q[0] != id {
			return false
		}
	}
	return true
}

// Ready returns the committed transactions to run, in order.
func (p *TxnParticipant) Ready() []TxnExec { return p.ready }

// Advance forgets what Ready returned.
func (p *TxnParticipant) Advance() { p.ready = p.ready[:0] }

// SetApplied records t as the last transaction run on key: what a
// restarted server reloads (its stored record of the last part run on
// each key) before any Prepare, so that later transactions on key are
// ordered after t in Kronos as before the restart.
func (p *TxnParticipant) SetApplied(key string, t vclock.Stamp) { p.applied[key] = t }

// Pending counts transactions prepared and not yet applied or aborted.
func (p *TxnParticipant) Pending() int { return len(p.txns) }

// Vote is the shell's step between Prepare and the coordinator: it asks
// the oracle to order prevs before t and turns the answer into a vote
// (nil: yes; ErrTxnConflict: no; other errors: the oracle failed, also no).
func Vote(ctx context.Context, o order.Oracle, prevs []vclock.Stamp, t vclock.Stamp) error {
	if err := order.Must(ctx, o, prevs, t); err != nil {
		if errors.Is(err, order.ErrStale) {
			return fmt.Errorf("%w: %v", kvcore.ErrTxnConflict, err)
		}
		return err
	}
	return nil
}

// TxnPart is one server's share of a transaction.
type TxnPart struct {
	Server int
	Reads  []string
	Writes []TxnWrite
}

// Txn is the coordinator of one transaction (pure): it splits the
// transaction by primary server, collects votes, decides, and collects the
// reads of the committed parts.
type Txn struct {
	ID     vclock.Stamp
	parts  []TxnPart
	votes  []int8 // per part: 0 waiting, 1 yes, −1 no
	why    error
	done   []bool
	reads  map[string][]kvcore.Sibling
	decide *bool
}

// NewTxn splits a transaction stamped id by primary(key), the key's
// primary server.
func NewTxn(id vclock.Stamp, reads []string, writes []TxnWrite, primary func(key string) int) (*Txn, error) {
	if len(reads)+len(writes) == 0 {
		return nil, fmt.Errorf("%w: empty transaction", kvcore.ErrInvalid)
	}
	t := &Txn{ID: id, reads: map[string][]kvcore.Sibling{}}
	part := func(s int) *TxnPart {
		for i := range t.parts {
			if t.parts[i].Server == s {
				return &t.parts[i]
			}
		}
		t.parts = append(t.parts, TxnPart{Server: s})
		return &t.parts[len(t.parts)-1]
	}
	for _, k := range reads {
		p := part(primary(k))
		p.Reads = append(p.Reads, k)
	}
	seen := map[string]bool{}
	for _, w := range writes {
		if seen[w.Key] {
			return nil, fmt.Errorf("%w: key %q written twice", kvcore.ErrInvalid, w.Key)
		}
		seen[w.Key] = true
		p := part(primary(w.Key))
		p.Writes = append(p.Writes, w)
	}
	slices.SortFunc(t.parts, func(a, b TxnPart) int { return a.Server - b.Server })
	t.votes, t.done = make([]int8, len(t.parts)), make([]bool, len(t.parts))
	return t, nil
}

// Parts are the prepares to send, one per server.
func (t *Txn) Parts() []TxnPart { return t.parts }

// Vote takes server's vote; once every server has voted it returns the
// decision to send to all of them (decided true).
func (t *Txn) Vote(server int, err error) (commit, decided bool) {
	i := t.index(server)
	if i < 0 || t.votes[i] != 0 || t.decide != nil {
		return false, false
	}
	t.votes[i] = 1
	if err != nil {
		t.votes[i] = -1
		if t.why == nil {
			t.why = fmt.Errorf("server %d: %w", server, err)
		}
	}
	if slices.Contains(t.votes, 0) {
		return false, false
	}
	c := !slices.Contains(t.votes, -1)
	t.decide = &c
	return c, true
}

// Applied takes a committed part's reads.
func (t *Txn) Applied(server int, reads map[string][]kvcore.Sibling) {
	if i := t.index(server); i >= 0 && t.decide != nil && *t.decide {
		t.done[i] = true
		for k, v := range reads {
			t.reads[k] = v
		}
	}
}

// Done reports the outcome: the reads of a committed transaction once every
// part has run, or the abort's reason (wrapping ErrTxnConflict when Kronos
// refused an order).
func (t *Txn) Done() (reads map[string][]kvcore.Sibling, done bool, err error) {
	switch {
	case t.decide == nil:
		return nil, false, nil
	case !*t.decide:
		return nil, true, fmt.Errorf("kv: transaction %s aborted: %w", t.ID, t.why)
	case slices.Contains(t.done, false):
		return nil, false, nil
	}
	return t.reads, true, nil
}

func (t *Txn) index(server int) int {
	return slices.IndexFunc(t.parts, func(p TxnPart) bool { return p.Server == server })
}

// TxnActor is the actor id under which server's transactions write: the
// top bit set keeps it apart from client sessions' random ids in practice.
func TxnActor(server int) uint64 { return 1<<63 | uint64(server)<<32 | 0x7478 }

// ExecTxn runs a committed part on the replica: reads, then writes, each
// write superseding every sibling of its key (a transaction's write is
// last-writer-wins at its place in the serial order).
func (r *Replica) ExecTxn(e TxnExec) (map[string][]kvcore.Sibling, error) {
	reads := make(map[string][]kvcore.Sibling, len(e.Reads))
	for _, k := range e.Reads {
		sibs, _, err := r.Get(k, vclock.HVC{})
		if err != nil {
			return nil, err
		}
		reads[k] = sibs
	}
	actor := TxnActor(r.cfg.Self)
	for _, w := range e.Writes {
		cur, _, err := r.Get(w.Key, vclock.HVC{})
		if err != nil {
			return nil, err
		}
		value := w.Value
		if w.Add {
			if value, err = addDecimal(currentValue(cur), string(w.Value)); err != nil {
				return nil, fmt.Errorf("key %q: %w", w.Key, err)
			}
		}
		ctx := kvcore.Versions(cur)
		v := kvcore.Descend(ctx, actor, kvcore.NextCounter(0, ctx, actor), kvcore.VersionEntriesMax)
		if _, _, err := r.Put(w.Key, kvcore.Sibling{Version: v, Value: value}, vclock.HVC{}); err != nil {
			return nil, err
		}
	}
	return reads, nil
}

// addDecimal adds the decimal delta to the decimal cur ("" reads as 0).
func addDecimal(cur, delta string) ([]byte, error) {
	a := int64(0)
	if cur != "" {
		var err error
		if a, err = strconv.ParseInt(cur, 10, 64); err != nil {
			return nil, fmt.Errorf("%w: add to a value that is not a decimal integer: %q", kvcore.ErrInvalid, cur)
		}
	}
	d, err := strconv.ParseInt(delta, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: add of %q, not a decimal integer", kvcore.ErrInvalid, delta)
	}
	return strconv.AppendInt(nil, a+d, 10), nil
}
