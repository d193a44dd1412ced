package kronos

import (
	"runtime"
	"testing"
	"time"
)

// TestStopwatchDescheduled: a thread that sleeps uses no CPU, so the
// stopwatch must report it descheduled and time the interval by CPU time.
func TestStopwatchDescheduled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no per-thread CPU clock wired up")
	}
	defer lockThread()()
	var sw stopwatch
	sw.start()
	time.Sleep(20 * time.Millisecond)
	d, wall, desched := sw.stop()
	if !desched || wall < 20*time.Millisecond || d > 10*time.Millisecond {
		t.Errorf("sleep: duration %v, wall %v, descheduled %v; want descheduled with CPU time ≪ 20ms", d, wall, desched)
	}
}
