// Package exweft gives the graph-database examples a Weft server: the one
// named by --addr, or an in-process engine (in memory) behind the gRPC front
// end on a free loopback port when none is named, as exkronos does for the
// Kronos examples. It is a convenience for examples and their tests, not a
// deployment tool; its functions are safe for concurrent use.
package exweft

import (
	"fmt"
	"net"

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
