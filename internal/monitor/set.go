package monitor

import "fmt"

// Set monitors every predicate of a spec at once, one Monitor each (§V: "each
// monitor for one predicate", all sharing the servers' detectors). It routes
// each Outbound to its predicate's monitor. Like Monitor it is a pure core,
// not safe for concurrent use.
type Set struct {
	mons  []*Monitor
	ready []Violation
}

// NewSet returns monitors for every predicate of spec.
func NewSet(cfg Config, spec *Spec) (*Set, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	s := &Set{}
	for p := range spec.Predicates {
		m, err := NewMonitor(cfg, spec, p)
		if err != nil {
			return nil, err
		}
		s.mons = append(s.mons, m)
	}
	return s, nil
}

// Step gives one candidate to its predicate's monitor; see Monitor.Step.
func (s *Set) Step(o Outbound) error {
	if o.Predicate < 0 || o.Predicate >= len(s.mons) {
		return fmt.Errorf("%w: no predicate %d", ErrCandidate, o.Predicate)
	}
	return s.mons[o.Predicate].Step(o.Candidate)
}

// Monitor returns predicate p's monitor.
func (s *Set) Monitor(p int) *Monitor { return s.mons[p] }

// Ready returns every monitor's pending violations, in predicate order. The
// slice is valid until Advance.
func (s *Set) Ready() []Violation {
	s.ready = s.ready[:0]
	for _, m := range s.mons {
		s.ready = append(s.ready, m.Ready()...)
	}
	return s.ready
}

// Advance takes the violations Ready returned.
func (s *Set) Advance() {
	for _, m := range s.mons {
		m.Advance()
	}
	clear(s.ready)
	s.ready = s.ready[:0]
}
