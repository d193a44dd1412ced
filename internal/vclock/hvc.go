package vclock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// EpsilonInfinite is ε = ∞: no entry is ever implicit, and an HVC carries
// exactly the information of a vector clock whose counters are physical times
// (Nguyen et al., §III-A: "If we set ε = ∞, then hybrid vector clocks have the
// same properties as vector clocks").
const EpsilonInfinite uint64 = math.MaxUint64

// HVCProcsMax bounds the number of entries of an HVC: DecodeHVC refuses more,
// so a hostile length cannot make it allocate without bound.
const HVCProcsMax = 1 << 16

// hvcVersion is the first byte of the binary form; a new layout gets a new one.
const hvcVersion = 1

var (
	// ErrHVCDecode is wrapped by every DecodeHVC error.
	ErrHVCDecode = errors.New("vclock: malformed hybrid vector clock")
	// ErrHVCShape is returned for a clock whose size or owner does not fit.
	ErrHVCShape = errors.New("vclock: hybrid vector clock of the wrong shape")
)

// PhysicalClock reads a process's physical clock, in whatever unit the caller
// chose (ε uses the same unit). It is injected so that tests and the simulator
// control skew; a shell passes a wrapper around time.Now.
type PhysicalClock func() uint64

// HVC is a hybrid vector clock value (Nguyen et al. §III-A, after Demirbas and
// Kulkarni): Entries[Self] is the owner's physical time at the event, and
// Entries[j] the most recent time of process j that the owner knows of.
// Entries at or below the floor Own()−ε are implicit: they read as the floor
// (the "ε rule"), and the binary form omits them (the paper's compact
// representation: a bitmap of explicit entries and their values).
//
// An HVC is a value: HybridClock never mutates one it has handed out, and
// callers must not either, so values may be shared and read concurrently.
type HVC struct {
	Self    uint32
	Epsilon uint64
	Entries []uint64
}

// Own is the owner's entry: its physical time at the event.
func (h HVC) Own() uint64 {
	if int(h.Self) < len(h.Entries) {
		return h.Entries[h.Self]
	}
	return 0
}

// Floor is Own()−ε, saturated at 0: the value every implicit entry stands for.
func (h HVC) Floor() uint64 {
	own := h.Own()
	if h.Epsilon >= own {
		return 0
	}
	return own - h.Epsilon
}

// At is entry k under the ε rule: an entry older than Own()−ε (or missing,
// for k beyond the vector) reads as Own()−ε.
func (h HVC) At(k int) uint64 {
	if k == int(h.Self) {
		return h.Own()
	}
	f := h.Floor()
	if k < len(h.Entries) && h.Entries[k] > f {
		return h.Entries[k]
	}
	return f
}

// Explicit reports whether entry k is kept explicitly in the compact form:
// the owner's entry always, any other only while it is above the floor.
func (h HVC) Explicit(k int) bool {
	if k == int(h.Self) {
		return true
	}
	return k < len(h.Entries) && h.Entries[k] > h.Floor()
}

// ActiveSize is the number of explicit entries (the owner's included): the
// HVC's size in the paper's compact representation. With ε = ∞ it is the
// number of processes heard of; as ε shrinks it falls towards 1.
func (h HVC) ActiveSize() int {
	n := 0
	for k := range h.Entries {
		if h.Explicit(k) {
			n++
		}
	}
	return n
}

// Clone returns a deep copy.
func (h HVC) Clone() HVC {
	h.Entries = append([]uint64(nil), h.Entries...)
	return h
}

// IsZero reports the zero value (no entries at all).
func (h HVC) IsZero() bool { return len(h.Entries) == 0 }

// CompareHVC orders two hybrid vector clocks entry-wise under the ε rule
// (each side's implicit entries read as its own floor): a < b iff a[k] ≤ b[k]
// for every k and a[l] < b[l] for some l; neither means concurrent. Vectors
// of different lengths compare as if the shorter were padded with implicit
// entries. Because of the floor, events more than ε (plus clock skew) apart in
// physical time compare as ordered even when no message links them.
func CompareHVC(a, b HVC) Relation {
	less, greater := false, false
	n := max(len(a.Entries), len(b.Entries))
	for k := 0; k < n; k++ {
		x, y := a.At(k), b.At(k)
		if x < y {
			less = true
		} else if x > y {
			greater = true
		}
		if less && greater {
			return Concurrent
		}
	}
	switch {
	case less:
		return Before
	case greater:
		return After
	}
	return Equal
}

