package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// The rollback window (§IV, after Retroscope): every applied PUT also writes
// an undo record — the key's siblings before the PUT and the PUT's HVC stamp
// — under the Pebble key histPrefix + 8-byte big-endian sequence number, in
// the same batch as the new siblings. Sequence numbers are assigned under
// the clock lock together with the stamp, so their order is the stamps'
// order (and, per key, the order of the writes, which the key's lock stripe
// serialises). The window keeps the newest WindowMax records; older ones are
// trimmed, and the trimmed records' latest cut time is kept as the floor
// (metaFloor), below which no rollback can reach.
//
// Restore(T) rewinds the replica to the cut C(T): it undoes, newest first,
// every PUT whose stamp has an entry ≥ T (CutTime(stamp) ≥ T). C(T) is a
// consistent cut of the whole store when every replica restores to the same
// T: if PUT e happened before PUT f (through a server or a client carrying
// HVCs), stamp(e) ≤ stamp(f) entry-wise, so CutTime(e) ≤ CutTime(f), and
// keeping f (CutTime(f) < T) implies keeping e.
const (
	histPrefix = 'h'
	metaPrefix = 'm'
)

var (
	metaFloor = []byte{metaPrefix, 'f'}
	metaGen   = []byte{metaPrefix, 'g'}
	metaPause = []byte{metaPrefix, 'p'}
)

// CutTime is the time that places an event relative to a rollback cut: the
// largest entry of its stamp under the ε rule. An event belongs to C(T) iff
// CutTime < T. It is at least the owner's physical time, and it grows along
// causality (stamps grow entry-wise), which is what makes C(T) consistent.
func CutTime(h vclock.HVC) uint64 {
	m := uint64(0)
	for k := range h.Entries {
		m = max(m, h.At(k))
	}
	return m
}

func histKey(seq uint64) []byte {
	b := make([]byte, 9)
	b[0] = histPrefix
	binary.BigEndian.PutUint64(b[1:], seq)
	return b
}

// histRecord is one undo record.
type histRecord struct {
	At   vclock.HVC
	Key  string
	Prev []kvcore.Sibling // the key's siblings before the PUT (none: absent)
	Sib  kvcore.Sibling   // the sibling the PUT applied: its version names the logical write
}

func appendHistRecord(b []byte, r histRecord) []byte {
	at, err := r.At.AppendBinary(nil)
	assert(err == nil, "stamp of a replica clock does not encode: %v", err)
	b = binary.AppendUvarint(b, uint64(len(at)))
	b = append(b, at...)
	b = binary.AppendUvarint(b, uint64(len(r.Key)))
	b = append(b, r.Key...)
	var prev []byte
	if len(r.Prev) > 0 {
		prev = kvcore.AppendSiblings(nil, r.Prev)
	}
	b = binary.AppendUvarint(b, uint64(len(prev)))
	b = append(b, prev...)
	return kvcore.AppendSiblings(b, []kvcore.Sibling{r.Sib})
}

func decodeHistRecord(b []byte) (histRecord, error) {
	var r histRecord
	field := func(what string) ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: window record: bad %s length", kvcore.ErrCorrupt, what)
		}
		f := b[k : k+int(n)]
		b = b[k+int(n):]
		return f, nil
	}
	at, err := field("stamp")
	if err != nil {
		return r, err
	}
	if r.At, err = vclock.DecodeHVC(at); err != nil {
		return r, fmt.Errorf("%w: window record: %v", kvcore.ErrCorrupt, err)
	}
	key, err := field("key")
	if err != nil {
		return r, err
	}
	r.Key = string(key)
	prev, err := field("previous siblings")
	if err != nil {
		return r, err
	}
	if len(prev) > 0 {
		if r.Prev, err = kvcore.DecodeSiblings(prev); err != nil {
			return r, fmt.Errorf("window record of %q: %w", r.Key, err)
		}
	}
	sib, err := kvcore.DecodeSiblings(b)
	if err != nil || len(sib) != 1 {
		return r, fmt.Errorf("%w: window record of %q: applied sibling: %v", kvcore.ErrCorrupt, r.Key, err)
	}
	r.Sib = sib[0]
	return r, nil
}

