package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// CheckSetFull checks a set-full history (Jepsen's set-full): adds of unique
// elements (Op{F: FAdd, Value: int64}) and reads of the whole set
// (Op{F: FRead}, completion value []int64). An element is known present from
// its add's OK completion or from the completion of the first read that
// shows it, whichever is earlier; every read invoked after that must contain
// it. Info adds may or may not appear, but once seen they must stay. It
// reports, one per element with times:
//   - lost: missing from a read it had to be in, and from every later read;
//   - stale: missing from such a read but present in a later one (late
//     visibility, or an element that flickered out and back);
//   - never-added: present in a read but never added, or its add failed.
func CheckSetFull(h History) (Result, error) {
	pairs, ops, err := selectPairs(h, FAdd, FRead)
	if err != nil {
		return Result{}, err
	}
	adds := make(map[int64]Pair)
	var reads []setRead
	for _, p := range pairs {
		switch p.Invoke.F {
		case FAdd:
			e, ok := p.Invoke.Value.(int64)
			if !ok {
				return Result{}, malformed("index %d: add value of type %T, want int64", p.Invoke.Index, p.Invoke.Value)
			}
			if q, dup := adds[e]; dup {
				return Result{}, malformed("element %d added at index %d and again at %d", e, q.Invoke.Index, p.Invoke.Index)
			}
			adds[e] = p
		case FRead:
			if p.Type() != OK {
				continue
			}
			l, ok := p.Value().([]int64)
			if !ok && p.Value() != nil {
				return Result{}, malformed("index %d: read value of type %T, want []int64", p.Invoke.Index, p.Value())
			}
			reads = append(reads, setRead{p, l})
		}
	}
	rep := &report{}
	checkSetReads(rep, adds, reads)
	return rep.result(ops, pairs), nil
}

type setRead struct {
	p    Pair
	list []int64
}

// checkSetReads indexes, per element, the reads that contain it (reads in
// invocation order) and checks each element once.
func checkSetReads(rep *report, adds map[int64]Pair, reads []setRead) {
	in := make(map[int64][]int) // element → indexes of reads containing it, ascending
	for i, r := range reads {
		for _, e := range r.list {
			if l := in[e]; len(l) == 0 || l[len(l)-1] != i {
				in[e] = append(l, i)
			}
		}
	}
	elems := slices.Sorted(maps.Keys(adds))
	for e := range in {
		if _, ok := adds[e]; !ok {
			elems = append(elems, e)
		}
	}
	slices.Sort(elems)
	for _, e := range elems {
		add, added := adds[e]
		switch {
		case len(in[e]) > 0 && (!added || add.Type() == Fail):
			r := reads[in[e][0]]
			why := "no operation added it"
			if added {
				why = fmt.Sprintf("its add (index %d) failed", add.Invoke.Index)
			}
			rep.add(Anomaly{Type: "never-added", Ops: []Pair{r.p},
				Explanation: fmt.Sprintf("element %d is in the read at time %d, but %s", e, r.p.Invoke.Time, why)})
		default:
			checkElement(rep, e, add, added, reads, in[e])
		}
	}
}

// checkElement finds the first read that had to contain e and did not.
func checkElement(rep *report, e int64, add Pair, added bool, reads []setRead, in []int) {
	known := -1 // history position from which e must be present
	var since string
	if added && add.Type() == OK {
		known, since = add.CompletePos, fmt.Sprintf("its add was acknowledged at time %d", add.Complete.Time)
	}
	if len(in) > 0 {
		if r := reads[in[0]].p; known < 0 || r.CompletePos < known {
			known, since = r.CompletePos, fmt.Sprintf("a read completed at time %d showed it", r.Complete.Time)
		}
	}
	if known < 0 {
		return
	}
	first := sort.Search(len(reads), func(i int) bool { return reads[i].p.InvokePos > known })
	j := sort.SearchInts(in, first)
	for i := first; i < len(reads); i, j = i+1, j+1 {
		if j < len(in) && in[j] == i {
			continue
		}
		r := reads[i].p
		typ, later := "lost", "it never appears again"
		if j < len(in) {
			typ, later = "stale", fmt.Sprintf("it is in the later read at time %d", reads[in[j]].p.Invoke.Time)
		}
		ops := []Pair{r}
		if added {
			ops = []Pair{add, r}
		}
		rep.add(Anomaly{Type: typ, Ops: ops, Explanation: fmt.Sprintf(
			"element %d: %s, but the read invoked at time %d lacks it; %s", e, since, r.Invoke.Time, later)})
		return
	}
}