// String formats an HVC with implicit entries as '·', e.g.
// "p0 ε=20 [100,·,·,95,·,·,100,·,·,·]" for the paper's example.
func (h HVC) String() string {
	var b strings.Builder
	b.WriteByte('p')
	b.WriteString(strconv.FormatUint(uint64(h.Self), 10))
	if h.Epsilon == EpsilonInfinite {
		b.WriteString(" ε=∞ [")
	} else {
		b.WriteString(" ε=")
		b.WriteString(strconv.FormatUint(h.Epsilon, 10))
		b.WriteString(" [")
	}
	for k, v := range h.Entries {
		if k > 0 {
			b.WriteByte(',')
		}
		if h.Explicit(k) {
			b.WriteString(strconv.FormatUint(v, 10))
		} else {
			b.WriteString("·")
		}
	}
	b.WriteByte(']')
	return b.String()
}

// HybridClock is one process's HVC state machine. It is not safe for
// concurrent use; the values it returns are.
type HybridClock struct {
	now PhysicalClock
	cur HVC
}

// NewHybridClock returns the clock of process self among n, with all entries
// 0 (the state before any event: it precedes every stamp the clock issues).
func NewHybridClock(n, self int, epsilon uint64, now PhysicalClock) (*HybridClock, error) {
	if n < 1 || n > HVCProcsMax || self < 0 || self >= n {
		return nil, fmt.Errorf("%w: process %d of %d (want 0 ≤ self < n ≤ %d)", ErrHVCShape, self, n, HVCProcsMax)
	}
	if now == nil {
		return nil, errors.New("vclock: HybridClock needs a physical clock")
	}
	return &HybridClock{now: now, cur: HVC{Self: uint32(self), Epsilon: epsilon, Entries: make([]uint64, n)}}, nil
}

// Current is the clock's value after its last event (all zeros before the
// first). It does not read the physical clock.
func (c *HybridClock) Current() HVC { return c.cur }

// Tick records a local or send event and returns its stamp, which is also
// what a send piggy-backs (§III-A): HVC[i] = PT_i and, for j ≠ i,
// HVC[j] = max(HVC[j], PT_i − ε).
//
// One refinement keeps the clock strictly monotone when the physical clock
// has not advanced since the last event (coarse resolution, or a clock
// stepped back): the own entry becomes max(PT_i, previous own + 1), as in the
// HVC authors' implementation. With a clock that advances between events it is
// exactly PT_i.
func (c *HybridClock) Tick() HVC {
	prev := c.cur.Entries
	next := make([]uint64, len(prev))
	copy(next, prev)
	own := max(c.now(), satAdd(prev[c.cur.Self], 1))
	c.install(next, own)
	return c.cur
}

// Receive records the receipt of a message stamped m and returns the receive
// event's stamp: HVC[i] = PT_i and, for j ≠ i, HVC[j] = max(HVC[j],
// HVC_msg[j], PT_i − ε), where HVC_msg is read under the sender's ε rule.
//
// The paper prints the receive rule as max(HVC_msg[j], PT_i − ε); keeping the
// receiver's own HVC[j] in the max is what makes the clock monotone (the
// receive must follow the receiver's earlier events) and gives it the vector
// clock properties the paper claims for ε = ∞, so it is kept. The own entry is
// also raised above what the message knows of this process, which only matters
// if this process's clock ran backwards; see Tick for the +1.
func (c *HybridClock) Receive(m HVC) (HVC, error) {
	prev := c.cur.Entries
	if len(m.Entries) != len(prev) || int(m.Self) >= len(m.Entries) {
		return c.cur, fmt.Errorf("%w: message clock has %d entries (owner %d), this clock %d",
			ErrHVCShape, len(m.Entries), m.Self, len(prev))
	}
	self := int(c.cur.Self)
	next := make([]uint64, len(prev))
	for k := range next {
		next[k] = max(prev[k], m.At(k))
	}
	own := max(c.now(), satAdd(prev[self], 1), satAdd(m.At(self), 1))
	c.install(next, own)
	return c.cur, nil
}

// install sets the own entry, clamps the others to the floor and makes the
// result the current value.
func (c *HybridClock) install(next []uint64, own uint64) {
	next[c.cur.Self] = own
	h := HVC{Self: c.cur.Self, Epsilon: c.cur.Epsilon, Entries: next}
	f := h.Floor()
	for k := range next {
		if next[k] < f {
			next[k] = f
		}
	}
	c.cur = h
}

