package shard

import "fmt"

func (c *Core) dump() string {
	s := fmt.Sprintf("shard %d tasks=%d", c.cfg.ID, len(c.tasks))
	if len(c.tasks) > 0 {
		s += fmt.Sprintf(" first=%s", c.tasks[0].Stamp)
	}
	for i, q := range c.q {
		s += fmt.Sprintf("\n  q%d next=%d fifo=%d held=%d last=%s nop=%v asked=%v", i, q.next, len(q.fifo), len(q.held), q.last, q.lastNop, q.asked)
		if len(q.fifo) > 0 {
			s += fmt.Sprintf(" head=%s nop=%v", q.fifo[0].Stamp, q.fifo[0].Nop)
		}
	}
	return s
}
