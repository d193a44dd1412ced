package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/invariants"
)

// conn is one proxied connection: the accepted client socket, the dialled
// target socket, and a pump per direction. Its goroutines are serve (which
// runs the Downstream writer) plus two readers and the Upstream writer.
type conn struct {
	p      *Proxy
	id     ConnID
	client *net.TCPConn
	ctx    context.Context // cancelled when the connection ends either way
	cancel context.CancelFunc

	clogged bool // guarded by p.mu: held in both directions by a swizzle

	mu       sync.Mutex // guards server, aborted, finished
	server   *net.TCPConn
	aborted  bool // reset: sockets closed with SO_LINGER 0
	finished bool // ended cleanly: both directions delivered their FIN

	up, down pump
}

func newConn(p *Proxy, id ConnID, client *net.TCPConn) *conn {
	ctx, cancel := context.WithCancel(p.ctx)
	c := &conn{p: p, id: id, client: client, ctx: ctx, cancel: cancel}
	c.up.init(Upstream, p.cfg.HoldBytesMax)
	c.down.init(Downstream, p.cfg.HoldBytesMax)
	return c
}

// serve dials the target once faults allow it, then pumps both directions
// until both have delivered their FIN or the connection is reset.
func (p *Proxy) serve(c *conn) {
	defer p.forget(c)
	if _, ok := c.awaitFlow(Both); !ok {
		c.abort()
		return
	}
	dctx, cancel := context.WithTimeout(c.ctx, p.cfg.DialTimeout)
	nc, err := (&net.Dialer{}).DialContext(dctx, "tcp", p.cfg.Target)
	cancel()
	if err != nil {
		if c.ctx.Err() == nil {
			p.st.dialErrors.Add(1)
			p.log.Debug("faultproxy: dial", "conn", c.id, "err", err)
		}
		c.abort() // the client sees RST, as from a closed port
		return
	}
	if !c.attach(nc.(*net.TCPConn)) {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.read(&c.up) })
	wg.Go(func() { c.read(&c.down) })
	wg.Go(func() { c.write(&c.up) })
	c.write(&c.down)
	wg.Wait()
	c.finish()
}

// attach installs the dialled target socket; if the connection was reset
// meanwhile it resets srv too and reports false.
func (c *conn) attach(srv *net.TCPConn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		resetConn(srv)
		return false
	}
	c.server = srv
	c.up.src, c.up.dst = c.client, srv
	c.down.src, c.down.dst = srv, c.client
	return true
}

// abort resets the connection: both peers see RST and held bytes are lost.
// It reports whether this call did it (false if already ended).
func (c *conn) abort() bool {
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted || c.finished {
		return false
	}
	c.aborted = true
	resetConn(c.client)
	if c.server != nil {
		resetConn(c.server)
	}
	return true
}

// finish closes a connection whose pumps have all returned.
func (c *conn) finish() {
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted || c.finished {
		return
	}
	c.finished = true
	_ = c.client.Close()
	_ = c.server.Close()
}

// awaitFlow waits until bytes may move in dir (Both: until c may be
// dialled); false means the connection or the proxy ended first.
func (c *conn) awaitFlow(dir Direction) (gate, bool) {
	for {
		now := time.Now()
		g := c.p.gateFor(c, dir, now)
		if g.flow {
			return g, true
		}
		if !waitChange(c.ctx, g.wake, g.until, now) {
			return g, false
		}
	}
}

// waitChange waits for wake, for until (if set) or for ctx; it reports
// false only for ctx.
func waitChange(ctx context.Context, wake <-chan struct{}, until, now time.Time) bool {
	var timeout <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(until.Sub(now))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-wake:
	case <-timeout:
	case <-ctx.Done():
		return false
	}
	return true
}

// read moves bytes from pu.src into pu's queue, never holding more than
// HoldBytesMax: when full it stops reading, which is the backpressure.
func (c *conn) read(pu *pump) {
	p := c.p
	buf := make([]byte, p.cfg.ReadBytesMax)
	for {
		room := pu.awaitRoom(c.ctx)
		if room == 0 {
			return
		}
		n, err := pu.src.Read(buf[:min(room, len(buf))])
		if n > 0 {
			p.st.held.Add(int64(n))
			pu.push(chunk{data: bytes.Clone(buf[:n]), due: p.due(pu.dir, time.Now())})
		}
		if errors.Is(err, io.EOF) {
			pu.push(chunk{eof: true, due: p.due(pu.dir, time.Now())})
			return
		}
		if err != nil {
			c.abort() // a reset (or our own) ends both directions
			return
		}
	}
}

// write delivers pu's queue to pu.dst in order, each chunk no earlier than
// its due time and only while faults let dir flow; a FIN is delivered as
// CloseWrite, after which the direction is done.
func (c *conn) write(pu *pump) {
	var paced time.Time // when the bandwidth limit next lets a byte out
	for {
		ch, ok := pu.front(c.ctx)
		if !ok || !sleepCtx(c.ctx, time.Until(ch.due)) {
			return
		}
		if ch.eof {
			if _, ok := c.awaitFlow(pu.dir); !ok {
				return
			}
			// An error means the peer is gone; its reader reports that.
			_ = pu.dst.CloseWrite()
			pu.consume(0)
			return
		}
		if !c.deliver(pu, ch.data, &paced) {
			return
		}
	}
}

