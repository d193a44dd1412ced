package kvcore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/vclock"
)

// Sibling is one ⟨version, value⟩ of a key (§II-A). A key's siblings are
// pairwise concurrent: none descends from another.
type Sibling struct {
	Version Version `json:"version"`
	Value   []byte  `json:"value"`
}

// Outcome says what a replica did with a PUT.
type Outcome uint8

const (
	// Applied: the value is now a sibling; the versions it descends from
	// are gone.
	Applied Outcome = iota + 1
	// Duplicate: the same version and value were already there (a retried
	// or duplicated PUT); nothing changed.
	Duplicate
	// Obsolete: a stored version descends from this one (a later write that
	// saw it got there first); nothing changed. The write is not lost: its
	// successor is there. Voldemort answers ObsoleteVersionException.
	Obsolete
)

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	case Obsolete:
		return "obsolete"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Apply is the replica's PUT rule, a pure function of the stored siblings
// and the incoming one (which must be valid): stored versions the incoming
// one descends from are superseded, concurrent ones stay as siblings.
//
//   - some stored version equals the incoming one: Duplicate if the values
//     match, else ErrVersionReused (two values under one dot: a broken
//     client);
//   - some stored version descends from it: Obsolete;
//   - otherwise Applied: the result holds the concurrent stored siblings and
//     the incoming one, in canonical order (cmpVersion).
//
// Sibling policy: a key holds at most siblingsMax concurrent values. A PUT
// that would make more fails with ErrTooManySiblings and changes nothing:
// values are never dropped silently, and the writer learns that the key
// needs resolving (read all siblings, write one value with all of them as
// context: that PUT supersedes them all and always fits).
//
// stored is not modified; next shares Value slices with stored and in.
func Apply(stored []Sibling, in Sibling, siblingsMax int) (next []Sibling, o Outcome, err error) {
	kept := make([]Sibling, 0, len(stored)+1)
	for _, s := range stored {
		switch Compare(in.Version, s.Version) {
		case vclock.Equal:
			if !bytes.Equal(in.Value, s.Value) {
				return nil, 0, fmt.Errorf("%w: version %s", ErrVersionReused, in.Version)
			}
			return stored, Duplicate, nil
		case vclock.Before:
			return stored, Obsolete, nil
		case vclock.Concurrent:
			kept = append(kept, s)
		}
		// After: superseded, dropped.
	}
	if len(kept)+1 > siblingsMax {
		return nil, 0, fmt.Errorf("%w: %d concurrent values (at most %d); read and resolve them",
			ErrTooManySiblings, len(kept)+1, siblingsMax)
	}
	kept = append(kept, in)
	slices.SortFunc(kept, func(a, b Sibling) int { return cmpVersion(a.Version, b.Version) })
	if invariants.On {
		checkSiblings(kept)
	}
	return kept, Applied, nil
}

// Merge combines the sibling lists several replicas answered for one key
// into what a GET returns: every version no other answered version descends
// from, once, in canonical order. A version answered with two different
// values (impossible from honest replicas) keeps the first.
func Merge(lists ...[]Sibling) []Sibling {
	var all []Sibling
	for _, l := range lists {
		all = append(all, l...)
	}
	out := make([]Sibling, 0, len(all))
outer:
	for i, s := range all {
		for j, t := range all {
			if i == j {
				continue
			}
			switch Compare(s.Version, t.Version) {
			case vclock.Before:
				continue outer
			case vclock.Equal:
				if j < i {
					continue outer
				}
			}
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Sibling) int { return cmpVersion(a.Version, b.Version) })
	return out
}

// Versions returns the versions of siblings: the context a PUT passes to
// supersede them.
func Versions(sibs []Sibling) []Version {
	out := make([]Version, len(sibs))
	for i, s := range sibs {
		out[i] = s.Version
	}
	return out
}

// CoveredBy reports whether some sibling's version equals or descends from v:
// a GET answering sibs has seen the write of v.
func CoveredBy(v Version, sibs []Sibling) bool {
	for _, s := range sibs {
		if Covers(s.Version, v) {
			return true
		}
	}
	return false
}

// checkSiblings asserts the stored form: pairwise concurrent, canonical order.
func checkSiblings(sibs []Sibling) {
	for i := range sibs {
		if i > 0 {
			assert(cmpVersion(sibs[i-1].Version, sibs[i].Version) < 0, "siblings out of order: %s, %s", sibs[i-1].Version, sibs[i].Version)
		}
		for j := i + 1; j < len(sibs); j++ {
			r := Compare(sibs[i].Version, sibs[j].Version)
			assert(r == vclock.Concurrent, "siblings %s and %s are %s", sibs[i].Version, sibs[j].Version, r)
		}
	}
}