func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// MarshalBinary encodes h in its compact form; see AppendBinary.
func (h HVC) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// AppendBinary appends the compact binary form of h:
//
//	version byte (1)
//	uvarint n, uvarint self (< n), uvarint ε, uvarint own
//	bitmap of ⌈n/8⌉ bytes, bit k (LSB first) set iff entry k ≠ self is explicit
//	for each set bit, ascending: uvarint (entry − floor), which is ≥ 1
//
// Implicit entries (at or below the floor) cost one bit, as in the paper's
// example. The form is canonical: DecodeHVC accepts exactly the outputs of
// AppendBinary, so equal clocks under the ε rule encode to equal bytes.
func (h HVC) AppendBinary(b []byte) ([]byte, error) {
	n := len(h.Entries)
	if n < 1 || n > HVCProcsMax || int(h.Self) >= n {
		return b, fmt.Errorf("%w: owner %d of %d entries", ErrHVCShape, h.Self, n)
	}
	b = append(b, hvcVersion)
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(h.Self))
	b = binary.AppendUvarint(b, h.Epsilon)
	b = binary.AppendUvarint(b, h.Own())
	mapAt := len(b)
	b = append(b, make([]byte, (n+7)/8)...)
	f := h.Floor()
	for k, v := range h.Entries {
		if k == int(h.Self) || v <= f {
			continue
		}
		b[mapAt+k/8] |= 1 << (k % 8)
		b = binary.AppendUvarint(b, v-f)
	}
	return b, nil
}

// UnmarshalBinary decodes into h; see DecodeHVC.
func (h *HVC) UnmarshalBinary(b []byte) error {
	d, err := DecodeHVC(b)
	if err != nil {
		return err
	}
	*h = d
	return nil
}

// DecodeHVC decodes the form AppendBinary writes. It is strict: trailing
// bytes, non-minimal varints, set padding bits, an explicit entry at or below
// the floor, or an entry that overflows are errors (wrapping ErrHVCDecode).
// Implicit entries come back as the floor, so the result is clamped.
func DecodeHVC(b []byte) (HVC, error) {
	if len(b) == 0 || b[0] != hvcVersion {
		return HVC{}, fmt.Errorf("%w: missing version byte %d", ErrHVCDecode, hvcVersion)
	}
	r := hvcReader{b: b[1:]}
	n, self, eps, own := r.uvarint("n"), r.uvarint("self"), r.uvarint("ε"), r.uvarint("own")
	if r.err != nil {
		return HVC{}, r.err
	}
	if n < 1 || n > HVCProcsMax || self >= n {
		return HVC{}, fmt.Errorf("%w: owner %d of %d entries (at most %d)", ErrHVCDecode, self, n, HVCProcsMax)
	}
	mapLen := int(n+7) / 8
	if len(r.b) < mapLen {
		return HVC{}, fmt.Errorf("%w: bitmap needs %d bytes, %d left", ErrHVCDecode, mapLen, len(r.b))
	}
	bitmap := r.b[:mapLen]
	r.b = r.b[mapLen:]
	if pad := n % 8; pad != 0 && bitmap[mapLen-1]>>pad != 0 {
		return HVC{}, fmt.Errorf("%w: padding bits set", ErrHVCDecode)
	}
	if bitmap[self/8]&(1<<(self%8)) != 0 {
		return HVC{}, fmt.Errorf("%w: owner's bit set", ErrHVCDecode)
	}
	h := HVC{Self: uint32(self), Epsilon: eps, Entries: make([]uint64, n)}
	h.Entries[self] = own
	f := h.Floor()
	for k := range h.Entries {
		if k == int(self) {
			continue
		}
		h.Entries[k] = f
		if bitmap[k/8]&(1<<(k%8)) == 0 {
			continue
		}
		d := r.uvarint("entry")
		if r.err != nil {
			return HVC{}, r.err
		}
		v, carry := bits.Add64(f, d, 0)
		if d == 0 || carry != 0 {
			return HVC{}, fmt.Errorf("%w: entry %d: offset %d above floor %d", ErrHVCDecode, k, d, f)
		}
		h.Entries[k] = v
	}
	if len(r.b) != 0 {
		return HVC{}, fmt.Errorf("%w: %d trailing bytes", ErrHVCDecode, len(r.b))
	}
	return h, nil
}

// hvcReader reads minimal uvarints, remembering the first error.
type hvcReader struct {
	b   []byte
	err error
}

func (r *hvcReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint for %s", ErrHVCDecode, what)
		return 0
	}
	if n != uvarintLen(v) {
		r.err = fmt.Errorf("%w: non-minimal varint for %s", ErrHVCDecode, what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func uvarintLen(v uint64) int {
	return max(1, (bits.Len64(v)+6)/7)
}
