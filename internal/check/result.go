package check

import (
	"fmt"
	"slices"
	"strings"
)

// AnomaliesMax caps the anomalies a Result lists; further ones are only
// counted in Result.Truncated.
const AnomaliesMax = 1000

// Result is a checker's verdict.
type Result struct {
	// Valid is true iff no anomaly was found. It is not a proof of
	// correctness: the checkers are sound, not complete.
	Valid     bool
	Anomalies []Anomaly // sorted by type, then by first evidence position
	// Ops counts history entries examined (invocations and completions of
	// the functions the checker reads; nemesis and other ops excluded).
	Ops int
	// OK, Fail and Info count the examined pairs by outcome.
	OK, Fail, Info int
	// Truncated counts anomalies found beyond AnomaliesMax.
	Truncated int
}

// Types returns the distinct anomaly types found, sorted.
func (r Result) Types() []string {
	var ts []string
	for _, a := range r.Anomalies {
		ts = append(ts, a.Type)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// String summarises the result and explains every anomaly.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "valid=%v ops=%d ok=%d fail=%d info=%d anomalies=%d", r.Valid, r.Ops, r.OK, r.Fail, r.Info,
		len(r.Anomalies)+r.Truncated)
	for _, a := range r.Anomalies {
		b.WriteString("\n")
		b.WriteString(a.String())
	}
	return b.String()
}

// Anomaly is one violation with its evidence.
type Anomaly struct {
	Type string // e.g. "G-single-realtime", "G1a", "lost"
	// Cycle is set for dependency-cycle anomalies: Cycle[i].Op has an edge
	// of kind Cycle[i].Edge to Cycle[(i+1)%len(Cycle)].Op.
	Cycle []Step
	// Ops is the evidence of other anomalies, e.g. the reader and the failed
	// writer of a G1a.
	Ops         []Pair
	Explanation string // human-readable, may span lines
}

// Step is one transaction of a cycle and its edge to the next.
type Step struct {
	Op   Pair
	Edge EdgeKind // dependency from Op to the next step's Op
	Why  string   // the observation that implies the edge
}

// EdgeKind names a dependency between two transactions.
type EdgeKind string

// Dependency kinds. The -realtime ww and rw kinds are version orders that
// rw-register inferred from real time (a version visible before its
// successor's writer was invoked); a cycle using one needs real time.
const (
	EdgeWW         EdgeKind = "ww"
	EdgeWR         EdgeKind = "wr"
	EdgeRW         EdgeKind = "rw"
	EdgeProcess    EdgeKind = "process"
	EdgeRealtime   EdgeKind = "realtime"
	EdgeWWRealtime EdgeKind = "ww-realtime"
	EdgeRWRealtime EdgeKind = "rw-realtime"
)

// String renders the anomaly for a human.
func (a Anomaly) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", a.Type, a.Explanation)
	for i, s := range a.Cycle {
		fmt.Fprintf(&b, "\n  T%d = %s %s", i+1, s.Op, describeValue(s.Op.Value()))
	}
	for i, s := range a.Cycle {
		fmt.Fprintf(&b, "\n  T%d -%s-> T%d: %s", i+1, s.Edge, (i+1)%len(a.Cycle)+1, s.Why)
	}
	for _, p := range a.Ops {
		fmt.Fprintf(&b, "\n  %s %s", p, describeValue(p.Value()))
	}
	return b.String()
}

func describeValue(v any) string {
	b, err := marshalValue(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// report collects anomalies up to AnomaliesMax.
type report struct {
	anomalies []Anomaly
	truncated int
}

func (r *report) add(a Anomaly) {
	if len(r.anomalies) >= AnomaliesMax {
		r.truncated++
		return
	}
	r.anomalies = append(r.anomalies, a)
}

// result sorts the anomalies deterministically and fills the counts.
func (r *report) result(ops int, pairs []Pair) Result {
	slices.SortStableFunc(r.anomalies, func(a, b Anomaly) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return firstPos(a) - firstPos(b)
	})
	res := Result{Valid: len(r.anomalies) == 0 && r.truncated == 0, Anomalies: r.anomalies,
		Ops: ops, Truncated: r.truncated}
	for _, p := range pairs {
		switch p.Type() {
		case OK:
			res.OK++
		case Fail:
			res.Fail++
		default:
			res.Info++
		}
	}
	return res
}

func firstPos(a Anomaly) int {
	switch {
	case len(a.Cycle) > 0:
		return a.Cycle[0].Op.InvokePos
	case len(a.Ops) > 0:
		return a.Ops[0].InvokePos
	}
	return -1
}

// selectPairs keeps the pairs whose function is one of fs and counts the
// history entries they cover.
func selectPairs(h History, fs ...string) ([]Pair, int, error) {
	all, err := Pairs(h)
	if err != nil {
		return nil, 0, err
	}
	var out []Pair
	ops := 0
	for _, p := range all {
		if slices.Contains(fs, p.Invoke.F) {
			out = append(out, p)
			ops++
			if p.CompletePos >= 0 {
				ops++
			}
		}
	}
	return out, ops, nil
}
