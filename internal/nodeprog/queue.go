package nodeprog

import "container/heap"

// hopQueue holds the local hops of one Run in the program's Order.
type hopQueue interface {
	push(h Hop)
	pop() Hop
	len() int
}

func newQueue(o Order) hopQueue {
	switch o {
	case DFS:
		return &lifo{}
	case Priority:
		return &prioQueue{}
	}
	return &fifo{}
}

type fifo struct {
	hops []Hop
	head int
}

func (q *fifo) push(h Hop) {
	// Reuse the consumed prefix once it is at least half the slice, so a
	// long BFS does not keep every hop it ever saw.
	if q.head > 0 && q.head >= len(q.hops)/2 {
		n := copy(q.hops, q.hops[q.head:])
		clear(q.hops[n:])
		q.hops = q.hops[:n]
		q.head = 0
	}
	q.hops = append(q.hops, h)
}

func (q *fifo) pop() Hop {
	h := q.hops[q.head]
	q.hops[q.head] = Hop{}
	q.head++
	return h
}

func (q *fifo) len() int { return len(q.hops) - q.head }

type lifo struct{ hops []Hop }

func (q *lifo) push(h Hop) { q.hops = append(q.hops, h) }
func (q *lifo) pop() Hop {
	h := q.hops[len(q.hops)-1]
	q.hops[len(q.hops)-1] = Hop{}
	q.hops = q.hops[:len(q.hops)-1]
	return h
}
func (q *lifo) len() int { return len(q.hops) }

// prioQueue pops the lowest priority first; ties in push order, so the
// order is deterministic.
type prioQueue struct {
	items prioItems
	seq   uint64
}

type prioItem struct {
	prio float64
	seq  uint64
	hop  Hop
}

type prioItems []prioItem

func (p prioItems) Len() int { return len(p) }
func (p prioItems) Less(i, j int) bool {
	if p[i].prio != p[j].prio {
		return p[i].prio < p[j].prio
	}
	return p[i].seq < p[j].seq
}
func (p prioItems) Swap(i, j int) { p[i], p[j] = p[j], p[i] }
func (p *prioItems) Push(x any)   { *p = append(*p, x.(prioItem)) }
func (p *prioItems) Pop() any {
	old := *p
	it := old[len(old)-1]
	old[len(old)-1] = prioItem{}
	*p = old[:len(old)-1]
	return it
}

// priorityOf is a hop's priority; 0 for arguments without one.
func priorityOf(h Hop) float64 {
	if p, ok := h.Arg.(Prioritized); ok {
		return p.Priority()
	}
	return 0
}

// peek is the lowest priority held; the queue must not be empty.
func (q *prioQueue) peek() float64 { return q.items[0].prio }

func (q *prioQueue) push(h Hop) {
	prio := priorityOf(h)
	q.seq++
	heap.Push(&q.items, prioItem{prio: prio, seq: q.seq, hop: h})
}

func (q *prioQueue) pop() Hop { return heap.Pop(&q.items).(prioItem).hop }
func (q *prioQueue) len() int { return len(q.items) }
