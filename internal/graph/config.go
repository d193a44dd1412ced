package graph

import (
	"fmt"
	"math"
)

// Config bounds one partition's graph. Every limit answers ErrLimit when a write
// would exceed it, and the write changes nothing.
type Config struct {
	// HandleLenMax bounds vertex handles, edge handles and aliases, in bytes.
	// Default 512 (txn.HandleLenMax).
	HandleLenMax int
	// KeyLenMax bounds property keys, in bytes. Default 256 (txn.KeyLenMax).
	KeyLenMax int
	// PropsPerElementMax bounds the live properties of one vertex or one edge.
	// Superseded versions awaiting collection do not count. Default 1024.
	PropsPerElementMax int
	// AliasesPerVertexMax bounds the live aliases of one vertex. Default 64.
	AliasesPerVertexMax int
	// EdgesPerVertexMax bounds the live out-edges of one vertex. Default 1<<26;
	// at most 1<<30 (edge positions are 32-bit and include dead versions).
	EdgesPerVertexMax int
	// EdgeIndexMin is the number of out-edge versions at which a vertex gets a
	// hash index on edge handles (below it, lookups scan). Default 32.
	EdgeIndexMin int
	// KeepHistory disables garbage collection: every version stays readable at
	// its stamps (an eidetic graph, dissertation §4.3). Default false.
	KeepHistory bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		HandleLenMax:        512,
		KeyLenMax:           256,
		PropsPerElementMax:  1024,
		AliasesPerVertexMax: 64,
		EdgesPerVertexMax:   1 << 26,
		EdgeIndexMin:        32,
	}
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"HandleLenMax", c.HandleLenMax, math.MaxUint16},
		{"KeyLenMax", c.KeyLenMax, math.MaxUint16},
		{"PropsPerElementMax", c.PropsPerElementMax, 1 << 20},
		{"AliasesPerVertexMax", c.AliasesPerVertexMax, 1 << 20},
		{"EdgesPerVertexMax", c.EdgesPerVertexMax, 1 << 30},
		{"EdgeIndexMin", c.EdgeIndexMin, 1 << 20},
	} {
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("%w: Config.%s = %d, want 1..%d", ErrInvalid, f.name, f.v, f.max)
		}
	}
	return nil
}
