package kvcore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/vclock"
)

// VersionEntriesMax bounds the entries of one Version. Descend prunes a new
// version down to it (see Descend for why pruning is safe), and replicas
// refuse longer ones, so a key's metadata stays bounded however many client
// sessions write it.
const VersionEntriesMax = 64

// Entry is one component of a version: the number of writes by one actor (a
// client session) that the version descends from. Counter 0 never appears.
type Entry struct {
	Actor   uint64 `json:"actor"`
	Counter uint64 `json:"counter"`
}

// Version is a vector clock over actors (client sessions), kept sparse and
// sorted by actor: the version of one value of one key (§II-A: "a version is
// a vector clock that describes the origin of the associated value").
//
// A session that writes key k with context C (the versions of k it read)
// stamps its value with Descend(C, actor, counter): the entry-wise maximum
// of C, with its own entry set to a counter it never used before. Every
// version therefore carries a unique dot (actor, counter), and a ≤ b holds
// exactly when b's writer had seen a (read it, or wrote it earlier in the
// same session): version order is causal order, and concurrent versions are
// the writes no session ordered. Actors are per session, not per server, so
// two writes through the same replica never share a dot (the trap of
// server-side counters: a second blind write would dominate the first).
//
// A Version is a value: functions here never modify their arguments.
type Version struct {
	Entries []Entry `json:"entries"`
}

// Get returns the actor's counter (0 if absent).
func (v Version) Get(actor uint64) uint64 {
	i, ok := slices.BinarySearchFunc(v.Entries, actor, func(e Entry, a uint64) int {
		switch {
		case e.Actor < a:
			return -1
		case e.Actor > a:
			return 1
		}
		return 0
	})
	if !ok {
		return 0
	}
	return v.Entries[i].Counter
}

// IsZero reports the empty version (no writes at all): it precedes every
// other version.
func (v Version) IsZero() bool { return len(v.Entries) == 0 }

// Validate checks the form: entries sorted by actor without duplicates, no
// zero counter, at most VersionEntriesMax entries, and at least one entry.
func (v Version) Validate() error {
	if len(v.Entries) == 0 {
		return fmt.Errorf("%w: empty version", ErrInvalid)
	}
	if len(v.Entries) > VersionEntriesMax {
		return fmt.Errorf("%w: version has %d entries (at most %d)", ErrInvalid, len(v.Entries), VersionEntriesMax)
	}
	for i, e := range v.Entries {
		if e.Counter == 0 {
			return fmt.Errorf("%w: version entry %d has counter 0", ErrInvalid, i)
		}
		if i > 0 && v.Entries[i-1].Actor >= e.Actor {
			return fmt.Errorf("%w: version entries not sorted by actor at %d", ErrInvalid, i)
		}
	}
	return nil
}

// Compare orders a against b entry-wise: Before (a < b: b descends from a),
// After, Equal or Concurrent.
func Compare(a, b Version) vclock.Relation {
	less, greater := false, false
	i, j := 0, 0
	for i < len(a.Entries) || j < len(b.Entries) {
		var x, y uint64
		switch {
		case j == len(b.Entries) || (i < len(a.Entries) && a.Entries[i].Actor < b.Entries[j].Actor):
			x = a.Entries[i].Counter
			i++
		case i == len(a.Entries) || b.Entries[j].Actor < a.Entries[i].Actor:
			y = b.Entries[j].Counter
			j++
		default:
			x, y = a.Entries[i].Counter, b.Entries[j].Counter
			i++
			j++
		}
		if x < y {
			less = true
		} else if x > y {
			greater = true
		}
		if less && greater {
			return vclock.Concurrent
		}
	}
	switch {
	case less:
		return vclock.Before
	case greater:
		return vclock.After
	}
	return vclock.Equal
}

// Covers reports whether b equals or descends from a (a ≤ b).
func Covers(b, a Version) bool {
	r := Compare(a, b)
	return r == vclock.Equal || r == vclock.Before
}

// Join returns the entry-wise maximum of vs: the least version that covers
// all of them.
func Join(vs ...Version) Version {
	var out []Entry
	for _, v := range vs {
		out = joinEntries(out, v.Entries)
	}
	return Version{Entries: out}
}