// openWindow reads the window's bounds, floor and generation after Open.
func (r *Replica) openWindow() error {
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{histPrefix}, UpperBound: []byte{histPrefix + 1}})
	if err != nil {
		return fmt.Errorf("kv: open window: %w", err)
	}
	if it.First() {
		r.histFirst = binary.BigEndian.Uint64(it.Key()[1:])
	}
	if it.Last() {
		r.histNext = binary.BigEndian.Uint64(it.Key()[1:]) + 1
	} else {
		r.histFirst, r.histNext = 1, 1
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("kv: open window: %w", err)
	}
	for _, m := range []struct {
		key []byte
		dst *uint64
	}{{metaFloor, &r.floor}, {metaGen, &r.gen}, {metaPause, &r.pauseGen}} {
		v, closer, err := r.db.Get(m.key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("kv: open window: %w", err)
		}
		if len(v) != 8 {
			closer.Close()
			return fmt.Errorf("%w: meta %q of %d bytes", kvcore.ErrCorrupt, m.key, len(v))
		}
		*m.dst = binary.BigEndian.Uint64(v)
		closer.Close()
	}
	return nil
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// trimWindow drops the oldest records beyond WindowMax (in steps of an
// eighth of it, so trimming is rare) and raises the floor to the latest
// dropped record's cut time, in one batch. Only one trim runs at a time;
// a PUT that finds one running skips it.
func (r *Replica) trimWindow() {
	if !r.trimMu.TryLock() {
		return
	}
	defer r.trimMu.Unlock()
	r.clockMu.Lock()
	first, next := r.histFirst, r.histNext
	r.clockMu.Unlock()
	keep := uint64(r.cfg.WindowMax)
	if next-first <= keep+keep/8 {
		return
	}
	upto := next - keep // drop [first, upto)
	floor := r.floorNow()
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: histKey(first), UpperBound: histKey(upto)})
	if err != nil {
		return
	}
	for ok := it.First(); ok; ok = it.Next() {
		rec, err := decodeHistRecord(it.Value())
		if err != nil {
			r.log.Error("kv: window trim", "err", err, "role", "kv", "node", r.cfg.Self)
			continue
		}
		floor = max(floor, CutTime(rec.At))
	}
	if it.Close() != nil {
		return
	}
	b := r.db.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(histKey(first), histKey(upto), nil)
	_ = b.Set(metaFloor, u64(floor), nil)
	if err := b.Commit(pebble.NoSync); err != nil {
		r.log.Error("kv: window trim", "err", err, "role", "kv", "node", r.cfg.Self)
		return
	}
	r.clockMu.Lock()
	r.histFirst, r.floor = upto, floor
	r.clockMu.Unlock()
}

func (r *Replica) floorNow() uint64 {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.floor
}

// RestoreResult is what Restore undid.
type RestoreResult struct {
	// Undone is the number of PUTs rolled back; Keys the keys they touched,
	// with the values they hold now (the key's single sibling's value, or
	// the last sibling's if several, "" if none), in no particular order.
	Undone int               `json:"undone"`
	Keys   map[string]string `json:"keys"`
	// At is the stamp of the restore event: the replica's first event of
	// generation Gen.
	At  vclock.HVC `json:"-"`
	Gen uint64     `json:"gen"`
}

