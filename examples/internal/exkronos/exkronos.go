// Package exkronos gives the example applications a Kronos service: the one
// named by --kronos, or a single in-process replica in a temporary directory
// when none is named. It is a convenience for examples and their tests, not
// a deployment tool; its functions are safe for concurrent use.
package exkronos

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/weft-db/weft/client/kronos"
	kserver "github.com/weft-db/weft/internal/kronos"
)

// Start runs a single Kronos replica on a free loopback port with its log in
// dir. Writes reach the OS without fsync: the examples trade durability for
// speed. A nil log keeps only errors.
func Start(dir string, log *slog.Logger) (*kserver.Server, error) {
	if log == nil {
		log = Quiet()
	}
	cfg := kserver.DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.Sync = false
	s, err := kserver.NewServer(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	if err := awaitLeader(s.Addr()); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// awaitLeader waits until the replica at addr leads. A fresh replica
// elects itself only after an election timeout (a few hundred
// milliseconds); waiting here keeps that out of the examples' timings.
func awaitLeader(addr string) error {
	kc, err := kronos.Dial([]string{addr})
	if err != nil {
		return err
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		st, err := kc.Stats(ctx, addr)
		if err == nil && st.GetIsLeader() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kronos at %s elected no leader: %w", addr, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Resolve returns addr unchanged with a no-op stop when it is set; otherwise
// it starts an in-process replica in a fresh temporary directory and returns
// its address and a stop that shuts it down and removes the directory.
func Resolve(addr string) (string, func(), error) {
	if addr != "" {
		return addr, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "weft-example-kronos-")
	if err != nil {
		return "", nil, err
	}
	s, err := Start(dir, nil)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start in-process kronos: %w", err)
	}
	return s.Addr(), func() { s.Stop(); os.RemoveAll(dir) }, nil
}

// Quiet is a logger that keeps only errors, on stderr. (A fresh single
// replica warns that it cannot campaign before its bootstrap configuration is
// applied; that is expected and would only clutter a demo.)
func Quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// Discard is a logger that drops everything (tests).
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
