//go:build !linux

package kronos

import "time"

// threadCPU falls back to the wall clock where no per-thread CPU clock is
// wired up, so stopwatch never sees the thread descheduled.
func threadCPU() time.Duration { return wallNow() }
