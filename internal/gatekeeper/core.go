package gatekeeper

import (
	"fmt"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Entry is one message of a gatekeeper→shard FIFO channel: a committed
// transaction's operations for that shard, or a NOP (no operations) that
// tells the shard this gatekeeper has nothing before Stamp.
type Entry struct {
	GK    uint32
	Seq   uint64 // consecutive per (gatekeeper, shard), from 1
	Stamp vclock.Stamp
	Ops   []txn.ShardOp
	Nop   bool
}

// Delivery is an entry addressed to a shard.
type Delivery struct {
	Shard uint32
	Entry Entry
}

// Config configures a gatekeeper core.
type Config struct {
	ID          uint32
	Gatekeepers int
	Shards      int
	Epoch       uint64
	// InflightMax bounds the FIFO slots not yet delivered: transactions stamped
	// and not yet resolved, resolved ones queued behind them, and queued NOPs
	// (at most one per shard). BeginCommit beyond it answers ErrOverloaded.
	InflightMax int
	// PeerAck: gatekeepers run in separate processes, so answers wait until
	// every peer has merged their stamps (peers.go).
	PeerAck bool
	// ReadPoints: BeginCommit first stamps a read point, an event just
	// before the transaction, and ReadPoint offers the point of the oldest
	// transaction in flight, so that a read can be stamped before every
	// transaction not yet handed to the shards instead of after them (and
	// so not wait for their durable commit). One process only: the shell
	// must check that no other gatekeeper handed off a transaction the point
	// does not cover (see ReadPoint).
	ReadPoints bool
}

type slot struct {
	stamp    vclock.Stamp
	point    vclock.Stamp // ReadPoints: the read point stamped just before stamp
	resolved bool
	ops      []txn.ShardOp // nil: aborted, or a NOP
	nopShard int           // ≥ 0 for a NOP slot
	// declared: the transaction will write at most the shards in shards
	// (Declare), so it holds back nothing addressed to other shards.
	declared bool
	shards   []uint32
}

// touches reports whether the slot may still send to shard: an undeclared
// unresolved transaction may send anywhere.
func (sl *slot) touches(shard uint32) bool {
	switch {
	case sl.nopShard >= 0:
		return uint32(sl.nopShard) == shard
	case sl.resolved:
		for _, op := range sl.ops {
			if op.Shard == shard {
				return true
			}
		}
		return false
	case !sl.declared:
		return true
	}
	for _, s := range sl.shards {
		if s == shard {
			return true
		}
	}
	return false
}

// Core is the gatekeeper state machine.
type Core struct {
	cfg      Config
	clock    vclock.Clock
	slots    []slot // in stamp order; resolved ones at the front are flushed
	seq      []uint64
	out      []Delivery
	acked    []vclock.Stamp
	nopsWant []bool   // a NOP for shard s is queued behind in-flight slots
	peerSeen []uint64 // per peer: the highest own counter it has merged (PeerClock)
	holds    []held   // answers waiting for stability (Hold)
}

// ErrOverloaded reports too many transactions in flight.
var ErrOverloaded = fmt.Errorf("gatekeeper: too many transactions in flight")

// New returns a core with a zero clock of the given epoch.
func New(cfg Config) *Core {
	return &Core{
		cfg:      cfg,
		clock:    vclock.New(cfg.Epoch, cfg.Gatekeepers),
		seq:      make([]uint64, cfg.Shards),
		nopsWant: make([]bool, cfg.Shards),
		peerSeen: make([]uint64, cfg.Gatekeepers),
	}
}

// Clock returns a copy of the current clock.
func (c *Core) Clock() vclock.Clock { return c.clock.Clone() }

// Merge folds a clock announced by a peer (or carried by a NOP request) into
// this gatekeeper's clock. Clocks of other epochs are ignored.
func (c *Core) Merge(o vclock.Clock) {
	if o.Epoch == c.clock.Epoch && len(o.Counters) == len(c.clock.Counters) {
		c.clock.Merge(o)
	}
}

// Stamp ticks the clock and returns a fresh stamp (for node programs and
// snapshots, which do not travel through the FIFO channels).
func (c *Core) Stamp() vclock.Stamp {
	c.clock.Tick(int(c.cfg.ID))
	return vclock.Stamp{Clock: c.clock.Clone(), Owner: c.cfg.ID}
}

// BeginCommit stamps a write transaction and reserves its place in the FIFO
// order; Resolve must follow.
func (c *Core) BeginCommit() (vclock.Stamp, error) {
	if c.cfg.InflightMax > 0 && len(c.slots) >= c.cfg.InflightMax {
		return vclock.Stamp{}, ErrOverloaded
	}
	var p vclock.Stamp
	if c.cfg.ReadPoints {
		p = c.Stamp()
	}
	s := c.Stamp()
	c.slots = append(c.slots, slot{stamp: s, point: p, nopShard: -1})
	return s, nil
}

// ReadPoint returns, with ReadPoints, the read point of the oldest
// transaction in flight (stamped, not yet handed to Ready): it follows
// every transaction this gatekeeper handed off and precedes every one it
// has in flight, so a read stamped with it waits for none of them. ok is
// false when nothing is in flight (a fresh Stamp then waits for nothing
// of this gatekeeper's either) or without ReadPoints.
//
// The point covers only what the clock had merged when it was stamped: a
// shell must not use it once another gatekeeper has handed off a
// transaction whose clock the point does not follow (ChooseReadPoint; the
// reader could then miss an acknowledged write, or one a finished read
// saw).
func (c *Core) ReadPoint() (vclock.Stamp, bool) {
	if !c.cfg.ReadPoints || len(c.slots) == 0 || c.slots[0].nopShard >= 0 || c.slots[0].point.IsZero() {
		return vclock.Stamp{}, false
	}
	return c.slots[0].point, true
}

// Resolve ends a stamped transaction: ops (nil when it aborted) are delivered
// to their shards once every earlier stamp is resolved.
func (c *Core) Resolve(s vclock.Stamp, ops []txn.ShardOp) error {
	for i := range c.slots {
		if c.slots[i].nopShard < 0 && !c.slots[i].resolved && vclock.CompareStamps(c.slots[i].stamp, s) == vclock.Equal {
			c.slots[i].resolved = true
			c.slots[i].ops = ops
			c.flush()
			return nil
		}
	}
	return fmt.Errorf("gatekeeper: resolve of unknown stamp %s", s)
}

// Declare narrows an unresolved transaction's reach before its (slow)
// durable commit: it will write at most shards. NOPs for other shards then
// need not wait behind it (flush), and NoteFor may answer for them. The
// shell must not later Resolve it with operations on other shards.
func (c *Core) Declare(s vclock.Stamp, shards []uint32) error {
	for i := range c.slots {
		sl := &c.slots[i]
		if sl.nopShard < 0 && !sl.resolved && vclock.CompareStamps(sl.stamp, s) == vclock.Equal {
			sl.declared, sl.shards = true, append([]uint32(nil), shards...)
			c.flush()
			return nil
		}
	}
	return fmt.Errorf("gatekeeper: declare of unknown stamp %s", s)
}

// RequestNop answers a shard that needs this gatekeeper's queue to move past
// clock: the clock is merged (so the NOP's stamp is after it) and a NOP is
// queued for the shard behind any in-flight transactions. A NOP already
// queued for the shard and not yet delivered is not duplicated.
func (c *Core) RequestNop(shard uint32, clock vclock.Clock) {
	c.Merge(clock)
	if c.nopsWant[shard] {
		return
	}
	c.nopsWant[shard] = true
	s := c.Stamp()
	c.slots = append(c.slots, slot{stamp: s, resolved: true, nopShard: int(shard)})
	c.flush()
}

// flush delivers resolved slots at the front, in stamp order, then any NOP
// that nothing still undelivered before it could send to its shard ahead
// of (every earlier slot is declared or resolved, and none touches the
// NOP's shard): per-shard FIFO order is all a shard needs.
func (c *Core) flush() {
	n := 0
	for n < len(c.slots) && c.slots[n].resolved {
		sl := c.slots[n]
		if sl.nopShard >= 0 {
			c.nopsWant[sl.nopShard] = false
			c.deliver(uint32(sl.nopShard), sl.stamp, nil, true)
		} else {
			c.deliverOps(sl)
			if sl.ops != nil {
				c.acked = append(c.acked, sl.stamp)
			}
		}
		n++
	}
	if n > 0 {
		c.slots = append(c.slots[:0], c.slots[n:]...)
	}
	kept := c.slots[:0]
	for i, sl := range c.slots {
		if sl.nopShard >= 0 && !c.blocked(uint32(sl.nopShard), i) {
			c.nopsWant[sl.nopShard] = false
			c.deliver(uint32(sl.nopShard), sl.stamp, nil, true)
			continue
		}
		kept = append(kept, sl)
	}
	for i := len(kept); i < len(c.slots); i++ {
		c.slots[i] = slot{}
	}
	c.slots = kept
}

// blocked reports whether a slot before index end may still send to shard.
func (c *Core) blocked(shard uint32, end int) bool {
	for i := 0; i < end; i++ {
		if c.slots[i].touches(shard) {
			return true
		}
	}
	return false
}

func (c *Core) deliverOps(sl slot) {
	if len(sl.ops) == 0 {
		return
	}
	// Group by shard, keeping operation order within a shard; shards in
	// increasing order so the output is deterministic.
	var per = make(map[uint32][]txn.ShardOp)
	var shards []uint32
	for _, op := range sl.ops {
		if _, ok := per[op.Shard]; !ok {
			shards = append(shards, op.Shard)
		}
		per[op.Shard] = append(per[op.Shard], op)
	}
	sortU32(shards)
	for _, s := range shards {
		c.deliver(s, sl.stamp, per[s], false)
	}
}

func sortU32(a []uint32) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func (c *Core) deliver(shard uint32, s vclock.Stamp, ops []txn.ShardOp, nop bool) {
	c.seq[shard]++
	c.out = append(c.out, Delivery{Shard: shard, Entry: Entry{GK: c.cfg.ID, Seq: c.seq[shard], Stamp: s, Ops: ops, Nop: nop}})
}

// Ready returns the deliveries produced since the last call, in order; the
// shell must hand them to the shards in this order.
func (c *Core) Ready() []Delivery {
	out := c.out
	c.out = nil
	return out
}

// Acked returns the committed transactions whose entries have been handed to
// Ready since the last call: only now may their clients be answered, because
// a shard may run a later program only after seeing everything before it in
// this gatekeeper's FIFO order.
//
// With PeerAck, a commit is returned only once it is also Stable; the rest
// wait for a later call (in stamp order, so a stable prefix).
func (c *Core) Acked() []vclock.Stamp {
	n := 0
	for n < len(c.acked) && c.Stable(c.acked[n]) {
		n++
	}
	a := c.acked[:n:n]
	c.acked = append([]vclock.Stamp(nil), c.acked[n:]...)
	if len(c.acked) == 0 {
		c.acked = nil
	}
	return a
}

// Idle reports that every stamp so far has been resolved and handed to
// Ready: nothing this gatekeeper stamped is still to be delivered.
func (c *Core) Idle() bool { return len(c.slots) == 0 && len(c.out) == 0 }

// Note answers a NOP request without a NOP when the gatekeeper is idle: it
// merges clock and returns its own clock, which then bounds everything it
// will still send from below (shard.Core.Complete). ok is false when
// entries are in flight; the shell then asks RequestNop. Only a shell whose
// deliveries reach the shard before the note may use it (one process).
func (c *Core) Note(clock vclock.Clock) (vclock.Clock, bool) {
	if !c.Idle() {
		return vclock.Clock{}, false
	}
	c.Merge(clock)
	return c.clock.Clone(), true
}

// NoteFor is Note for one shard: it answers when nothing undelivered may
// still send to shard (in-flight transactions declared elsewhere do not
// count), with its clock after merging clock; or, when what may still send
// to shard is all after clock, with clock itself. The note is valid for
// that shard only.
func (c *Core) NoteFor(shard uint32, clock vclock.Clock) (vclock.Clock, bool) {
	if len(c.out) > 0 {
		return vclock.Clock{}, false
	}
	if !c.blocked(shard, len(c.slots)) {
		c.Merge(clock)
		return c.clock.Clone(), true
	}
	// Slots that may still send to the shard: if every one is after clock,
	// everything still to come is (later stamps follow the merged clock),
	// so clock itself is a note — a weaker one, that lets a read stamped
	// before those transactions (ReadPoint) run without waiting for them.
	// A request without a clock (the GC's, to move the shard's position)
	// gets no such note: it needs the NOP behind the transactions.
	if clock.Counters == nil {
		return vclock.Clock{}, false
	}
	for i := range c.slots {
		if c.slots[i].touches(shard) && vclock.Compare(c.slots[i].stamp.Clock, clock) != vclock.After {
			return vclock.Clock{}, false
		}
	}
	c.Merge(clock)
	return clock.Clone(), true
}

// Inflight returns the stamps of unresolved transactions, oldest first.
func (c *Core) Inflight() []vclock.Stamp {
	var out []vclock.Stamp
	for _, sl := range c.slots {
		if !sl.resolved {
			out = append(out, sl.stamp)
		}
	}
	return out
}
