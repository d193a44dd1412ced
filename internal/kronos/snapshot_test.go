package kronos

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// snapEnc writes snapshot bytes field by field (AppendSnapshot's layout), so
// a test can write states the core never reaches.
type snapEnc []byte

// u and raw return a new slice: clipped, e is never appended to in place, so
// cases built from one prefix do not overwrite each other.
func (e snapEnc) u(vs ...uint64) snapEnc {
	e = slices.Clip(e)
	for _, v := range vs {
		e = binary.AppendUvarint(e, v)
	}
	return e
}

func (e snapEnc) raw(bs ...byte) snapEnc { return append(slices.Clip(e), bs...) }

// Kronos paper §2.4: a replica restores from a snapshot. Restore rejects,
// without panicking, every snapshot that is not one AppendSnapshot writes
// for a state the core can reach; each case was accepted (or crashed)
// before the fix named.
func TestKronos2_4RestoreRejectsCorruptSnapshots(t *testing.T) {
	magic := snapEnc(snapshotMagic)
	// Two events: #1 (one reference) → #2 (pinned by the edge).
	events := magic.u(3, 2, 0, 2).u(1, 1, 1, 2).u(1, 0, 0)
	// Clock events #1 gk0@[1,0] and #2 gk1@[0,1] of epoch 0, concurrent.
	clocks := magic.u(3, 2, 0, 2).u(1, uint64(clockFlag), 0).u(1, uint64(clockFlag), 0)
	// #1 (one reference) → #2, a clock event released below watermark [2]
	// and pinned by the edge: its chain entry stays.
	pinned := magic.u(3, 2, 0, 2).u(1, 1, 1, 2).u(1, 0, 0).u(1).u(0, 0, 1, 2, 1, 1)
	// #1 → #3 and #2 → #3: held gk0@[1] (#2), then released gk0@[2] (#3).
	heldFirst := magic.u(4, 3, 0, 3).u(1, 1, 1, 3).u(1, uint64(clockFlag), 1, 3).u(1, 0, 0).u(1).u(0, 0, 2, 2, 1, 1, 3, 1, 2)
	for _, c := range []struct {
		name string
		b    snapEnc
		ok   bool
	}{
		{"valid ids", events.u(0, 0).raw(0), true},
		{"valid clocks", clocks.u(2).u(0, 0, 1, 1, 2, 1, 0).u(0, 1, 1, 2, 2, 0, 1).u(0).raw(0), true},
		{"released entry", pinned.u(1, 0, 0, 1, 2).raw(1).u(0, 1, 2), true},
		// Released entries (events without the clock flag) must be a
		// prefix of their chain, strictly below the watermark.
		{"released entry above the watermark", pinned.u(1, 0, 0, 1, 1).raw(1).u(0, 1, 1), false},
		{"released entry, no watermark", pinned.u(0).raw(0), false},
		{"released entry after a held one", heldFirst.u(1, 0, 0, 1, 3).raw(1).u(0, 1, 3), false},
		// fixed: Restore accepted it; the graph then created event 0.
		{"next id 0", magic.u(0, 0, 0, 0, 0, 0).raw(0), false},
		// fixed: the second id wraps around below the first chunk and the
		// table grew its directory until the process died.
		{"id wraps around", magic.u(1<<20, 2, 0, 2).u(5000, 1, 0).u(^uint64(0)-3999, 1, 0).u(0, 0).raw(0), false},
		// fixed (canonical form): each restored, but re-snapshotted to
		// other bytes.
		{"overlong varint", magic.raw(0x83, 0x00).u(2, 0, 2).u(1, 1, 1, 2).u(1, 0, 0).u(0, 0).raw(0), false},
		{"empty chain", events.u(1, 0, 0, 0).u(0).raw(0), false},
		{"watermark flag 2", events.u(0, 0).raw(2), false},
		{"chains out of order", clocks.u(2).u(0, 1, 1, 2, 2, 0, 1).u(0, 0, 1, 1, 2, 1, 0).u(0).raw(0), false},
		{"chain listed twice", clocks.u(2).u(0, 0, 1, 1, 2, 1, 0).u(0, 0, 1, 2, 2, 2, 0).u(0).raw(0), false},
		{"reports out of order", events.u(0, 2).u(1, 0, 1, 0).u(0, 0, 1, 0).raw(0), false},
		{"owner beyond uint32", clocks.u(2).u(0, 0, 1, 1, 2, 1, 0).u(0, 1<<32+1, 1, 2, 2, 0, 1).u(0).raw(0), false},
		// fixed (CheckInvariants): #1 named by two chains, #2 flagged but
		// in none — cleanup then never released #2.
		{"event in two chains", clocks.u(2).u(0, 0, 1, 1, 2, 1, 0).u(0, 1, 1, 1, 2, 0, 1).u(0).raw(0), false},
		// fixed (CheckInvariants): one epoch, two widths — lookups of the
		// second chain's clocks were refused as invalid.
		{"two widths in an epoch", clocks.u(2).u(0, 0, 1, 1, 2, 1, 0).u(0, 1, 1, 2, 3, 0, 1, 0).u(0).raw(0), false},
		// fixed (CheckInvariants): created ≠ collected + live.
		{"counters disagree", magic.u(3, 7, 0, 2).u(1, 1, 1, 2).u(1, 0, 0).u(0, 0).raw(0), false},
		{"truncated", events.u(0, 0), false},
		{"trailing byte", events.u(0, 0).raw(0, 0), false},
		{"cycle", magic.u(3, 2, 0, 2).u(1, 1, 1, 2).u(1, 0, 1, 1).u(0, 0).raw(0), false},
	} {
		g, err := Restore(DefaultConfig(), c.b)
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || g != nil || !errors.Is(err, errSnapshot) {
			t.Errorf("%s: Restore(%q) = %v, %v; want a corrupt-snapshot error", c.name, []byte(c.b), g != nil, err)
		}
	}
}
