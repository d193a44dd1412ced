package kv

import (
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// Hard limits that bound what a config may ask for.
const (
	// KeyBytesLimit caps KeyBytesMax.
	KeyBytesLimit = 64 << 10
	// ValueBytesLimit caps ValueBytesMax.
	ValueBytesLimit = 64 << 20
	// WindowLimit caps WindowMax.
	WindowLimit = 1 << 26
)

// ReplicaConfig configures one replica (one server's share of the store).
type ReplicaConfig struct {
	// Dir is the Pebble directory. Required.
	Dir string
	// FS is the file system; nil means the OS's. Simulations pass a
	// vfs.NewCrashableMem and crash it with CrashClone.
	FS vfs.FS
	// Sync fsyncs every applied PUT before it is acknowledged, so an
	// acknowledged write survives kill -9 and power loss. Default true;
	// false is for benchmarks only.
	Sync bool
	// Self is this server's number on the ring (0..Servers−1): its entry in
	// the hybrid vector clock and its server number in a monitor spec.
	Self int
	// Servers is the number of servers on the ring: the HVC's size.
	Servers int
	// Epsilon is the HVC's ε, in the unit of Now (nanoseconds in the
	// shell): the assumed bound on clock skew between servers. It must
	// equal the monitors' ε. Default 10 ms (10_000_000).
	Epsilon uint64
	// Now is the physical clock the HVC reads. Required; the shell passes
	// wall-clock nanoseconds, the simulator its own clock.
	Now vclock.PhysicalClock
	// SiblingsMax bounds the concurrent values of one key; a PUT that would
	// exceed it fails with ErrTooManySiblings (see Apply). Default 8.
	SiblingsMax int
	// KeyBytesMax bounds a key's length in bytes. Default 1024.
	KeyBytesMax int
	// ValueBytesMax bounds a value's length in bytes. Default 1 MiB.
	ValueBytesMax int
	// Hook, if set, sees every PUT that changed the store, in HVC order:
	// the predicate detector's interception point (§V). It runs under the
	// replica's clock lock and must not block.
	Hook PutHook
	// WindowMax is the number of undo records the rollback window keeps
	// (one per applied PUT, window.go): how far back Restore can reach.
	// 0 keeps none (no rollback). Default 65536.
	WindowMax int
	// Logger receives Pebble's errors. nil discards them.
	Logger *slog.Logger
}

// DefaultReplicaConfig returns the defaults documented on ReplicaConfig; the
// caller sets Dir, Self, Servers and Now.
func DefaultReplicaConfig() ReplicaConfig {
	return ReplicaConfig{
		Sync:          true,
		Servers:       1,
		Epsilon:       10_000_000,
		SiblingsMax:   8,
		KeyBytesMax:   1024,
		ValueBytesMax: 1 << 20,
		WindowMax:     1 << 16,
	}
}

// Validate reports the first bad field.
func (c ReplicaConfig) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("kv: ReplicaConfig.Dir is required")
	case c.Now == nil:
		return fmt.Errorf("kv: ReplicaConfig.Now is required")
	case c.Servers < 1 || c.Servers > kvcore.ServersMax:
		return fmt.Errorf("kv: Servers %d not in [1, %d]", c.Servers, kvcore.ServersMax)
	case c.Self < 0 || c.Self >= c.Servers:
		return fmt.Errorf("kv: Self %d not in [0, %d)", c.Self, c.Servers)
	case c.SiblingsMax < 1 || c.SiblingsMax > kvcore.SiblingsLimit:
		return fmt.Errorf("kv: SiblingsMax %d not in [1, %d]", c.SiblingsMax, kvcore.SiblingsLimit)
	case c.KeyBytesMax < 1 || c.KeyBytesMax > KeyBytesLimit:
		return fmt.Errorf("kv: KeyBytesMax %d not in [1, %d]", c.KeyBytesMax, KeyBytesLimit)
	case c.WindowMax < 0 || c.WindowMax > WindowLimit:
		return fmt.Errorf("kv: WindowMax %d not in [0, %d]", c.WindowMax, WindowLimit)
	case c.ValueBytesMax < 0 || c.ValueBytesMax > ValueBytesLimit:
		return fmt.Errorf("kv: ValueBytesMax %d not in [0, %d]", c.ValueBytesMax, ValueBytesLimit)
	}
	return nil
}
