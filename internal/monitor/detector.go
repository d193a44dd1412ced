package monitor

import (
	"fmt"
	"maps"
	"slices"

	"github.com/weft-db/weft/internal/vclock"
)

// Detector is the local predicate detector of one server (§V): it watches the
// server's PUTs and, when a PUT changes a key some predicate names on this
// server, decides whether the state that PUT ends must go to that predicate's
// monitor. One detector serves every predicate of the spec.
//
// The rule (Fig. 5): a PUT ends the state that began at the previous relevant
// PUT, and that state is sent, as [previous stamp, this stamp), only if it can
// be part of a violation:
//   - conjunctive: the predicate's local part on this server held in it;
//   - linear: some clause's local part on this server held in it (a state in
//     which none does is forbidden, so the monitor would skip it);
//   - semilinear: always ("the candidate is always sent upon a PUT request of
//     relevant variables").
//
// Whether the local part holds after the PUT does not matter yet: that state
// is judged when the next relevant PUT (or Flush) ends it.
//
// Detector is a pure core, not safe for concurrent use. Its returned slices
// are reused by the next call.
type Detector struct {
	spec   *Spec
	server int
	preds  []detPred
	byKey  map[string][]keyRef
	out    []Outbound
	scr    []uint64
}

type detPred struct {
	c      *compiled
	slot   int
	values []string
	start  vclock.HVC
	seq    uint64
}

type keyRef struct {
	pred int // index into Detector.preds
	key  int // index into the predicate's keys on this server
}

// NewDetector returns the detector of server, whose states begin at start
// (the server's HVC when monitoring begins; the zero HVC for "the beginning").
// Every key reads as "" until written.
func NewDetector(spec *Spec, server int, start vclock.HVC) (*Detector, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if server < 0 || server >= spec.Servers {
		return nil, fmt.Errorf("%w: server %d not in [0, %d)", ErrSpec, server, spec.Servers)
	}
	d := &Detector{spec: spec, server: server, byKey: map[string][]keyRef{}}
	for _, c := range spec.compiled {
		s := c.slot(server)
		if s < 0 {
			continue
		}
		for k, key := range c.keys[s] {
			d.byKey[key] = append(d.byKey[key], keyRef{pred: len(d.preds), key: k})
		}
		d.preds = append(d.preds, detPred{c: c, slot: s, values: make([]string, len(c.keys[s])), start: start})
	}
	return d, nil
}

// Load sets key's current value without ending any state: the value the
// server already holds when monitoring begins (after a restart, or a
// rollback's restore), so the first state's values are the stored ones
// rather than "". Call it before the first Put or Flush; irrelevant keys are
// ignored.
func (d *Detector) Load(key, value string) {
	for _, r := range d.byKey[key] {
		d.preds[r.pred].values[r.key] = value
	}
}

// LoadAt is Load for a value written by the event stamped at: every state
// of a predicate naming key begins no earlier than at (the latest of the
// loaded stamps), so a restored or restarted server's first state carries
// the time its values were really set, not the restart's. Call it before
// the first Put or Flush.
func (d *Detector) LoadAt(key, value string, at vclock.HVC) {
	for _, r := range d.byKey[key] {
		p := &d.preds[r.pred]
		p.values[r.key] = value
		if !at.IsZero() && (p.start.IsZero() || vclock.CompareHVC(p.start, at) == vclock.Before) {
			p.start = at
		}
	}
}

// Server is the detector's server number.
func (d *Detector) Server() int { return d.server }

// Keys lists the keys some predicate names on this server, sorted.
func (d *Detector) Keys() []string { return slices.Sorted(maps.Keys(d.byKey)) }

// Relevant reports whether some predicate names key on this server.
func (d *Detector) Relevant(key string) bool { return len(d.byKey[key]) > 0 }

// Put records that the server applied PUT(key, value) at the event stamped
// at, and returns the candidates to send (nil if the key is irrelevant). at
// must come after the previous stamp given for an affected predicate
// (ErrClockRegressed otherwise, and nothing changes).
func (d *Detector) Put(at vclock.HVC, key, value string) ([]Outbound, error) {
	refs := d.byKey[key]
	if len(refs) == 0 {
		return nil, nil
	}
	for _, r := range refs {
		if err := d.checkClock(&d.preds[r.pred], at); err != nil {
			return nil, err
		}
	}
	d.out = d.out[:0]
	for _, r := range refs {
		p := &d.preds[r.pred]
		d.close(p, at, false)
		p.values[r.key] = value
	}
	return d.out, nil
}

// Flush ends every current state at the event stamped at, without changing
// any value, and sends each of them, whatever the rule above says: it is the
// detector's heartbeat. A shell calls it periodically (and at shutdown): a
// state that stays true then reaches the monitor without waiting for the next
// relevant PUT, and a state in which nothing holds still tells the monitor
// how far this server has got, which lets it discard other servers'
// candidates that precede it instead of queueing them until ErrOverloaded.
func (d *Detector) Flush(at vclock.HVC) ([]Outbound, error) {
	for i := range d.preds {
		if err := d.checkClock(&d.preds[i], at); err != nil {
			return nil, err
		}
	}
	d.out = d.out[:0]
	for i := range d.preds {
		d.close(&d.preds[i], at, true)
	}
	return d.out, nil
}

func (d *Detector) checkClock(p *detPred, at vclock.HVC) error {
	if r := vclock.CompareHVC(p.start, at); r != vclock.Before {
		return fmt.Errorf("%w: server %d: %s is %s %s", ErrClockRegressed, d.server, at, r, p.start)
	}
	return nil
}

// close ends p's current state at at, queueing its candidate if the rule
// above says it is needed (or always), and begins the next state.
func (d *Detector) close(p *detPred, at vclock.HVC, always bool) {
	send := always || p.c.typ == Semilinear
	if !send {
		d.scr = p.c.truth(p.slot, p.values, d.scr)
		send = anyBit(d.scr)
	}
	if send {
		d.out = append(d.out, Outbound{Predicate: p.c.index, Candidate: Candidate{
			Server: d.server, Seq: p.seq, Start: p.start, End: at, Values: slices.Clone(p.values),
		}})
	}
	p.start = at
	p.seq++
}
