package kronos

// cache remembers answered orders. Answers between live events never change
// (monotonicity), and ids are never reused, so a hit is always right. Each
// slot stores the whole pair and is checked on lookup, so the cache can
// forget but never invent an order (the original's overlapping windows did).
// Only query_order writes it, never a batch that might roll back.
type cache struct {
	slots []cacheSlot
	mask  uint64
}

type cacheSlot struct {
	lo, hi EventID
	order  Order // order of (lo, hi)
}

func (c *cache) init(n int) {
	if n == 0 {
		return
	}
	c.slots = make([]cacheSlot, n)
	c.mask = uint64(n - 1)
}

func (c *cache) index(lo, hi EventID) uint64 {
	h := lo*0x9E3779B97F4A7C15 ^ hi*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	return h & c.mask
}

func (c *cache) get(a, b EventID) (Order, bool) {
	if c.slots == nil {
		return 0, false
	}
	lo, hi, swap := a, b, false
	if a > b {
		lo, hi, swap = b, a, true
	}
	s := &c.slots[c.index(lo, hi)]
	if s.lo != lo || s.hi != hi || s.lo == 0 {
		return 0, false
	}
	if swap {
		return s.order.Reverse(), true
	}
	return s.order, true
}

func (c *cache) put(a, b EventID, o Order) {
	if c.slots == nil {
		return
	}
	if a > b {
		a, b, o = b, a, o.Reverse()
	}
	c.slots[c.index(a, b)] = cacheSlot{lo: a, hi: b, order: o}
}
