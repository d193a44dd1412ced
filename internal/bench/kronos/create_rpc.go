package kronos

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	kronosclient "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
)

// createTargets lists the servers to time: an existing server at addr, or
// else an existing server at addr, or else an in-process
// server with and without an fsync per commit, one after the other.
func createTargets(addr string, log *slog.Logger) []createTarget {
	if addr != "" {
		return []createTarget{{Mode: "external", Open: func(context.Context) (createFunc, func(), error) {
			return dialCreate(addr, func() {})
		}}}
	}
	var ts []createTarget
	for _, sync := range []bool{true, false} {
		mode := "nosync"
		if sync {
			mode = "sync"
		}
		ts = append(ts, createTarget{Mode: mode, Sync: &sync, Open: func(context.Context) (createFunc, func(), error) {
			return startCreateServer(sync, log)
		}})
	}
	return ts
}

// startCreateServer starts a one-node server on a loopback port with its data
// in a fresh temporary directory, and dials it. Closing stops the server and
// removes the directory.
func startCreateServer(sync bool, log *slog.Logger) (createFunc, func(), error) {
	dir, err := os.MkdirTemp("", "weft-bench-kronos-")
	if err != nil {
		return nil, nil, err
	}
	cfg := kronos.DefaultServerConfig()
	cfg.ID = 1
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.Sync = sync
	s, err := kronos.NewServer(cfg, log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("new server: %w", err)
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("start server: %w", err)
	}
	stop := func() {
		s.Stop()
		os.RemoveAll(dir)
	}
	create, closeClient, err := dialCreate(s.Addr(), stop)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return create, closeClient, nil
}

// dialCreate dials addr; closing closes the client, then calls after.
func dialCreate(addr string, after func()) (createFunc, func(), error) {
	c, err := kronosclient.Dial([]string{addr})
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	create := func(ctx context.Context) error {
		_, err := c.CreateEvent(ctx)
		return err
	}
	return create, func() { c.Close(); after() }, nil
}