// deliver writes one chunk, in pieces when a bandwidth limit is set,
// waiting out faults before each piece. False means the connection ended.
func (c *conn) deliver(pu *pump, data []byte, paced *time.Time) bool {
	for len(data) > 0 {
		g, ok := c.awaitFlow(pu.dir)
		if !ok {
			return false
		}
		n := len(data)
		if g.rate > 0 {
			// Pieces of ~50ms keep the rate smooth without a write per byte.
			n = min(n, max(1, g.rate/20))
			if !sleepCtx(c.ctx, time.Until(*paced)) {
				return false
			}
			if _, ok := c.awaitFlow(pu.dir); !ok {
				return false
			}
			*paced = later(*paced, time.Now()).Add(time.Duration(n) * time.Second / time.Duration(g.rate))
		}
		if _, err := pu.dst.Write(data[:n]); err != nil {
			c.abort()
			return false
		}
		c.p.st.bytes[pu.dir.index()].Add(uint64(n))
		c.p.st.held.Add(-int64(n))
		pu.consume(n)
		data = data[n:]
	}
	return true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// pump is one direction's queue of held bytes. One reader goroutine pushes
// and one writer goroutine consumes; mu guards the queue between them.
type pump struct {
	dir      Direction
	holdMax  int
	src, dst *net.TCPConn
	pushed   chan struct{} // cap 1: wakes the writer
	popped   chan struct{} // cap 1: wakes the reader

	mu      sync.Mutex
	q       []chunk // FIFO; the bytes of all chunks sum to held
	held    int     // <= holdMax
	lastDue time.Time
}

// chunk is bytes read at once, or the FIN (eof) that ends the direction.
type chunk struct {
	data []byte
	due  time.Time
	eof  bool
}

func (pu *pump) init(dir Direction, holdMax int) {
	pu.dir, pu.holdMax = dir, holdMax
	pu.pushed = make(chan struct{}, 1)
	pu.popped = make(chan struct{}, 1)
}

// awaitRoom returns how many bytes may be read now (> 0), waiting while the
// queue is full; 0 means ctx ended.
func (pu *pump) awaitRoom(ctx context.Context) int {
	for {
		pu.mu.Lock()
		room := pu.holdMax - pu.held
		pu.mu.Unlock()
		if room > 0 {
			return room
		}
		select {
		case <-pu.popped:
		case <-ctx.Done():
			return 0
		}
	}
}

// push appends ch, delaying its due time to its predecessor's if needed so
// that bytes never overtake one another.
func (pu *pump) push(ch chunk) {
	pu.mu.Lock()
	ch.due = later(ch.due, pu.lastDue)
	pu.lastDue = ch.due
	pu.q = append(pu.q, ch)
	pu.held += len(ch.data)
	assert(pu.held <= pu.holdMax, "%v held %d > %d", pu.dir, pu.held, pu.holdMax)
	pu.checkLocked()
	pu.mu.Unlock()
	notify(pu.pushed)
}

// front returns the head chunk, waiting while the queue is empty; false
// means ctx ended.
func (pu *pump) front(ctx context.Context) (chunk, bool) {
	for {
		pu.mu.Lock()
		if len(pu.q) > 0 {
			ch := pu.q[0]
			pu.mu.Unlock()
			return ch, true
		}
		pu.mu.Unlock()
		select {
		case <-pu.pushed:
		case <-ctx.Done():
			return chunk{}, false
		}
	}
}

// consume removes n delivered bytes from the head chunk, and the chunk once
// it is empty.
func (pu *pump) consume(n int) {
	pu.mu.Lock()
	head := &pu.q[0]
	assert(n <= len(head.data), "consume %d of %d", n, len(head.data))
	head.data = head.data[n:]
	pu.held -= n
	if len(head.data) == 0 {
		*head = chunk{}
		pu.q = pu.q[1:]
	}
	pu.checkLocked()
	pu.mu.Unlock()
	notify(pu.popped)
}

// discard empties the queue of a finished connection; it returns the bytes
// dropped.
func (pu *pump) discard() int {
	pu.mu.Lock()
	defer pu.mu.Unlock()
	n := pu.held
	pu.q, pu.held = nil, 0
	return n
}

// checkLocked verifies the queue in invariants builds.
func (pu *pump) checkLocked() {
	if !invariants.On {
		return
	}
	sum := 0
	for i, ch := range pu.q {
		sum += len(ch.data)
		assert(!ch.eof || (i == len(pu.q)-1 && len(ch.data) == 0), "%v: FIN at %d of %d", pu.dir, i, len(pu.q))
		assert(i == 0 || !ch.due.Before(pu.q[i-1].due), "%v: chunk %d due before its predecessor", pu.dir, i)
	}
	assert(sum == pu.held && pu.held >= 0 && pu.held <= pu.holdMax,
		"%v: held %d, queued %d, max %d", pu.dir, pu.held, sum, pu.holdMax)
}

// notify wakes a waiter without blocking; a pending wake-up suffices.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
