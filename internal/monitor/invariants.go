package monitor

// checkInvariants panics if the monitor's state is inconsistent:
//   - each log holds candidates of its server in strictly increasing Seq
//     order, with intervals that do not run backwards, and only useful ones;
//   - every frontier's heads lie within their logs (at most one past the end);
//   - no frontier has work left after a Step, and its present heads are
//     wanted, pairwise unordered under Precedes, and do not precede the mark
//     of a server the frontier waits for (the settled state);
//   - the pending violations' cuts are pairwise unordered.
func (m *Monitor) checkInvariants() {
	for s := range m.logs {
		l := &m.logs[s]
		for i := range l.entries {
			e := &l.entries[i]
			assert(e.c.Server == m.c.servers[s], "slot %d holds a candidate of server %d", s, e.c.Server)
			assert(e.any(), "useless candidate %s queued", e.c)
			assert(e.c.Start.Own() <= e.c.End.Own(), "candidate %s runs backwards", e.c)
			if i > 0 {
				p := &l.entries[i-1]
				assert(p.c.Seq < e.c.Seq, "server %d: #%d queued after #%d", e.c.Server, e.c.Seq, p.c.Seq)
				assert(p.c.End.Own() <= e.c.Start.Own(), "server %d: #%d starts before #%d ends", e.c.Server, e.c.Seq, p.c.Seq)
			}
		}
	}
	for _, f := range m.fronts {
		assert(len(f.work) == 0, "frontier %d has %d positions left to check", f.clause, len(f.work))
		for j, s := range f.slots {
			l := &m.logs[s]
			assert(f.pos[j] >= l.base && f.pos[j] <= l.base+len(l.entries),
				"frontier %d: head %d of slot %d outside [%d, %d]", f.clause, f.pos[j], s, l.base, l.base+len(l.entries))
			e := m.head(f, j)
			if e == nil {
				continue
			}
			assert(f.wants(j, e), "frontier %d: unwanted head %s", f.clause, e.c)
			for q := range f.slots {
				o, lq := m.head(f, q), &m.logs[f.slots[q]]
				switch {
				case q == j:
				case o != nil:
					assert(!Precedes(&e.c, &o.c, m.cfg.Epsilon), "frontier %d: head %s precedes head %s", f.clause, e.c, o.c)
				case lq.seen:
					assert(!precedesStart(&e.c, lq.mark, m.cfg.Epsilon), "frontier %d: head %s precedes the mark %s of a server it waits for", f.clause, e.c, lq.mark)
				}
			}
		}
	}
	for _, v := range m.pending {
		for i := range v.Cut {
			for j := range v.Cut {
				assert(i == j || !Precedes(&v.Cut[i], &v.Cut[j], m.cfg.Epsilon), "reported cut has %s before %s", v.Cut[i], v.Cut[j])
			}
		}
	}
}
