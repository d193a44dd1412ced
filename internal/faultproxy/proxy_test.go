package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestPassthrough(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	c := dial(t, p.Addr())
	var all []byte
	for i := range 20 {
		msg := fmt.Appendf(nil, "message %d;", i)
		roundTrip(t, c, msg)
		all = append(all, msg...)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB: several chunks
	send(t, c, big)
	// A half-close travels through: the echo server sees EOF and closes.
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(rest, big) {
		t.Fatalf("after half-close read %d bytes, err %v; want %d", len(rest), err, len(big))
	}
	total := uint64(len(all) + len(big))
	waitFor(t, "connection to close", func() bool { return p.Stats().Open == 0 })
	if s := p.Stats(); s.Accepted != 1 || s.BytesUp != total || s.BytesDown != total || s.HeldBytes != 0 {
		t.Fatalf("stats %v, want 1 accepted, %d bytes each way, none held", s, total)
	}
}

// TestPartitionOneWay: bytes in the blocked direction do not arrive while the
// other direction still works, and Heal delivers them.
func TestPartitionOneWay(t *testing.T) {
	for _, dir := range []Direction{Upstream, Downstream} {
		t.Run(dir.String(), func(t *testing.T) {
			checkLeaks(t)
			srv := startServer(t, false)
			p := newProxy(t, srv.addr(), nil)
			c := dial(t, p.Addr())
			s := srv.next(t)
			roundTripPair(t, c, s, "hello")
			roundTripPair(t, s, c, "world")

			p.Partition(dir)
			from, to := net.Conn(c), net.Conn(s) // the blocked direction
			if dir == Downstream {
				from, to = s, c
			}
			send(t, from, []byte("held"))
			expectNothing(t, to, 150*time.Millisecond)
			roundTripPair(t, to, from, "other way works")

			p.Heal()
			expect(t, to, []byte("held"))
			roundTripPair(t, from, to, "after heal")
		})
	}
}

// roundTripPair sends msg on a and expects it on b.
func roundTripPair(t *testing.T, a, b net.Conn, msg string) {
	t.Helper()
	send(t, a, []byte(msg))
	expect(t, b, []byte(msg))
}

func TestPartitionBothHealDeliversInOrder(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, false)
	p := newProxy(t, srv.addr(), nil)
	c := dial(t, p.Addr())
	s := srv.next(t)
	roundTripPair(t, c, s, "up")

	p.Partition(Both)
	var want []byte
	for i := range 200 {
		msg := fmt.Appendf(nil, "<%d>", i)
		send(t, c, msg)
		want = append(want, msg...)
	}
	big := bytes.Repeat([]byte("xyz"), 100_000)
	send(t, c, big)
	want = append(want, big...)
	send(t, s, []byte("down"))
	expectNothing(t, s, 100*time.Millisecond)
	expectNothing(t, c, 10*time.Millisecond)
	waitFor(t, "bytes held", func() bool { return p.Stats().HeldBytes > 0 })

	p.Heal()
	expect(t, s, want)
	expect(t, c, []byte("down"))
	waitFor(t, "held bytes delivered", func() bool { return p.Stats().HeldBytes == 0 })
}

// TestPartitionNewConnectionWaits: a connection made during a partition is
// not dialled through until the partition heals, then works.
func TestPartitionNewConnectionWaits(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, false)
	p := newProxy(t, srv.addr(), nil)
	p.Partition(Upstream)
	c := dial(t, p.Addr())
	send(t, c, []byte("early"))
	select {
	case s := <-srv.conns:
		_ = s.Close()
		t.Fatal("target accepted a connection during a partition")
	case <-time.After(100 * time.Millisecond):
	}
	p.Heal()
	s := srv.next(t)
	expect(t, s, []byte("early"))
	roundTripPair(t, s, c, "reply")
}

// TestBackpressure: a held direction never holds more than HoldBytesMax in
// the proxy; the rest waits in the sender's socket, and all of it arrives
// in order after Heal.
func TestBackpressure(t *testing.T) {
	checkLeaks(t)
	const holdMax = 16 << 10
	srv := startServer(t, false)
	p := newProxy(t, srv.addr(), func(c *Config) { c.HoldBytesMax, c.ReadBytesMax = holdMax, 4<<10 })
	c := dial(t, p.Addr())
	s := srv.next(t)
	roundTripPair(t, c, s, "x")

	p.Partition(Upstream)
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	var werr error
	wg.Go(func() {
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, werr = c.Write(data)
	})
	waitFor(t, "hold queue to fill", func() bool { return p.Stats().HeldBytes == holdMax })
	time.Sleep(50 * time.Millisecond)
	if h := p.Stats().HeldBytes; h != holdMax {
		t.Fatalf("held %d bytes, want exactly HoldBytesMax %d", h, holdMax)
	}
	if up := p.Stats().BytesUp; up != 1 {
		t.Fatalf("%d bytes delivered upstream during the partition, want 1 (from before)", up)
	}

	p.Heal()
	expect(t, s, data)
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
}

