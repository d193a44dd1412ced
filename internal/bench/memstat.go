package bench

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// SettledHeap returns the bytes of live heap objects once garbage is
// collected (two cycles, so finalizers and sweeping settle).
func SettledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// SettledRSS returns the resident set size after returning free memory to
// the operating system, or 0 where /proc is missing.
func SettledRSS() int64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
