package gatekeeper

import (
	"fmt"
	"sync/atomic"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// DirCopy is the Placement of a gatekeeper alone in its process (a
// cluster's, and the simulation's cluster mode): its own copy of the
// placement directory, which no other gatekeeper's move updates. The copy
// may be stale, so a commit reads the homes of the units it wrote in its
// store transaction before its commit section (Checked: CheckHomes, whose
// reads the store's validation then holds unchanged up to the commit), and
// the commit section takes the homes from the copy (Current is true). A
// commit that finds a unit moved fails with ErrUnitMoved: the caller
// reloads the copy (Reload) and executes the transaction again. The
// gatekeeper's own moves update the copy at once (EndMove).
type DirCopy struct {
	dir   atomic.Pointer[txn.Directory]
	moves atomic.Uint64
	// noHomeCheck is the planted bug Plants.NoHomeCheck.
	noHomeCheck bool
}

// NewDirCopy returns a copy holding d.
func NewDirCopy(d *txn.Directory, plants Plants) *DirCopy {
	c := &DirCopy{noHomeCheck: plants.NoHomeCheck}
	c.dir.Store(d)
	return c
}

// Dir is the copy.
func (c *DirCopy) Dir() *txn.Directory { return c.dir.Load() }

// Reload reads the store's directory (over t, for a configuration of
// shards) into the copy.
func (c *DirCopy) Reload(t txn.KV, shards int) error {
	d, err := ReadDirectory(t, shards)
	if err != nil {
		return err
	}
	c.dir.Store(d)
	return nil
}

// Checked reads the homes of the units res wrote in st (CheckHomes).
func (c *DirCopy) Checked(st store.Txn, d *txn.Directory, res *txn.Result) error {
	if c.noHomeCheck {
		return nil
	}
	return CheckHomes(st, d, res)
}

// Current is true: Checked made the copy's homes of the transaction's
// units the store's.
func (*DirCopy) Current(*txn.Directory) bool { return true }

// BeginMove does nothing: commits do not consult moves in flight.
func (*DirCopy) BeginMove() {}

// EndMove adopts a committed move in the copy.
func (c *DirCopy) EndMove(u txn.Unit, home *txn.Home) {
	if home != nil {
		AdoptMove(&c.dir, u, *home)
		c.moves.Add(1)
	}
}

// Moves counts the moves adopted by EndMove.
func (c *DirCopy) Moves() uint64 { return c.moves.Load() }

// ReadDirectory reads the store's placement directory for a configuration
// of shards (txn.ReadBase: over the pinned base, else over shards).
func ReadDirectory(t txn.KV, shards int) (*txn.Directory, error) {
	base, _, err := txn.ReadBase(t, uint32(shards))
	if err != nil {
		return nil, err
	}
	return txn.ReadDirectory(t, base, uint32(shards))
}

// AdoptMove puts a committed move in the directory dir points to, unless
// the directory already has it or a later one (a copy may have been read
// again from the store meanwhile).
func AdoptMove(dir *atomic.Pointer[txn.Directory], u txn.Unit, next txn.Home) {
	for {
		d := dir.Load()
		if prev := d.HomeOf(u).Stamp; !prev.IsZero() {
			if rel := vclock.CompareStamps(prev, next.Stamp); rel == vclock.Equal || rel == vclock.After {
				return
			}
		}
		nd, err := d.With(u, next)
		if err != nil {
			panic(fmt.Sprintf("gatekeeper: a committed move does not fit the directory: %v", err))
		}
		if dir.CompareAndSwap(d, nd) {
			return
		}
	}
}