func TestResetAll(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, false)
	p := newProxy(t, srv.addr(), nil)
	c := dial(t, p.Addr())
	s := srv.next(t)
	roundTripPair(t, c, s, "hi")

	p.Partition(Both)
	send(t, c, []byte("lost"))
	if n := p.ResetAll(); n != 1 {
		t.Fatalf("ResetAll reset %d connections, want 1", n)
	}
	if err := expectBroken(t, c); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("client read: %v, want ECONNRESET", err)
	}
	if err := expectBroken(t, s); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("target read: %v, want ECONNRESET", err)
	}
	waitFor(t, "no open connections", func() bool { return p.Stats().Open == 0 })
	if st := p.Stats(); st.Reset != 1 || st.HeldBytes != 0 {
		t.Fatalf("stats %v, want 1 reset, none held", st)
	}

	p.Heal() // the partition outlived ResetAll; new connections work after Heal
	c2 := dial(t, p.Addr())
	s2 := srv.next(t)
	roundTripPair(t, c2, s2, "again")
	roundTripPair(t, s2, c2, "and back")
}

// TestDelay asserts lower bounds only: a delay adds at least d.
func TestDelay(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), func(c *Config) { c.Seed = 3 })
	c := dial(t, p.Addr())
	roundTrip(t, c, []byte("warm"))

	for _, tc := range []struct {
		dir       Direction
		d, jitter time.Duration
		min       time.Duration
	}{
		{Upstream, 60 * time.Millisecond, 0, 60 * time.Millisecond},
		{Downstream, 60 * time.Millisecond, 0, 60 * time.Millisecond},
		{Both, 40 * time.Millisecond, 20 * time.Millisecond, 80 * time.Millisecond},
	} {
		p.Delay(Both, 0, 0)
		p.Delay(tc.dir, tc.d, tc.jitter)
		start := time.Now()
		roundTrip(t, c, []byte("ping"))
		if rtt := time.Since(start); rtt < tc.min {
			t.Errorf("Delay(%v, %v, %v): round trip %v, want at least %v", tc.dir, tc.d, tc.jitter, rtt, tc.min)
		}
	}

	// Jitter never reorders: a later byte with a shorter draw waits.
	p.Delay(Both, 0, 10*time.Millisecond)
	var want []byte
	for i := range 50 {
		msg := fmt.Appendf(nil, "[%d]", i)
		send(t, c, msg)
		want = append(want, msg...)
		time.Sleep(200 * time.Microsecond)
	}
	expect(t, c, want)
}

// TestBandwidth asserts a lower bound only: 5000 bytes at 20000 B/s go out
// in five ~50ms pieces, the last no earlier than 200ms after the first.
func TestBandwidth(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	c := dial(t, p.Addr())
	roundTrip(t, c, []byte("warm"))
	p.Bandwidth(Upstream, 20_000)
	start := time.Now()
	roundTrip(t, c, bytes.Repeat([]byte("b"), 5000))
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Fatalf("5000 bytes at 20000 B/s took %v, want at least 200ms", el)
	}
	p.Bandwidth(Both, 0)
	roundTrip(t, c, bytes.Repeat([]byte("c"), 100_000))
}

func TestRefuse(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	open := dial(t, p.Addr())
	roundTrip(t, open, []byte("before"))

	p.Refuse(true)
	expectRefused(t, p.Addr())
	roundTrip(t, open, []byte("open connections are untouched"))

	p.Refuse(false)
	roundTrip(t, dial(t, p.Addr()), []byte("accepted again"))
	if s := p.Stats(); s.Refused != 1 || s.Accepted != 3 {
		t.Fatalf("stats %v, want 3 accepted, 1 refused", s)
	}
}

func TestConnsMax(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), func(c *Config) { c.ConnsMax = 2 })
	a, b := dial(t, p.Addr()), dial(t, p.Addr())
	roundTrip(t, a, []byte("a"))
	roundTrip(t, b, []byte("b"))
	expectRefused(t, p.Addr())
	if s := p.Stats(); s.Refused != 1 {
		t.Fatalf("stats %v, want 1 refused", s)
	}
}

