package kv

import (
	"fmt"
	"sync"

	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

// CandidatesLimit caps Detector's buffer.
const CandidatesLimit = 1 << 22

// Detector is a server's local predicate detector (§V) as a PutHook: it
// feeds every applied PUT — key, new value, HVC stamp — to a
// monitor.Detector, which decides which candidates the monitors need, and
// keeps those candidates in a bounded buffer for the monitors to fetch
// (Candidates; the shell serves them over HTTP). The monitor processes are
// later work; this is the server half.
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
	monitor.Outbound
}

// DetectorStats counts a detector's output.
type DetectorStats struct {
	Emitted uint64 `json:"emitted"` // candidates produced
	Dropped uint64 `json:"dropped"` // pushed out of the full buffer (read or not)
	Errors  uint64 `json:"errors"`  // PUTs the detector refused (clock regressions)
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
	return &Detector{det: det, spec: spec, max: candidatesMax, next: 1}, nil
}

// Spec is the monitored spec.
func (d *Detector) Spec() *monitor.Spec { return d.spec }

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
	for _, o := range out {
		c := IndexedCandidate{Index: d.next, Outbound: o}
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
func (d *Detector) Stats() DetectorStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return DetectorStats{Emitted: d.next - 1, Dropped: d.dropped, Errors: d.errs}
}
