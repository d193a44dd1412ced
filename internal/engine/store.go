package engine

import (
	"context"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/store"
	pebblestore "github.com/weft-db/weft/internal/store/pebble"
	pgstore "github.com/weft-db/weft/internal/store/postgres"
)

// Backing stores Config.Store selects.
const (
	StorePebble   = "pebble"
	StorePostgres = "postgres"
)

// OpenStore opens the backing store cfg selects (Store, DataDir,
// PostgresURL, PostgresSchema, Sync), for the processes of a cluster.
func OpenStore(cfg Config, log *slog.Logger) (store.Store, error) { return openStore(cfg, log) }

// openStore opens the backing store cfg selects: Pebble in DataDir (in
// memory when empty), or PostgreSQL at PostgresURL.
func openStore(cfg Config, log *slog.Logger) (store.Store, error) {
	if cfg.Store == StorePostgres {
		o := pgstore.DefaultOptions(cfg.PostgresURL)
		if cfg.PostgresSchema != "" {
			o.Schema = cfg.PostgresSchema
		}
		o.Sync, o.Logger = cfg.Sync, log
		return pgstore.Open(context.Background(), o)
	}
	opts := pebblestore.DefaultOptions()
	opts.Sync = cfg.Sync
	if cfg.StoreCacheBytes > 0 {
		opts.CacheBytes = cfg.StoreCacheBytes
	}
	dir := cfg.DataDir
	if dir == "" {
		opts.FS = vfs.NewMem()
		dir = "mem"
	}
	return pebblestore.Open(dir, opts)
}
