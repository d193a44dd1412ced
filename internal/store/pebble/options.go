package pebble

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configure Open. Start from DefaultOptions: the zero Options is
// invalid (Validate says so), which keeps a forgotten field from silently
// turning fsync off.
type Options struct {
	// Sync fsyncs each commit group before its Commits return, so an
	// acknowledged commit survives power loss. Without it a group sits in
	// the OS (or Pebble's buffers) and kill -9 or a power cut can lose
	// acknowledged commits: benchmarks only. Default true.
	Sync bool
	// FS is the file system; nil means the OS's. Simulations and crash
	// tests pass vfs.NewCrashableMem().
	FS vfs.FS
	// CommitGroupMax bounds the transactions in one commit group (one Pebble
	// batch, one fsync). Default 256.
	CommitGroupMax int
	// GroupBytesMax bounds the buffered write bytes (keys + values) of one
	// group, counted before hooks add theirs (each hook's Txn stays within
	// TxnBytesMax); a larger transaction forms a group alone. Default 64 MiB.
	GroupBytesMax int
	// CommitQueueMax bounds the commits waiting for the committer; a full
	// queue answers store.ErrOverloaded. Default 4096.
	CommitQueueMax int
	// TxnBytesMax bounds one transaction's buffered writes (keys + values)
	// plus the keys of its read set, in bytes; beyond it calls return
	// store.ErrTxnTooLarge and the Txn cannot commit. Default 64 MiB.
	TxnBytesMax int
	// RecentWritesMax bounds the validation history in keys: the write sets
	// of recent commits, against which read sets are validated. A Txn whose
	// snapshot predates the oldest entry fails with store.ErrTooOld.
	// Default 1<<18.
	RecentWritesMax int
	// RecentWriteBytesMax bounds the validation history in key bytes.
	// Default 64 MiB.
	RecentWriteBytesMax int
	// CacheBytes is Pebble's block cache. Default 256 MiB.
	CacheBytes int64
	// MemTableBytes is Pebble's memtable size. Default 64 MiB.
	MemTableBytes int64
	// Logger receives Pebble's background errors (as Error) and, at Debug,
	// its informational messages. nil discards everything.
	Logger *slog.Logger
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		Sync:                true,
		CommitGroupMax:      256,
		GroupBytesMax:       64 << 20,
		CommitQueueMax:      4096,
		TxnBytesMax:         64 << 20,
		RecentWritesMax:     1 << 18,
		RecentWriteBytesMax: 64 << 20,
		CacheBytes:          256 << 20,
		MemTableBytes:       64 << 20,
	}
}

// Validate reports the first bad field.
func (o Options) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"CommitGroupMax", o.CommitGroupMax},
		{"GroupBytesMax", o.GroupBytesMax},
		{"CommitQueueMax", o.CommitQueueMax},
		{"TxnBytesMax", o.TxnBytesMax},
		{"RecentWritesMax", o.RecentWritesMax},
		{"RecentWriteBytesMax", o.RecentWriteBytesMax},
		{"CacheBytes", int(o.CacheBytes)},
		{"MemTableBytes", int(o.MemTableBytes)},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%w: %s = %d must be > 0 (start from DefaultOptions)", errBadOptions, f.name, f.v)
		}
	}
	return nil
}

var errBadOptions = errors.New("store/pebble: bad options")