func joinEntries(a, b []Entry) []Entry {
	if len(b) == 0 {
		return a
	}
	out := make([]Entry, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Actor < b[j].Actor):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Actor < a[i].Actor:
			out = append(out, b[j])
			j++
		default:
			out = append(out, Entry{Actor: a[i].Actor, Counter: max(a[i].Counter, b[j].Counter)})
			i++
			j++
		}
	}
	return out
}

// Descend returns the version of a write by actor, numbered counter, that
// saw context: Join(context...) with the actor's entry set to counter, which
// must exceed the actor's entry in every context version (the caller keeps a
// per-session counter; see NextCounter). The result covers every context
// version and no other version.
//
// If the result would exceed entriesMax entries (≤ VersionEntriesMax), the
// entries with the smallest counters are dropped, the actor's own excepted.
// Pruning is safe in one direction only, and it is that one: dropping
// entries can make a later comparison answer "concurrent" where the full
// clocks were ordered (an obsolete value survives as an extra sibling,
// which a reader resolves), but never "ordered" where they were concurrent,
// because a version's own dot is never pruned when it is written: b can only
// cover a if b's writer saw a's dot, i.e. saw a (see Version). Small
// counters belong to short sessions (a CLI invocation writes once), so those
// go first. This is Riak's and Voldemort's remedy for actor explosion.
func Descend(context []Version, actor, counter uint64, entriesMax int) Version {
	assert(counter > 0, "Descend: counter 0")
	j := Join(context...)
	assert(j.Get(actor) < counter, "Descend: counter %d not above the context's %d", counter, j.Get(actor))
	entries := slices.Clone(j.Entries)
	i, found := slices.BinarySearchFunc(entries, actor, func(e Entry, a uint64) int {
		switch {
		case e.Actor < a:
			return -1
		case e.Actor > a:
			return 1
		}
		return 0
	})
	if found {
		entries[i].Counter = counter
	} else {
		entries = slices.Insert(entries, i, Entry{Actor: actor, Counter: counter})
	}
	if entriesMax <= 0 || entriesMax > VersionEntriesMax {
		entriesMax = VersionEntriesMax
	}
	if len(entries) > entriesMax {
		entries = prune(entries, actor, entriesMax)
	}
	return Version{Entries: entries}
}

// prune keeps the actor's entry and the entriesMax−1 others with the largest
// counters (ties: larger actor id kept), in actor order.
func prune(entries []Entry, actor uint64, entriesMax int) []Entry {
	others := make([]Entry, 0, len(entries))
	var own Entry
	for _, e := range entries {
		if e.Actor == actor {
			own = e
			continue
		}
		others = append(others, e)
	}
	slices.SortFunc(others, func(a, b Entry) int {
		if a.Counter != b.Counter {
			if a.Counter > b.Counter {
				return -1
			}
			return 1
		}
		if a.Actor > b.Actor {
			return -1
		}
		return 1
	})
	kept := append(others[:entriesMax-1:entriesMax-1], own)
	slices.SortFunc(kept, func(a, b Entry) int {
		if a.Actor < b.Actor {
			return -1
		}
		return 1
	})
	return kept
}

// NextCounter returns the counter a session's next write must use: above
// both its last counter and whatever the context already holds for it (a
// session resumed under an old actor id must not reuse a dot).
func NextCounter(last uint64, context []Version, actor uint64) uint64 {
	n := last
	for _, v := range context {
		n = max(n, v.Get(actor))
	}
	return n + 1
}

// String formats a version as "{a1:3,ff:1}" (actors in hex).
func (v Version) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range v.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(e.Actor, 16))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(e.Counter, 10))
	}
	b.WriteByte('}')
	return b.String()
}

// cmpVersionBytes orders versions canonically (by actor, then counter, entry
// by entry, shorter first on a common prefix): the order siblings are kept in.
func cmpVersion(a, b Version) int {
	for i := 0; i < len(a.Entries) && i < len(b.Entries); i++ {
		x, y := a.Entries[i], b.Entries[i]
		if x.Actor != y.Actor {
			if x.Actor < y.Actor {
				return -1
			}
			return 1
		}
		if x.Counter != y.Counter {
			if x.Counter < y.Counter {
				return -1
			}
			return 1
		}
	}
	return len(a.Entries) - len(b.Entries)
}
