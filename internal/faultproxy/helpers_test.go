package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// checkLeaks fails the test if, once its cleanups have run, more goroutines
// remain than when it started. Call it first so its cleanup runs last.
func checkLeaks(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines left, %d at start:\n%s", runtime.NumGoroutine(), base, buf)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// server is a loopback target: it echoes, or (echo false) hands each
// accepted connection to the test through conns.
type server struct {
	lis   *net.TCPListener
	echo  bool
	conns chan *net.TCPConn
	wg    sync.WaitGroup

	mu  sync.Mutex
	all []*net.TCPConn
}

func startServer(t *testing.T, echo bool) *server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{lis: lis.(*net.TCPListener), echo: echo, conns: make(chan *net.TCPConn, 64)}
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

func (s *server) addr() string { return s.lis.Addr().String() }

func (s *server) accept() {
	for {
		c, err := s.lis.AcceptTCP()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.all = append(s.all, c)
		s.mu.Unlock()
		if !s.echo {
			s.conns <- c
			continue
		}
		s.wg.Go(func() {
			_, _ = io.Copy(c, c)
			_ = c.Close()
		})
	}
}

func (s *server) close() {
	_ = s.lis.Close()
	s.mu.Lock()
	for _, c := range s.all {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// next returns the next connection the (non-echo) server accepted.
func (s *server) next(t *testing.T) *net.TCPConn {
	t.Helper()
	select {
	case c := <-s.conns:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("target accepted no connection")
		return nil
	}
}

// newProxy starts a proxy to target with cfg's defaults changed by edit,
// logging to the test's output, and closes it when the test ends.
func newProxy(t *testing.T, target string, edit func(*Config)) *Proxy {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Target = target
	if edit != nil {
		edit(&cfg)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	p, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		t.Logf("stats: %v", p.Stats())
	})
	return p
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

// send writes msg within 5s.
func send(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
}

// recv reads exactly n bytes within wait.
func recv(c net.Conn, n int, wait time.Duration) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	return buf, err
}

// expect reads want within 5s.
func expect(t *testing.T, c net.Conn, want []byte) {
	t.Helper()
	got, err := recv(c, len(want), 5*time.Second)
	if err != nil {
		t.Fatalf("reading %d bytes: %v", len(want), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %q, want %q", abbrev(got), abbrev(want))
	}
}

// expectNothing asserts that nothing arrives on c within wait.
func expectNothing(t *testing.T, c net.Conn, wait time.Duration) {
	t.Helper()
	got, err := recv(c, 1, wait)
	if !isTimeout(err) {
		t.Fatalf("within %v: read %q, err %v; want nothing", wait, got, err)
	}
}

// roundTrip sends msg to an echo target and expects it back.
func roundTrip(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	send(t, c, msg)
	expect(t, c, msg)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// expectBroken asserts that c fails within 5s with an error other than a
// timeout (a reset, or EOF after one).
func expectBroken(t *testing.T, c net.Conn) error {
	t.Helper()
	_, err := recv(c, 1, 5*time.Second)
	if err == nil || isTimeout(err) {
		t.Fatalf("read: %v, want a broken connection", err)
	}
	return err
}

// expectRefused asserts that a connection to addr is reset: at connect, or
// on its first read.
func expectRefused(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		if isTimeout(err) {
			t.Fatalf("dial %s: %v, want a reset", addr, err)
		}
		return
	}
	defer c.Close()
	expectBroken(t, c)
}

// waitFor polls cond every few milliseconds for up to 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func abbrev(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%s…(%d bytes)", b[:64], len(b))
	}
	return string(b)
}
