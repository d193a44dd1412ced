package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrInvalid is returned by Validate and New for a configuration out of range.
var ErrInvalid = errors.New("faultproxy: invalid config")

// ErrClosed is returned by Swizzle.Run when the proxy is closed under it.
var ErrClosed = errors.New("faultproxy: closed")

// Direction names one or both halves of every proxied connection.
type Direction uint8

const (
	// Upstream is client → target: what the process behind the proxy receives.
	Upstream Direction = 1 << iota
	// Downstream is target → client: what the process behind the proxy sends.
	Downstream
	// Both is Upstream and Downstream.
	Both = Upstream | Downstream
)

// String names the direction for logs.
func (d Direction) String() string {
	switch d {
	case 0:
		return "none"
	case Upstream:
		return "upstream"
	case Downstream:
		return "downstream"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// valid reports whether d is Upstream, Downstream or Both.
func (d Direction) valid() bool { return d != 0 && d&^Both == 0 }

// index maps a single direction to 0 (Upstream) or 1 (Downstream).
func (d Direction) index() int {
	assert(d == Upstream || d == Downstream, "index of %v", d)
	return int(d >> 1)
}

// Config describes one proxy. Fields are fixed for its life; faults change
// through the Proxy's methods.
type Config struct {
	// Listen is the address the proxy listens on. It must name a loopback IP
	// or "localhost": the proxy is a test tool and never faces a real network.
	// Default "127.0.0.1:0" (a free port; Proxy.Addr reports it).
	Listen string
	// Target is the host:port every accepted connection is forwarded to.
	// Required.
	Target string
	// HoldBytesMax bounds, per connection and direction, the bytes read from
	// the source but not yet written to the destination (held by a partition,
	// a clog, a delay or a bandwidth limit). At the bound the proxy stops
	// reading that source, so the sender's kernel buffers fill and its writes
	// block, as with a stalled TCP peer. A connection therefore holds at most
	// 2×HoldBytesMax. Default 1 MiB.
	HoldBytesMax int
	// ReadBytesMax bounds one read from a source socket, in bytes; held data
	// is queued in chunks of at most this size. Default 32 KiB.
	ReadBytesMax int
	// ConnsMax bounds the connections open at once; a connection accepted
	// beyond it is reset at once and counted in Stats.Refused. Default 1024.
	ConnsMax int
	// DialTimeout bounds the dial to Target once a connection may be
	// established. Default 5s.
	DialTimeout time.Duration
	// Seed seeds the generator that draws delay jitter. Default 0.
	Seed uint64
}

// DefaultConfig returns the documented defaults; Target is left empty.
func DefaultConfig() Config {
	return Config{
		Listen:       "127.0.0.1:0",
		HoldBytesMax: 1 << 20,
		ReadBytesMax: 32 << 10,
		ConnsMax:     1024,
		DialTimeout:  5 * time.Second,
	}
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("%w: Listen %q: %v", ErrInvalid, c.Listen, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%w: Listen %q is not a loopback address", ErrInvalid, c.Listen)
	}
	if _, _, err := net.SplitHostPort(c.Target); err != nil {
		return fmt.Errorf("%w: Target %q: %v", ErrInvalid, c.Target, err)
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"HoldBytesMax", c.HoldBytesMax, 1 << 30},
		{"ReadBytesMax", c.ReadBytesMax, 1 << 24},
		{"ConnsMax", c.ConnsMax, 1 << 20},
	} {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("%w: Config.%s = %d, want 1..%d", ErrInvalid, f.name, f.v, f.max)
		}
	}
	if c.DialTimeout <= 0 {
		return fmt.Errorf("%w: Config.DialTimeout = %v, want > 0", ErrInvalid, c.DialTimeout)
	}
	return nil
}

func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("faultproxy: assertion failed: "+format, args...))
	}
}
