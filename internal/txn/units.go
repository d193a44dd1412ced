package txn

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/vclock"
)

// Placement units and the directory (docs/online-moves.md).
//
// A unit is what moves between shards: a placement group (GroupOf), or a
// slot of ungrouped names, FNV-1a(name) mod SlotsPerShard·B where B is the
// base shard count the data was created with. Because B divides
// SlotsPerShard·B, a slot's base shard (slot mod B) is ShardOf(name, B) for
// every name in it: the base placement is today's, so stored data needs no
// migration. A Directory overrides the base placement for moved units.
//
// Only the placement is here (pure, no I/O). Nothing moves a unit yet: the
// move transaction, the shards' forwarding pointers and the routing checks
// are the next steps of the design.

// SlotsPerShard is the number of slot units per base shard.
const SlotsPerShard = 256

// Unit names a placement unit: a group when Group is set, else a slot.
type Unit struct {
	Group string
	Slot  uint32
}

// String renders u as "g:<group>" or "s:<slot>" (ParseUnit's input).
func (u Unit) String() string {
	if u.Group != "" {
		return "g:" + u.Group
	}
	return "s:" + strconv.FormatUint(uint64(u.Slot), 10)
}

// ParseUnit parses String's output; slots must be below SlotsPerShard·base.
func ParseUnit(s string, base uint32) (Unit, error) {
	switch {
	case strings.HasPrefix(s, "g:") && len(s) > 2 && !strings.ContainsRune(s[2:], '|'):
		return Unit{Group: s[2:]}, nil
	case strings.HasPrefix(s, "s:"):
		n, err := strconv.ParseUint(s[2:], 10, 32)
		if err != nil || n >= uint64(SlotsPerShard)*uint64(base) {
			return Unit{}, fmt.Errorf("txn: unit %q: slot not in [0, %d)", s, uint64(SlotsPerShard)*uint64(base))
		}
		return Unit{Slot: uint32(n)}, nil
	}
	return Unit{}, fmt.Errorf("txn: unit %q: want g:<group> or s:<slot>", s)
}

// nameHash is FNV-1a of name (as hash/fnv's New64a, without its
// allocations): ShardOf's hash.
func nameHash(name string) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= fnvPrime64
	}
	return h
}

// UnitOf returns the unit of a handle or alias under base shards.
func UnitOf(name string, base uint32) Unit {
	if g, ok := GroupOf(name); ok {
		return Unit{Group: g[len(GroupPrefix):]}
	}
	return Unit{Slot: uint32(nameHash(name) % (uint64(SlotsPerShard) * uint64(base)))}
}

// BaseShard is where u lives when it never moved: ShardOf of its members.
func (u Unit) BaseShard(base uint32) uint32 {
	if u.Group != "" {
		return uint32(nameHash(GroupPrefix+u.Group) % uint64(base))
	}
	return u.Slot % base
}

// Home is where a moved unit lives and the stamp of the move that put it
// there.
type Home struct {
	Shard uint32
	Stamp vclock.Stamp
}

// Directory places names on Shards shards: the base placement on Base
// shards, overridden per moved unit. A Directory is immutable; With returns
// a new one. The zero of moves is the common case and costs one length
// check per lookup.
type Directory struct {
	base, shards uint32
	moved        map[Unit]Home
}

// NewDirectory returns the directory of data created on base shards, now
// served by shards ≥ base shards, with no unit moved.
func NewDirectory(base, shards uint32) (*Directory, error) {
	if base == 0 || shards < base {
		return nil, fmt.Errorf("txn: directory of %d shards over a base of %d: want 0 < base ≤ shards", shards, base)
	}
	return &Directory{base: base, shards: shards}, nil
}

// Base is the shard count the data was created with; Shards the count now.
func (d *Directory) Base() uint32   { return d.base }
func (d *Directory) Shards() uint32 { return d.shards }

// Moved is the number of units that live off their base shard's record.
func (d *Directory) Moved() int { return len(d.moved) }

// ShardOf places a handle or alias.
func (d *Directory) ShardOf(name string) uint32 {
	if len(d.moved) == 0 {
		return ShardOf(name, d.base)
	}
	u := UnitOf(name, d.base)
	if h, ok := d.moved[u]; ok {
		return h.Shard
	}
	return u.BaseShard(d.base)
}

// HomeOf returns where u lives and the stamp of the move that put it there
// (zero for a unit that never moved).
func (d *Directory) HomeOf(u Unit) Home {
	if h, ok := d.moved[u]; ok {
		return h
	}
	return Home{Shard: u.BaseShard(d.base)}
}

// With returns d with u at h. Moving a unit back to its base shard keeps
// its record (the stamp still orders later transactions after the move).
func (d *Directory) With(u Unit, h Home) (*Directory, error) {
	if h.Shard >= d.shards {
		return nil, fmt.Errorf("txn: unit %s to shard %d of %d", u, h.Shard, d.shards)
	}
	if u.Group == "" && u.Slot >= SlotsPerShard*d.base {
		return nil, fmt.Errorf("txn: slot %d of a base of %d shards (at most %d)", u.Slot, d.base, SlotsPerShard*d.base-1)
	}
	if u.Group != "" && strings.ContainsRune(u.Group, '|') {
		return nil, fmt.Errorf("txn: group %q contains '|'", u.Group)
	}
	if prev, ok := d.moved[u]; ok && !prev.Stamp.IsZero() && vclock.CompareStamps(prev.Stamp, h.Stamp) != vclock.Before {
		return nil, fmt.Errorf("txn: unit %s: move at %s does not follow the one at %s", u, h.Stamp, prev.Stamp)
	}
	m := make(map[Unit]Home, len(d.moved)+1)
	maps.Copy(m, d.moved)
	m[u] = h
	return &Directory{base: d.base, shards: d.shards, moved: m}, nil
}

// Grown returns d serving shards ≥ d.Shards() shards, no unit moved by it.
func (d *Directory) Grown(shards uint32) (*Directory, error) {
	if shards < d.shards {
		return nil, fmt.Errorf("txn: directory cannot shrink from %d to %d shards", d.shards, shards)
	}
	return &Directory{base: d.base, shards: shards, moved: d.moved}, nil
}

// Units returns the moved units and their homes (a copy).
func (d *Directory) Units() map[Unit]Home { return maps.Clone(d.moved) }

// DirKey is the store record of a moved unit's home.
func DirKey(u Unit) []byte { return key(tagMeta, "dir", u.String()) }

// EncodeHome encodes a directory record: the shard, then the move's stamp.
func EncodeHome(h Home) []byte {
	b := strconv.AppendUint(nil, uint64(h.Shard), 10)
	b = append(b, ' ')
	return append(b, EncodeStamp(h.Stamp)...)
}

// DecodeHome decodes EncodeHome's output.
func DecodeHome(b []byte) (Home, error) {
	i := strings.IndexByte(string(b), ' ')
	if i <= 0 {
		return Home{}, fmt.Errorf("%w: directory record %q", ErrCorrupt, b)
	}
	n, err := strconv.ParseUint(string(b[:i]), 10, 32)
	if err != nil {
		return Home{}, fmt.Errorf("%w: directory record %q: %v", ErrCorrupt, b, err)
	}
	s, err := DecodeStamp(b[i+1:])
	if err != nil {
		return Home{}, err
	}
	return Home{Shard: uint32(n), Stamp: s}, nil
}
