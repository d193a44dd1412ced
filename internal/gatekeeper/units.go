package gatekeeper

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Moving placement units between shards (docs/online-moves.md): the two
// checks that run in the store's serialized commit section.

// ErrUnitMoved is OrderCommit's abort (a txn.ErrAborted) for a transaction
// routed by a directory older than a move of a unit it wrote: the caller
// refreshes its directory from the store before it retries.
var ErrUnitMoved = fmt.Errorf("%w: a placement unit moved", txn.ErrAborted)

// HomeIn reads unit u's directory record in the commit section: where it
// lives now (its base shard if it never moved) and the stamp of the move
// that put it there.
func HomeIn(c store.Critical, u txn.Unit, base uint32) (txn.Home, error) {
	b, ok, err := c.Get(txn.DirKey(u))
	if err != nil || !ok {
		return txn.BaseHome(u, base), err
	}
	return txn.DecodeHome(b)
}

// OrderCommit is OrderAfterAccess for a transaction executed with a
// directory (txn.Exec.Dir): it also checks that every unit it wrote still
// lives on the shard its operations went to — else the unit moved after the
// execution read the directory, and the transaction aborts (retryable) —
// orders ts after the move that put each unit there, and marks the units
// whose population it changed (txn.PopKey), so that a move which read them
// earlier aborts. d is the directory the execution routed by; current
// says, as the caller knows it inside this commit section, that every move
// that began is in d (none in flight, none committed since d): then d's
// homes are the store's and the directory records are not read.
func OrderCommit(ctx context.Context, o order.Oracle, c store.Critical, ts vclock.Stamp, res *txn.Result, d *txn.Directory, current bool) error {
	var prevs []vclock.Stamp
	for _, r := range res.Units {
		h := d.HomeOf(r.Unit)
		if !current {
			var err error
			if h, err = HomeIn(c, r.Unit, d.Base()); err != nil {
				return err
			}
		}
		if h.Shard != r.Shard {
			return fmt.Errorf("%w: unit %s moved to shard %d (operations sent to %d)", ErrUnitMoved, r.Unit, h.Shard, r.Shard)
		}
		if !h.Stamp.IsZero() {
			prevs = append(prevs, h.Stamp)
		}
	}
	if err := orderAfter(ctx, o, c, ts, res.Access, prevs); err != nil {
		return err
	}
	enc := txn.EncodeStamp(ts)
	for _, u := range res.Populated {
		if err := c.Set(txn.PopKey(u), enc); err != nil {
			return err
		}
	}
	return nil
}

// MoveSeen is what a move's execution read at its snapshot: the access
// record of every vertex and alias of the unit (nil: absent) and the unit's
// population record.
type MoveSeen struct {
	Access map[string][]byte
	Pop    []byte
}

// OrderMove is the commit section of a move of unit mv.Unit from mv.From to
// mv.To at ts: the unit must still live on mv.From, and nothing of it may
// have been accessed, created or deleted since the move read it (else
// abort, retryable: the state it ships would be stale). Then ts is ordered
// after every access of the unit and after the move that put it on
// mv.From, recorded as their last access, and the directory says mv.To from
// ts on. Every later transaction on the unit reads that record and follows
// ts.
func OrderMove(ctx context.Context, o order.Oracle, c store.Critical, ts vclock.Stamp, mv *txn.UnitMove, seen MoveSeen, base uint32) error {
	h, err := HomeIn(c, mv.Unit, base)
	if err != nil {
		return err
	}
	if h.Shard != mv.From {
		return fmt.Errorf("%w: unit %s is on shard %d, not %d", txn.ErrAborted, mv.Unit, h.Shard, mv.From)
	}
	if slices.Contains(h.Held, mv.To) {
		return fmt.Errorf("%w: shard %d still holds a copy of unit %s", txn.ErrAborted, mv.To, mv.Unit)
	}
	if err := pinBase(c, base); err != nil {
		return err
	}
	if err := unchanged(c, txn.PopKey(mv.Unit), seen.Pop); err != nil {
		return fmt.Errorf("%w: a vertex of unit %s was created or deleted since the move read it", err, mv.Unit)
	}
	keys := make([][]byte, 0, len(seen.Access))
	for k, v := range seen.Access {
		if err := unchanged(c, []byte(k), v); err != nil {
			return fmt.Errorf("%w: unit %s was accessed since the move read it", err, mv.Unit)
		}
		keys = append(keys, []byte(k))
	}
	var prevs []vclock.Stamp
	if !h.Stamp.IsZero() {
		prevs = append(prevs, h.Stamp)
	}
	if err := orderAfter(ctx, o, c, ts, keys, prevs); err != nil {
		return err
	}
	held := append(slices.Clone(h.Held), mv.To)
	slices.Sort(held)
	return c.Set(txn.DirKey(mv.Unit), txn.EncodeHome(txn.Home{Shard: mv.To, Stamp: ts, From: mv.From, Held: held}))
}

// pinBase writes the directory's base when no move wrote it before
// (txn.BaseKey): from the first move on, slots stay computed over base
// whatever the shard count becomes. A different pinned base means the
// mover's configuration is stale (its epoch ended): retryable.
func pinBase(c store.Critical, base uint32) error {
	got, pinned, err := txn.ReadBase(c, 1<<16)
	switch {
	case err != nil:
		return err
	case !pinned:
		return c.Set(txn.BaseKey, txn.EncodeBase(base))
	case got != base:
		return fmt.Errorf("%w: the placement base is %d, the mover's %d", txn.ErrAborted, got, base)
	}
	return nil
}

// unchanged checks that key still holds want (nil: absent).
func unchanged(c store.Critical, key, want []byte) error {
	got, ok, err := c.Get(key)
	if err != nil {
		return err
	}
	if ok != (want != nil) || !bytes.Equal(got, want) {
		return txn.ErrAborted
	}
	return nil
}

// CheckHomes reads the directory record of every unit res wrote, in the
// transaction (its read set: the store's validation at commit aborts the
// transaction if a move rewrote one since), and fails with
// ErrUnitMoved when one differs from dir, the directory the
// execution routed by. A transaction that passes commits only if dir's
// homes of its units are still the store's, so its commit section takes
// them from dir (OrderCommit's current) instead of reading the
// records there: a cluster's commit sections are serialized across
// processes, and a record read in one is a round trip to the store.
func CheckHomes(st store.Txn, dir *txn.Directory, res *txn.Result) error {
	for _, r := range res.Units {
		want := dir.HomeOf(r.Unit)
		got := txn.BaseHome(r.Unit, dir.Base())
		b, ok, err := st.Get(txn.DirKey(r.Unit))
		if err != nil {
			return err
		}
		if ok {
			if got, err = txn.DecodeHome(b); err != nil {
				return err
			}
		}
		if got.Shard != want.Shard || vclock.CompareStamps(got.Stamp, want.Stamp) != vclock.Equal {
			return fmt.Errorf("%w: unit %s is on shard %d (the routing directory says %d)", ErrUnitMoved, r.Unit, got.Shard, want.Shard)
		}
	}
	return nil
}
