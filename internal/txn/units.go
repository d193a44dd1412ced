package txn

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/graph"
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
// Only the placement and the move's payload are here (pure, no I/O): the
// commit's checks are gatekeeper.CheckUnits and gatekeeper.OrderMove, the
// shards' side (forwarding answers, the hand-off) is shard.Units.

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

// Home is where a moved unit lives, the stamp of the move that put it
// there and the shard it came from (a read older than the move is answered
// there).
type Home struct {
	Shard uint32
	Stamp vclock.Stamp
	From  uint32
	// Held lists, sorted, the shards that hold a copy of the unit: its
	// home and every shard it left whose copy is not yet collected. A
	// unit moves only to a shard not in Held (graph.Load takes handles
	// new to a partition).
	Held []uint32
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
	return BaseHome(u, d.base)
}

// HomeShard is HomeOf(u)'s Shard and From, without building the rest (a
// program's every hop asks it).
func (d *Directory) HomeShard(u Unit) (shard, from uint32) {
	if h, ok := d.moved[u]; ok {
		return h.Shard, h.From
	}
	s := u.BaseShard(d.base)
	return s, s
}

// BaseHome is the home of a unit that never moved.
func BaseHome(u Unit, base uint32) Home {
	s := u.BaseShard(base)
	return Home{Shard: s, From: s, Held: []uint32{s}}
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
	// The second of two moves of a unit read the first's record and was
	// ordered after it: by vector clock, or by Kronos when concurrent.
	if prev, ok := d.moved[u]; ok && !prev.Stamp.IsZero() {
		if rel := vclock.CompareStamps(prev.Stamp, h.Stamp); rel == vclock.Equal || rel == vclock.After {
			return nil, fmt.Errorf("txn: unit %s: move at %s does not follow the one at %s", u, h.Stamp, prev.Stamp)
		}
	}
	m := make(map[Unit]Home, len(d.moved)+1)
	maps.Copy(m, d.moved)
	m[u] = h
	return &Directory{base: d.base, shards: d.shards, moved: m}, nil
}

// Units returns the moved units and their homes (a copy).
func (d *Directory) Units() map[Unit]Home { return maps.Clone(d.moved) }

// DirKey is the store record of a moved unit's home.
func DirKey(u Unit) []byte { return key(tagMeta, "dir", u.String()) }

// EncodeHome encodes a directory record: the shard, the shard it came
// from and the shards holding it (comma-separated) in decimal, then the
// move's stamp.
func EncodeHome(h Home) []byte {
	b := strconv.AppendUint(nil, uint64(h.Shard), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(h.From), 10)
	b = append(b, ' ')
	for i, s := range h.Held {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(s), 10)
	}
	b = append(b, ' ')
	return append(b, EncodeStamp(h.Stamp)...)
}

// DecodeHome decodes EncodeHome's output.
func DecodeHome(b []byte) (Home, error) {
	var h Home
	for _, f := range []*uint32{&h.Shard, &h.From} {
		i := strings.IndexByte(string(b), ' ')
		if i <= 0 {
			return Home{}, fmt.Errorf("%w: directory record", ErrCorrupt)
		}
		n, err := strconv.ParseUint(string(b[:i]), 10, 32)
		if err != nil {
			return Home{}, fmt.Errorf("%w: directory record: %v", ErrCorrupt, err)
		}
		*f, b = uint32(n), b[i+1:]
	}
	i := strings.IndexByte(string(b), ' ')
	if i <= 0 {
		return Home{}, fmt.Errorf("%w: directory record: no shards holding it", ErrCorrupt)
	}
	for f := range strings.SplitSeq(string(b[:i]), ",") {
		n, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			return Home{}, fmt.Errorf("%w: directory record: %v", ErrCorrupt, err)
		}
		h.Held = append(h.Held, uint32(n))
	}
	b = b[i+1:]
	s, err := DecodeStamp(b)
	if err != nil {
		return Home{}, err
	}
	h.Stamp = s
	return h, nil
}

// UnitRoute is a unit a transaction wrote and the shard it sent the
// operations to.
type UnitRoute struct {
	Unit  Unit
	Shard uint32
}

// nameOf is the name an operation is placed by: the alias for the alias
// index's operations, else the vertex.
func (op *ShardOp) nameOf() string {
	if op.Kind == OpBindAlias || op.Kind == OpUnbindAlias {
		return op.Alias
	}
	return op.Vertex
}

