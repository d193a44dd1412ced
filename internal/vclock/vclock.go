package vclock

import (
	"fmt"
	"strconv"
	"strings"
)

// Clock is a vector timestamp: the epoch, then one counter per gatekeeper.
type Clock struct {
	Epoch    uint64
	Counters []uint64
}

// Relation is the outcome of comparing two clocks.
type Relation int8

const (
	// Equal: same epoch, same counters.
	Equal Relation = iota
	// Before: the first clock happens before the second.
	Before
	// After: the second clock happens before the first.
	After
	// Concurrent: neither dominates; only an oracle can order them.
	Concurrent
)

func (r Relation) String() string {
	switch r {
	case Equal:
		return "equal"
	case Before:
		return "before"
	case After:
		return "after"
	case Concurrent:
		return "concurrent"
	}
	return "Relation(" + strconv.Itoa(int(r)) + ")"
}

// New returns a zero clock of epoch e with n gatekeeper entries.
func New(epoch uint64, n int) Clock {
	return Clock{Epoch: epoch, Counters: make([]uint64, n)}
}

// Clone returns a deep copy.
func (c Clock) Clone() Clock {
	return Clock{Epoch: c.Epoch, Counters: append([]uint64(nil), c.Counters...)}
}

// Compare orders a against b: epochs first, then entry-wise. Clocks of the same
// epoch with different lengths compare as if the shorter were padded with zeros.
func Compare(a, b Clock) Relation {
	if a.Epoch != b.Epoch {
		if a.Epoch < b.Epoch {
			return Before
		}
		return After
	}
	return CompareCounters(a.Counters, b.Counters)
}

// CompareCounters compares two counter vectors entry-wise.
func CompareCounters(a, b []uint64) Relation {
	less, greater := false, false
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		var x, y uint64
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
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

// LessEq reports whether a ≤ b (equal or before).
func LessEq(a, b Clock) bool {
	r := Compare(a, b)
	return r == Equal || r == Before
}

// Tick increments entry i, returning the new value.
func (c *Clock) Tick(i int) uint64 {
	c.Counters[i]++
	return c.Counters[i]
}

// Merge raises c entry-wise to at least o (same epoch). A clock of a newer
// epoch replaces c entirely.
func (c *Clock) Merge(o Clock) {
	if o.Epoch > c.Epoch {
		*c = o.Clone()
		return
	}
	if o.Epoch < c.Epoch {
		return
	}
	for len(c.Counters) < len(o.Counters) {
		c.Counters = append(c.Counters, 0)
	}
	for i, v := range o.Counters {
		if v > c.Counters[i] {
			c.Counters[i] = v
		}
	}
}

// Min returns the entry-wise minimum of clocks of one epoch (the lowest epoch
// wins outright). It returns false for an empty list.
func Min(cs []Clock) (Clock, bool) {
	if len(cs) == 0 {
		return Clock{}, false
	}
	m := cs[0].Clone()
	for _, c := range cs[1:] {
		if c.Epoch < m.Epoch {
			m = c.Clone()
			continue
		}
		if c.Epoch > m.Epoch {
			continue
		}
		for i := range m.Counters {
			var v uint64
			if i < len(c.Counters) {
				v = c.Counters[i]
			}
			if v < m.Counters[i] {
				m.Counters[i] = v
			}
		}
	}
	return m, true
}

// String formats a clock as "e3:[1,4,2]".
func (c Clock) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "e%d:[", c.Epoch)
	for i, v := range c.Counters {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(v, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// Parse reads the String form back. It is strict: any other text is an error.
func Parse(s string) (Clock, error) {
	rest, ok := strings.CutPrefix(s, "e")
	if !ok {
		return Clock{}, fmt.Errorf("vclock: %q: missing epoch prefix 'e'", s)
	}
	es, body, ok := strings.Cut(rest, ":[")
	if !ok || !strings.HasSuffix(body, "]") {
		return Clock{}, fmt.Errorf("vclock: %q: want e<epoch>:[c0,c1,...]", s)
	}
	epoch, err := strconv.ParseUint(es, 10, 64)
	if err != nil {
		return Clock{}, fmt.Errorf("vclock: %q: bad epoch: %w", s, err)
	}
	body = strings.TrimSuffix(body, "]")
	c := Clock{Epoch: epoch, Counters: []uint64{}}
	if body == "" {
		return c, nil
	}
	for _, f := range strings.Split(body, ",") {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return Clock{}, fmt.Errorf("vclock: %q: bad counter %q: %w", s, f, err)
		}
		c.Counters = append(c.Counters, v)
	}
	return c, nil
}
