package kv

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

// CandidatesLimit caps Detector's buffer.
const CandidatesLimit = 1 << 22

// Detector is a server's local predicate detector (§V) as a PutHook: it
// feeds every applied PUT — key, new value, HVC stamp — to a
// monitor.Detector, which decides which candidates the monitors need, and
// keeps those candidates in a bounded buffer for the monitors to fetch
// (Candidates; the shell serves them over HTTP to the monitor process,
// Watcher). After a rollback's restore, Reset starts a new generation.
//
// The buffer holds the latest CandidatesMax candidates, numbered from 1 in
// the order the detector emitted them. When it is full the oldest is
// dropped and counted: a monitor whose cursor falls behind the buffer learns
// how many it missed (the store never waits for its monitors: detection is
// non-intrusive, §I).
//
// Safe for concurrent use: the replica calls Put and Flush under its clock
// lock (so stamps arrive in order), readers call Candidates from anywhere.
type Detector struct {
	mu      sync.Mutex
	det     *monitor.Detector
	boot    uint64        // the server incarnation (its start time)
	gen     uint64        // the rollback generation of det's states
	wake    chan struct{} // closed and replaced when candidates arrive
	spec    *monitor.Spec
	buf     []IndexedCandidate // ring buffer of at most max
	head    int                // index in buf of the oldest
	max     int
	next    uint64 // index of the next candidate
	dropped uint64
	errs    uint64
	lastErr error
}

// IndexedCandidate is a candidate with its position in the detector's output.
type IndexedCandidate struct {
	Index uint64
	// Gen is the rollback generation of the detector that emitted it:
	// Seq numbers restart at 0 in each generation (Reset).
	Gen uint64
	monitor.Outbound
}

// NewDetector returns the detector of server on spec (validated here),
// whose first state starts at start (the replica's clock when monitoring
// begins), buffering at most candidatesMax candidates.
func NewDetector(spec *monitor.Spec, server int, start vclock.HVC, candidatesMax int) (*Detector, error) {
	if candidatesMax < 1 || candidatesMax > CandidatesLimit {
		return nil, fmt.Errorf("kv: CandidatesMax %d not in [1, %d]", candidatesMax, CandidatesLimit)
	}
	det, err := monitor.NewDetector(spec, server, start)
	if err != nil {
		return nil, err
	}
	return &Detector{det: det, spec: spec, max: candidatesMax, next: 1, wake: make(chan struct{})}, nil
}

// SetEpoch records the server incarnation (boot: any value that differs
// between restarts, e.g. the start time) and rollback generation the
// candidates belong to; monitors restart their per-server sequence when
// either changes.
func (d *Detector) SetEpoch(boot, gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.boot, d.gen = boot, gen
}

// Epoch returns the incarnation and generation.
func (d *Detector) Epoch() (boot, gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.boot, d.gen
}

// Load sets the current values of keys and the stamps of the PUTs that
// wrote them (see monitor.Detector.LoadAt; a missing stamp reads as "at the
// beginning").
func (d *Detector) Load(values map[string]string, ats map[string]vclock.HVC) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(values)) {
		d.det.LoadAt(k, values[k], ats[k])
	}
}

// Reset starts a new generation after a rollback: a fresh monitor.Detector
// whose states begin when their restored values were written (ats; the
// zero HVC for values older than the window), with Seq numbers from 0.
// Beginning them at the restore instead would make a violation that still
// holds in the restored state look as if it began at the restore, and a
// rollback to before it would undo nothing. Buffered candidates of older
// generations stay readable; monitors drop them.
func (d *Detector) Reset(gen uint64, values map[string]string, ats map[string]vclock.HVC) error {
	det, err := monitor.NewDetector(d.spec, d.det.Server(), vclock.HVC{})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		det.LoadAt(k, values[k], ats[k])
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.det, d.gen = det, gen
	return nil
}

// Wait returns a channel closed when a candidate after index after exists.
func (d *Detector) Wait(after uint64) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.next-1 > after {
		c := make(chan struct{})
		close(c)
		return c
	}
	return d.wake
}

// Spec is the monitored spec.
func (d *Detector) Spec() *monitor.Spec { return d.spec }

// Keys lists the keys the spec names on this server, sorted.
func (d *Detector) Keys() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.det.Keys()
}

// Relevant reports whether a predicate names key on this server.
func (d *Detector) Relevant(key string) bool { return d.det.Relevant(key) }

// Put implements PutHook.
func (d *Detector) Put(at vclock.HVC, key string, value []byte) {
	if !d.det.Relevant(key) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out, err := d.det.Put(at, key, string(value))
	d.take(out, err)
}

// Flush ends the current states at at (the detector's heartbeat; see
// monitor.Detector.Flush). The shell calls it through Replica.Stamp.
func (d *Detector) Flush(at vclock.HVC) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out, err := d.det.Flush(at)
	d.take(out, err)
}

func (d *Detector) take(out []monitor.Outbound, err error) {
	if err != nil {
		d.errs++
		d.lastErr = err
		return
	}
	if len(out) > 0 {
		close(d.wake)
		d.wake = make(chan struct{})
	}
	for _, o := range out {
		c := IndexedCandidate{Index: d.next, Gen: d.gen, Outbound: o}
		d.next++
		if len(d.buf) < d.max {
			d.buf = append(d.buf, c)
			continue
		}
		d.buf[d.head] = c
		d.head = (d.head + 1) % d.max
		d.dropped++
	}
}

// Candidates returns up to limit buffered candidates with Index > after, in
// order, and how many candidates after `after` were already dropped (the
// caller missed them). Pass the last Index seen as the next after.
func (d *Detector) Candidates(after uint64, limit int) (cs []IndexedCandidate, missed uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.buf) == 0 {
		return nil, 0
	}
	oldest := d.buf[d.head].Index
	if after+1 < oldest {
		missed = oldest - after - 1
	}
	for i := range len(d.buf) {
		c := d.buf[(d.head+i)%len(d.buf)]
		if c.Index <= after {
			continue
		}
		if len(cs) == limit {
			break
		}
		cs = append(cs, c)
	}
	return cs, missed
}

// Stats returns the counters.
func (d *Detector) Stats() kvcore.DetectorStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return kvcore.DetectorStats{Emitted: d.next - 1, Dropped: d.dropped, Errors: d.errs}
}
