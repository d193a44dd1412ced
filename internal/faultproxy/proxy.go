package faultproxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards every connection accepted on its loopback address to one
// target and injects faults into the forwarded bytes. All methods are safe
// for concurrent use.
type Proxy struct {
	cfg    Config
	log    *slog.Logger
	lis    *net.TCPListener
	ctx    context.Context // cancelled by Close; every connection's parent
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and one serve per connection
	once   sync.Once
	lisErr error // from closing the listener

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every fault change
	closed    bool
	partition Direction // directions whose bytes are held
	clogUntil time.Time // every connection clogged until then (Clog)
	refuse    bool
	delay     [2]delaySpec // by Direction.index
	rate      [2]int       // bytes per second per connection; 0 is unlimited
	rng       *rand.Rand   // jitter draws
	conns     map[ConnID]*conn
	nextID    ConnID

	st counters
}

type delaySpec struct{ d, jitter time.Duration }

// ConnID names one accepted connection, in accept order from 1.
type ConnID uint64

type counters struct {
	accepted, refused, dialErrors, reset, faults atomic.Uint64
	bytes                                        [2]atomic.Uint64 // delivered, by Direction.index
	held                                         atomic.Int64
}

// Stats is a snapshot of a proxy's counters, for test logs.
type Stats struct {
	// Accepted counts connections accepted by the listener.
	Accepted uint64
	// Refused counts connections reset at accept: under Refuse(true), beyond
	// ConnsMax, or after Close.
	Refused uint64
	// DialErrors counts connections reset because the target could not be
	// dialled (the process behind the proxy is down).
	DialErrors uint64
	// Reset counts connections reset by ResetAll.
	Reset uint64
	// Open is the number of connections open now.
	Open int
	// BytesUp and BytesDown count bytes delivered client → target and
	// target → client.
	BytesUp, BytesDown uint64
	// HeldBytes is the bytes read but not yet delivered, over all
	// connections and directions.
	HeldBytes int64
	// Faults counts fault changes applied: Partition, Heal, ResetAll, Delay,
	// Bandwidth, Refuse, Clog and each swizzle step.
	Faults uint64
}

// String formats the stats on one line.
func (s Stats) String() string {
	return fmt.Sprintf("accepted=%d open=%d refused=%d dial_errors=%d reset=%d up=%dB down=%dB held=%dB faults=%d",
		s.Accepted, s.Open, s.Refused, s.DialErrors, s.Reset, s.BytesUp, s.BytesDown, s.HeldBytes, s.Faults)
}

// New listens on cfg.Listen and starts forwarding to cfg.Target, with no
// fault in effect. log may be nil (slog.Default). Close releases it.
func New(cfg Config, log *slog.Logger) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen %s: %w", cfg.Listen, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, lis: lis.(*net.TCPListener), ctx: ctx, cancel: cancel,
		changed: make(chan struct{}), rng: rand.New(rand.NewPCG(cfg.Seed, 0x6661756c74)),
		conns: map[ConnID]*conn{}}
	p.log = log.With("role", "faultproxy", "addr", p.Addr(), "target", cfg.Target)
	p.wg.Go(p.acceptLoop)
	return p, nil
}

// Addr returns the address clients dial, e.g. "127.0.0.1:40123".
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Target returns the address connections are forwarded to.
func (p *Proxy) Target() string { return p.cfg.Target }

// Close stops accepting, resets every connection (RST), and returns once
// every goroutine the proxy started has exited. It is idempotent.
func (p *Proxy) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		conns := p.sortedConns()
		p.bumpLocked()
		p.mu.Unlock()
		p.cancel()
		p.lisErr = p.lis.Close()
		for _, c := range conns {
			c.abort()
		}
		p.wg.Wait()
		p.log.Info("faultproxy: closed", "stats", p.Stats().String())
	})
	p.wg.Wait() // a concurrent Close also returns only once all have exited
	return p.lisErr
}

