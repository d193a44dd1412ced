package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// ProcessCPU returns the CPU time (user and system) of every thread of the
// process so far, or 0 if the clock cannot be read.
func ProcessCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