// routes returns the units of ops with their shards, and the units whose
// population changed (a vertex created or deleted), both sorted.
func routes(ops []ShardOp, base uint32) ([]UnitRoute, []Unit) {
	seen := map[Unit]uint32{}
	pop := map[Unit]bool{}
	for i := range ops {
		u := UnitOf(ops[i].nameOf(), base)
		seen[u] = ops[i].Shard
		if k := ops[i].Kind; k == OpCreateVertex || k == OpDeleteVertex {
			pop[u] = true
		}
	}
	rs := make([]UnitRoute, 0, len(seen))
	for u, s := range seen {
		rs = append(rs, UnitRoute{Unit: u, Shard: s})
	}
	slices.SortFunc(rs, func(a, b UnitRoute) int { return compareUnits(a.Unit, b.Unit) })
	ps := slices.Collect(maps.Keys(pop))
	slices.SortFunc(ps, compareUnits)
	return rs, ps
}

func compareUnits(a, b Unit) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return cmp.Compare(a.Slot, b.Slot)
}

// PopKey is the store record a commit sets when it creates or deletes a
// vertex of the unit: a move that read the unit's vertices at an earlier
// snapshot sees it changed and aborts.
func PopKey(u Unit) []byte { return key(tagMeta, "pop", u.String()) }

// UnitMove is the payload of a unit's hand-off from shard From to shard To
// at the move's stamp: its vertices (tombstones included) and aliases as the
// store holds them, which To loads and From drops.
type UnitMove struct {
	Unit     Unit
	From, To uint32
	Vertices []*graph.VertexRecord
	Aliases  []AliasState
}

// AliasState is an alias of a moving unit as the store holds it (Handle
// empty: unbound, kept for its last-write stamp).
type AliasState struct {
	Alias, Handle string
	LastWrite     vclock.Stamp
}

// ReadDirectory reads the directory records of a store (kv: a snapshot)
// into the directory of data created on base shards, served by shards.
func ReadDirectory(kv KV, base, shards uint32) (*Directory, error) {
	d, err := NewDirectory(base, shards)
	if err != nil {
		return nil, err
	}
	start, end := prefix(tagMeta, "dir")
	moved := map[Unit]Home{}
	err = kv.Scan(start, end, 0, func(k, v []byte) error {
		parts := KeyParts(k)
		if len(parts) != 2 {
			return fmt.Errorf("%w: directory key %q", ErrCorrupt, k)
		}
		u, err := ParseUnit(parts[1], base)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		h, err := DecodeHome(v)
		if err != nil {
			return err
		}
		if h.Shard >= shards {
			return fmt.Errorf("%w: unit %s on shard %d of %d", ErrCorrupt, u, h.Shard, shards)
		}
		moved[u] = h
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(moved) > 0 {
		d.moved = moved
	}
	return d, nil
}

// BaseKey is the meta record pinning the directory's base: the shard count
// slots are computed over (a big-endian uint64). It is written by the first
// move (gatekeeper.OrderMove) or by growing a cluster online; until then
// the base is the current shard count, so a cluster that grows without it
// re-places every vertex by the new count, and one that grows with it
// keeps every vertex where it is and fills new shards by moves.
var BaseKey = MetaKey("base")

// Getter reads one key.
type Getter interface {
	Get(key []byte) ([]byte, bool, error)
}

// ReadBase returns the store's pinned base (pinned true), else shards. A
// pinned base above shards is an error: a cluster never shrinks below the
// count its slots are computed over.
func ReadBase(kv Getter, shards uint32) (base uint32, pinned bool, err error) {
	b, ok, err := kv.Get(BaseKey)
	if err != nil || !ok {
		return shards, false, err
	}
	if len(b) != 8 {
		return 0, false, fmt.Errorf("%w: placement base of %d bytes", ErrCorrupt, len(b))
	}
	v := binary.BigEndian.Uint64(b)
	switch {
	case v == 0 || v > 1<<16:
		return 0, false, fmt.Errorf("%w: placement base %d", ErrCorrupt, v)
	case v > uint64(shards):
		return 0, false, fmt.Errorf("%w: the data's placement is over %d shards and only %d are configured", ErrInvalid, v, shards)
	}
	return uint32(v), true, nil
}

// EncodeBase is BaseKey's value for base.
func EncodeBase(base uint32) []byte { return binary.BigEndian.AppendUint64(nil, uint64(base)) }