// Restore rewinds the replica to the cut C(before) and records gen as its
// rollback generation. It excludes every request while it runs. It fails
// with ErrWindow, changing nothing, if the window no longer holds every
// record it would need (before ≤ the floor), and with ErrInvalid if gen is
// not above the current generation.
//
// What a rollback discards: the logical writes (a PUT, identified by the
// version it wrote) that took effect nowhere before `before`: at this
// replica, every applied PUT with CutTime(stamp) ≥ before whose version is
// not in keep. keep lists the versions some replica applied with CutTime <
// before (the rollback coordinator collects them: LateVersions, then
// EarlyVersions): such a write had taken effect before the cut, so it stays
// everywhere it arrived, even where it arrived later. Keeping a write iff
// its earliest application is before the cut keeps the cut causally
// closed: a write that depends on another was applied after it was read
// somewhere, so its earliest application is later than the other's.
//
// Each key touched by a discarded PUT is rebuilt from the state before its
// oldest discarded PUT by replaying its kept PUTs in their original order
// (Apply), and their undo records are rewritten to match, so a later
// rollback does not resurrect what this one discarded.
func (r *Replica) Restore(before, gen uint64, keep []kvcore.Version) (RestoreResult, error) {
	r.life.Lock()
	defer r.life.Unlock()
	if r.closed.Load() {
		return RestoreResult{}, kvcore.ErrClosed
	}
	r.clockMu.Lock()
	floor, cur := r.floor, r.gen
	r.clockMu.Unlock()
	if gen <= cur {
		return RestoreResult{}, fmt.Errorf("%w: rollback generation %d not above the replica's %d", kvcore.ErrInvalid, gen, cur)
	}
	if before <= floor {
		return RestoreResult{}, fmt.Errorf("%w: restore before %d, but records up to %d were trimmed (WindowMax %d)", kvcore.ErrWindow, before, floor, r.cfg.WindowMax)
	}
	late, err := r.lateRecords(before)
	if err != nil {
		return RestoreResult{}, err
	}
	kept := map[string]bool{}
	for _, v := range keep {
		kept[v.String()] = true
	}
	res := RestoreResult{Keys: map[string]string{}, Gen: gen}
	b := r.db.NewBatch()
	defer b.Close()
	// late is oldest first; per key, replay from the first discarded record.
	state := map[string][]kvcore.Sibling{}
	rebuilding := map[string]bool{}
	for _, lr := range late {
		rec, key := lr.rec, lr.rec.Key
		discard := !kept[rec.Sib.Version.String()]
		if !rebuilding[key] {
			if !discard {
				continue // nothing discarded on this key yet: the record stands
			}
			rebuilding[key], state[key] = true, rec.Prev
		}
		if discard {
			_ = b.Delete(lr.key, nil)
			res.Undone++
			continue
		}
		rec.Prev = state[key]
		_ = b.Set(lr.key, appendHistRecord(nil, rec), nil)
		next, _, err := kvcore.Apply(state[key], rec.Sib, kvcore.SiblingsLimit)
		if err != nil {
			return RestoreResult{}, fmt.Errorf("%w: replaying %q: %v", kvcore.ErrCorrupt, key, err)
		}
		state[key] = next
	}
	for key := range rebuilding {
		if sibs := state[key]; len(sibs) == 0 {
			_ = b.Delete(pebbleKey(key), nil)
		} else {
			_ = b.Set(pebbleKey(key), kvcore.AppendSiblings(nil, sibs), nil)
		}
		res.Keys[key] = currentValue(state[key])
	}
	_ = b.Set(metaGen, u64(gen), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return RestoreResult{}, fmt.Errorf("%w: restore: %v", kvcore.ErrUnavailable, err)
	}
	r.clockMu.Lock()
	r.gen = gen
	res.At = r.clock.Tick()
	r.clockMu.Unlock()
	r.stats.undone.Add(uint64(res.Undone))
	return res, nil
}

// lateRecord is an undo record with its Pebble key.
type lateRecord struct {
	key []byte
	rec histRecord
}

