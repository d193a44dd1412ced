// Package exweft gives the graph-database examples a Weft server: the one
// named by --addr, or an in-process engine (in memory) behind the gRPC front
// end on a free loopback port when none is named, as exkronos does for the
// Kronos examples. It is a convenience for examples and their tests, not a
// deployment tool; its functions are safe for concurrent use.
package exweft

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/engine"
)

// Resolve returns addr unchanged with a no-op stop when it is set;
// otherwise it opens an in-memory engine, serves its gRPC API on a free
// loopback port and returns that address and a stop that shuts both down.
func Resolve(addr string) (string, func(), error) {
	if addr != "" {
		return addr, func() {}, nil
	}
	cfg := engine.DefaultConfig()
	cfg.DataDir = "" // in memory
	db, err := engine.Open(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("open in-process weft engine: %w", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return "", nil, fmt.Errorf("listen for the in-process weft server: %w", err)
	}
	s := api.NewGRPCServer(db, nil)
	go s.Serve(lis)
	return lis.Addr().String(), func() { s.Stop(); db.Close() }, nil
}

// Connect resolves addr (Resolve), dials it with opts and checks that a
// server answers; the returned close shuts the client and, for an
// in-process engine, the engine. A named address that does not answer is
// an error saying how to start a server.
func Connect(ctx context.Context, addr string, opts ...weft.Options) (*weft.Client, func(), error) {
	target, stop, err := Resolve(addr)
	if err != nil {
		return nil, nil, err
	}
	c, err := weft.Dial(target, opts...)
	if err != nil {
		stop()
		return nil, nil, err
	}
	if _, err := c.Status(ctx); err != nil {
		c.Close()
		stop()
		if addr != "" {
			return nil, nil, fmt.Errorf("no Weft server answers at %s (start one with `weft serve`, or drop --addr to use an in-process engine): %w", addr, err)
		}
		return nil, nil, err
	}
	return c, func() { c.Close(); stop() }, nil
}

// Prefix returns given, or a fresh prefix "name-<hex nanotime>" when it is
// empty, so that each run of an example stores its data apart.
func Prefix(name, given string) string {
	if given != "" {
		return given
	}
	return fmt.Sprintf("%s-%x", name, time.Now().UnixNano())
}

// Serve starts an in-process server for a test and returns its address
// and a client of it, both closed when the test ends.
func Serve(t testing.TB) (string, *weft.Client) {
	t.Helper()
	addr, stop, err := Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	c, err := weft.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return addr, c
}
