package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/pflag"
)

// gcFlags tunes the Go garbage collector for a long-running server: the
// multi-version graph is large and long-lived, so collecting at every 100%
// heap growth (Go's default) spends a third of the CPU marking it again and
// again (measured with weft bench tao). GOGC and GOMEMLIMIT in the
// environment win over the flags.
type gcFlags struct {
	percent  int
	memLimit int64
}

func (g *gcFlags) register(f *pflag.FlagSet) {
	f.IntVar(&g.percent, "gogc", 400, "Go GC target: heap growth in percent before a collection (GOGC wins when set)")
	f.Int64Var(&g.memLimit, "memory-limit", 0, "soft memory limit in bytes for the Go runtime, 0 = none (GOMEMLIMIT wins when set)")
}

func (g *gcFlags) apply() {
	if os.Getenv("GOGC") == "" && g.percent > 0 {
		debug.SetGCPercent(g.percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && g.memLimit > 0 {
		debug.SetMemoryLimit(g.memLimit)
	}
}