// Stats returns a snapshot of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open := len(p.conns)
	p.mu.Unlock()
	return Stats{
		Accepted: p.st.accepted.Load(), Refused: p.st.refused.Load(),
		DialErrors: p.st.dialErrors.Load(), Reset: p.st.reset.Load(), Open: open,
		BytesUp: p.st.bytes[0].Load(), BytesDown: p.st.bytes[1].Load(),
		HeldBytes: p.st.held.Load(), Faults: p.st.faults.Load(),
	}
}

// Partition holds every byte travelling in dir, on every connection present
// and future, replacing any earlier partition. Connections stay open and
// bytes queue in the proxy up to HoldBytesMax, then in kernel buffers, as
// when a network silently drops packets and TCP keeps retransmitting. A
// connection accepted during any partition is not dialled through until it
// heals (a TCP handshake needs both directions). Heal delivers what was
// held; ResetAll discards it.
func (p *Proxy) Partition(dir Direction) {
	assert(dir.valid(), "Partition(%v)", dir)
	p.apply("partition", func() { p.partition = dir }, "dir", dir)
}

// Heal lifts the partition, the Clog and every swizzle clog: held bytes are
// then delivered in order, as TCP delivers after retransmission. Delay,
// Bandwidth and Refuse are unchanged.
func (p *Proxy) Heal() {
	p.apply("heal", func() {
		p.partition = 0
		p.clogUntil = time.Time{}
		for _, c := range p.conns {
			c.clogged = false
		}
	})
}

// ResetAll resets every open connection, including those waiting to be
// dialled: both sockets are closed with SO_LINGER 0, so client and target
// see ECONNRESET, and held bytes are discarded. Faults stay in effect.
// Partition, then ResetAll, then Heal models a partition long enough for
// TCP to give up. It returns the number of connections reset.
func (p *Proxy) ResetAll() int {
	p.mu.Lock()
	conns := p.sortedConns()
	p.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.abort() {
			n++
		}
	}
	p.st.reset.Add(uint64(n))
	p.st.faults.Add(1)
	p.log.Info("faultproxy: reset all", "conns", n)
	return n
}

// Delay holds each byte travelling in dir for d plus a uniform draw from
// [0, jitter] after the proxy reads it. Bytes never overtake one another,
// so a later, shorter draw waits for the earlier one, as in a TCP stream.
// It applies to bytes read from now on; Delay(dir, 0, 0) removes it.
func (p *Proxy) Delay(dir Direction, d, jitter time.Duration) {
	assert(dir.valid() && d >= 0 && jitter >= 0, "Delay(%v, %v, %v)", dir, d, jitter)
	p.apply("delay", func() {
		for _, one := range []Direction{Upstream, Downstream} {
			if dir&one != 0 {
				p.delay[one.index()] = delaySpec{d, jitter}
			}
		}
	}, "dir", dir, "d", d, "jitter", jitter)
}

// Bandwidth limits each connection to bytesPerSec in dir; 0 removes the
// limit.
func (p *Proxy) Bandwidth(dir Direction, bytesPerSec int) {
	assert(dir.valid() && bytesPerSec >= 0, "Bandwidth(%v, %d)", dir, bytesPerSec)
	p.apply("bandwidth", func() {
		for _, one := range []Direction{Upstream, Downstream} {
			if dir&one != 0 {
				p.rate[one.index()] = bytesPerSec
			}
		}
	}, "dir", dir, "bytes_per_sec", bytesPerSec)
}

// Refuse makes the proxy reset each new connection at once (on) or accept
// it again (off). The kernel completes the handshake before the proxy sees
// the connection, so a refused client sees ECONNRESET, on connect or on its
// first read or write, rather than ECONNREFUSED. Open connections are
// untouched.
func (p *Proxy) Refuse(on bool) {
	p.apply("refuse", func() { p.refuse = on }, "on", on)
}

// Clog holds every byte on every connection, in both directions, for d from
// now, then lets them flow in order (FoundationDB's clogged interface). It
// replaces an earlier Clog; d <= 0 ends one. Heal ends it too.
func (p *Proxy) Clog(d time.Duration) {
	p.apply("clog", func() {
		p.clogUntil = time.Time{}
		if d > 0 {
			p.clogUntil = time.Now().Add(d)
		}
	}, "d", d)
}