// TestTargetDown: when the process behind the proxy is down, its clients
// see a reset, as from a closed port.
func TestTargetDown(t *testing.T) {
	checkLeaks(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	p := newProxy(t, addr, nil)
	expectRefused(t, p.Addr())
	waitFor(t, "dial error counted", func() bool { return p.Stats().DialErrors == 1 })
}

// TestClog: Clog(d) holds every connection both ways for d, then delivers.
func TestClog(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), nil)
	c := dial(t, p.Addr())
	roundTrip(t, c, []byte("warm"))

	const d = 150 * time.Millisecond
	start := time.Now()
	p.Clog(d)
	send(t, c, []byte("clogged"))
	expectNothing(t, c, 50*time.Millisecond)
	expect(t, c, []byte("clogged"))
	if el := time.Since(start); el < d {
		t.Fatalf("echo through a %v clog after %v", d, el)
	}

	p.Clog(time.Hour)
	send(t, c, []byte("healed"))
	expectNothing(t, c, 20*time.Millisecond)
	p.Heal()
	expect(t, c, []byte("healed"))
}

// TestConcurrentConnections runs many echo streams while a nemesis changes
// every fault; once healed, every byte has come back in order.
func TestConcurrentConnections(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), func(c *Config) { c.HoldBytesMax = 8 << 10; c.ReadBytesMax = 1 << 10 })
	const conns, size = 16, 64 << 10

	stop := make(chan struct{})
	var nemesis sync.WaitGroup
	nemesis.Go(func() {
		rng := rand.New(rand.NewPCG(11, 0))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			switch i % 6 {
			case 0:
				p.Partition([]Direction{Upstream, Downstream, Both}[rng.IntN(3)])
			case 1:
				p.Delay(Both, time.Duration(rng.IntN(3))*time.Millisecond, time.Millisecond)
			case 2:
				p.Bandwidth(Downstream, 1<<20+rng.IntN(1<<20))
			case 3:
				sw := p.NewSwizzle(rng)
				for sw.Step() {
				}
			case 4:
				p.Clog(2 * time.Millisecond)
			case 5:
				p.Heal()
			}
			_ = p.Stats()
		}
	})

	errs := make(chan error, conns)
	var clients sync.WaitGroup
	for i := range conns {
		c := dial(t, p.Addr())
		clients.Go(func() { errs <- echoStream(c, uint64(i), size) })
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	nemesis.Wait()
	p.Heal()
	p.Delay(Both, 0, 0)
	p.Bandwidth(Both, 0)
	clients.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := p.Stats(); s.BytesUp != conns*size || s.BytesDown != conns*size {
		t.Fatalf("stats %v, want %d bytes each way", s, conns*size)
	}
}

// echoStream writes size seeded bytes in uneven pieces while reading the
// echo, and checks it.
func echoStream(c *net.TCPConn, seed uint64, size int) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	werr := make(chan error, 1)
	go func() {
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(4096))
			if _, err := c.Write(rest[:n]); err != nil {
				werr <- err
				return
			}
			rest = rest[n:]
			// Spread the stream over the nemesis's run.
			time.Sleep(time.Duration(rng.IntN(8)) * time.Millisecond)
		}
		werr <- c.CloseWrite()
	}()
	got, rerr := io.ReadAll(c)
	if err := <-werr; err != nil {
		return fmt.Errorf("stream %d: write: %w", seed, err)
	}
	if rerr != nil || !bytes.Equal(got, data) {
		return fmt.Errorf("stream %d: read %d of %d bytes (equal prefix: %v), err %v",
			seed, len(got), size, bytes.HasPrefix(data, got), rerr)
	}
	return nil
}

// TestClose: Close resets every connection in every state and leaves no
// goroutine behind (checkLeaks); it is idempotent.
func TestClose(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, true)
	p := newProxy(t, srv.addr(), func(c *Config) { c.HoldBytesMax = 4 << 10 })
	idle := dial(t, p.Addr())
	roundTrip(t, idle, []byte("idle"))
	delayed := dial(t, p.Addr())
	roundTrip(t, delayed, []byte("delayed"))
	p.Delay(Upstream, time.Hour, 0)
	send(t, delayed, []byte("never"))
	waitFor(t, "delayed bytes held", func() bool { return p.Stats().HeldBytes == 5 })
	p.Delay(Upstream, 0, 0)
	held := dial(t, p.Addr())
	roundTrip(t, held, []byte("held"))
	p.Partition(Both)
	send(t, held, bytes.Repeat([]byte("h"), 64<<10)) // fills the hold queue, then kernel buffers
	pending := dial(t, p.Addr())                     // waits to be dialled through
	waitFor(t, "4 connections", func() bool { return p.Stats().Open == 4 })

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, c := range []net.Conn{idle, delayed, held, pending} {
		expectBroken(t, c)
	}
	if s := p.Stats(); s.Open != 0 || s.HeldBytes != 0 {
		t.Fatalf("after Close: %v", s)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("dial after Close succeeded")
	}
	if err := p.NewSwizzle(rand.New(rand.NewPCG(1, 1))).Run(t.Context(), time.Millisecond); err != nil {
		t.Fatalf("swizzle over no connections: %v", err)
	}
}