// lateRecords returns the records with CutTime ≥ before, oldest first.
// Caller holds life.
func (r *Replica) lateRecords(before uint64) ([]lateRecord, error) {
	r.clockMu.Lock()
	first, next := r.histFirst, r.histNext
	r.clockMu.Unlock()
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: histKey(first), UpperBound: histKey(next)})
	if err != nil {
		return nil, fmt.Errorf("%w: window: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	var out []lateRecord
	for ok := it.Last(); ok; ok = it.Prev() {
		rec, err := decodeHistRecord(it.Value())
		if err != nil {
			return nil, err
		}
		if CutTime(rec.At) < before {
			break // stamps grow with the sequence: everything older is in the cut
		}
		out = append(out, lateRecord{key: slices.Clone(it.Key()), rec: rec})
	}
	slices.Reverse(out)
	return out, nil
}

// LateVersions returns the versions of the PUTs this replica applied with
// CutTime ≥ before: the writes a rollback to before may discard.
func (r *Replica) LateVersions(before uint64) ([]kvcore.Version, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	late, err := r.lateRecords(before)
	if err != nil {
		return nil, err
	}
	out := make([]kvcore.Version, 0, len(late))
	for _, lr := range late {
		out = append(out, lr.rec.Sib.Version)
	}
	return out, nil
}

// EarlyVersions returns those of versions that this replica applied with
// CutTime < before (within the window), and the CutTime of each such
// application: writes that took effect before the cut, which a rollback to
// before keeps everywhere.
func (r *Replica) EarlyVersions(before uint64, versions []kvcore.Version) ([]kvcore.Version, []uint64, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, nil, kvcore.ErrClosed
	}
	want := map[string]kvcore.Version{}
	for _, v := range versions {
		want[v.String()] = v
	}
	r.clockMu.Lock()
	first, next := r.histFirst, r.histNext
	r.clockMu.Unlock()
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: histKey(first), UpperBound: histKey(next)})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: window: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	var out []kvcore.Version
	var at []uint64
	for ok := it.Last(); ok && len(want) > 0; ok = it.Prev() {
		rec, err := decodeHistRecord(it.Value())
		if err != nil {
			return nil, nil, err
		}
		ct := CutTime(rec.At)
		if ct >= before {
			continue
		}
		if v, ok := want[rec.Sib.Version.String()]; ok {
			out, at = append(out, v), append(at, ct)
			delete(want, rec.Sib.Version.String())
		}
	}
	return out, at, nil
}

// currentValue is the value a detector should see for a key holding sibs:
// the single value, or the last sibling's when there are several (a
// detector watches one value per key), "" when there is none.
func currentValue(sibs []kvcore.Sibling) string {
	if len(sibs) == 0 {
		return ""
	}
	return string(sibs[len(sibs)-1].Value)
}

// Gen is the replica's rollback generation: 0 until the first Restore.
func (r *Replica) Gen() uint64 {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.gen
}

// PauseGen is the rollback generation the replica was last paused for and
// not yet resumed (0: none), as SetPause stored it: a server restarting
// in the middle of a rollback comes back paused.
func (r *Replica) PauseGen() uint64 {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return r.pauseGen
}

// SetPause stores, with fsync, that the replica is paused for rollback
// generation gen (0: resumed).
func (r *Replica) SetPause(gen uint64) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	var err error
	if gen == 0 {
		err = r.db.Delete(metaPause, pebble.Sync)
	} else {
		err = r.db.Set(metaPause, u64(gen), pebble.Sync)
	}
	if err != nil {
		return fmt.Errorf("%w: store the pause: %v", kvcore.ErrUnavailable, err)
	}
	r.clockMu.Lock()
	r.pauseGen = gen
	r.clockMu.Unlock()
	return nil
}

// Window returns the window's size, floor and the generation.
func (r *Replica) Window() kvcore.WindowStats {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	return kvcore.WindowStats{Records: r.histNext - r.histFirst, Floor: r.floor, Gen: r.gen}
}

// LastWrites returns, for each of keys that a PUT in the window wrote, the
// stamp of the newest such PUT: when its current value was set. Keys not
// written within the window are absent.
func (r *Replica) LastWrites(keys []string) (map[string]vclock.HVC, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]vclock.HVC{}
	r.clockMu.Lock()
	first, next := r.histFirst, r.histNext
	r.clockMu.Unlock()
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: histKey(first), UpperBound: histKey(next)})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	for ok := it.Last(); ok && len(out) < len(want); ok = it.Prev() {
		rec, err := decodeHistRecord(it.Value())
		if err != nil {
			return nil, err
		}
		if _, seen := out[rec.Key]; want[rec.Key] && !seen {
			out[rec.Key] = rec.At
		}
	}
	return out, nil
}

// Values returns the current value (currentValue) of each of keys: what a
// restarted or restored detector loads.
func (r *Replica) Values(keys []string) (map[string]string, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		sibs, err := r.load(k)
		if err != nil {
			return nil, err
		}
		out[k] = currentValue(sibs)
	}
	return out, nil
}