// apply changes fault state under p.mu, wakes every waiter and logs.
func (p *Proxy) apply(what string, change func(), attrs ...any) {
	p.mu.Lock()
	change()
	p.bumpLocked()
	p.mu.Unlock()
	p.st.faults.Add(1)
	p.log.Info("faultproxy: "+what, attrs...)
}

// bumpLocked wakes everything waiting on a fault change.
func (p *Proxy) bumpLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// sortedConns lists the open connections in accept order (never map order).
func (p *Proxy) sortedConns() []*conn {
	cs := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
	return cs
}

// gate is the fault state one waiter needs: whether bytes may flow now, the
// channel closed on the next change, and when a timed clog ends.
type gate struct {
	flow  bool
	wake  <-chan struct{}
	until time.Time // zero unless held by a timed Clog
	rate  int
}

// gateFor reports whether c may move bytes in dir (dir == Both: whether it
// may be dialled).
func (p *Proxy) gateFor(c *conn, dir Direction, now time.Time) gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := gate{flow: true, wake: p.changed}
	if p.partition&dir != 0 || (dir != Both && c.clogged) {
		g.flow = false
	}
	if now.Before(p.clogUntil) {
		g.flow, g.until = false, p.clogUntil
	}
	if dir != Both {
		g.rate = p.rate[dir.index()]
	}
	return g
}

// due returns when a byte read now in dir may be delivered, before ordering.
func (p *Proxy) due(dir Direction, now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	ds := p.delay[dir.index()]
	d := ds.d
	if ds.jitter > 0 {
		d += time.Duration(p.rng.Int64N(int64(ds.jitter) + 1))
	}
	return now.Add(d)
}

func (p *Proxy) acceptLoop() {
	backoff := time.Duration(0)
	for {
		tc, err := p.lis.AcceptTCP()
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors and the like: back off, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			p.log.Warn("faultproxy: accept", "err", err, "retry_in", backoff)
			if !sleepCtx(p.ctx, backoff) {
				return
			}
			continue
		}
		backoff = 0
		p.st.accepted.Add(1)
		if c := p.admit(tc); c != nil {
			p.wg.Go(func() { p.serve(c) })
		}
	}
}

// admit registers an accepted connection, or resets it when refusing, full
// or closed.
func (p *Proxy) admit(tc *net.TCPConn) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refuse || p.closed || len(p.conns) >= p.cfg.ConnsMax {
		p.st.refused.Add(1)
		resetConn(tc)
		return nil
	}
	p.nextID++
	c := newConn(p, p.nextID, tc)
	p.conns[c.id] = c
	return c
}

// forget drops a finished connection from the registry and the held count.
func (p *Proxy) forget(c *conn) {
	p.mu.Lock()
	delete(p.conns, c.id)
	p.mu.Unlock()
	p.st.held.Add(-int64(c.up.discard() + c.down.discard()))
}

// setClogged clogs or unclogs one open connection in both directions; it
// reports false if the connection is gone.
func (p *Proxy) setClogged(id ConnID, on bool) bool {
	p.mu.Lock()
	c, ok := p.conns[id]
	if ok {
		c.clogged = on
		p.bumpLocked()
	}
	p.mu.Unlock()
	if ok {
		p.st.faults.Add(1)
		p.log.Debug("faultproxy: swizzle", "conn", id, "clogged", on)
	}
	return ok
}

// openIDs lists the open connections' ids in ascending order.
func (p *Proxy) openIDs() []ConnID {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]ConnID, 0, len(p.conns))
	for id := range p.conns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sleepCtx waits d or until ctx ends; it reports whether d elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// resetConn closes tc so that its peer sees RST rather than FIN.
func resetConn(tc *net.TCPConn) {
	_ = tc.SetLinger(0)
	_ = tc.Close()
}
