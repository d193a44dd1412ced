package kronos

import (
	"runtime"
	"time"
)

// stopwatch times an interval of the calling goroutine by the wall clock,
// unless the operating system took the thread off the CPU during it.
//
// The benchmarks run on shared machines (CI, a developer's laptop), where
// another process can take the CPU for milliseconds in the middle of a timed
// call; the wall clock then reports the scheduler, not the code. The
// stopwatch also reads the thread's CPU clock around the interval: when the
// wall time exceeds the CPU time by more than a scheduling blip, the thread
// was descheduled, and the CPU time (which only counts the time the thread
// ran) is the better measure of the code. On an idle machine the two agree
// and the wall time is reported.
//
// Callers lock the goroutine to its OS thread (lockThread) for as long as
// they use a stopwatch, since the CPU clock is per thread.
type stopwatch struct {
	wall0 time.Time
	cpu0  time.Duration
}

// descheduledMin is the smallest gap between wall and CPU time that counts
// as the thread having been descheduled; scheduler time slices are
// milliseconds, while reading the CPU clock costs about a microsecond.
const descheduledMin = 5 * time.Microsecond

func (s *stopwatch) start() {
	s.cpu0 = threadCPU()
	s.wall0 = time.Now()
}

// stop returns the interval's duration, its wall-clock duration, and whether
// the thread was descheduled (in which case the duration is CPU time).
func (s *stopwatch) stop() (d, wall time.Duration, descheduled bool) {
	wall = time.Since(s.wall0)
	cpu := threadCPU() - s.cpu0
	if wall > cpu+max(descheduledMin, wall/20) {
		return cpu, wall, true
	}
	return wall, wall, false
}

// lockThread pins the calling goroutine to its OS thread, so the thread's
// CPU clock is the goroutine's; call the returned function to unpin.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// wallNow is the wall clock as a duration since process start, the CPU
// clock's stand-in where there is none.
func wallNow() time.Duration { return time.Since(processStart) }

var processStart = time.Now()
