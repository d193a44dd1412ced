package bench

import (
	"os"
	"strconv"
	"strings"
)

// CPUTimes are the machine's cumulative CPU times (all CPUs, in clock
// ticks) from /proc/stat's "cpu" line.
type CPUTimes struct {
	Busy  uint64 // user, nice, system, irq, softirq (guest time is in user)
	Idle  uint64 // idle, iowait
	Steal uint64 // time the hypervisor ran other guests while this one wanted a CPU
}

func (t CPUTimes) total() uint64 { return t.Busy + t.Idle + t.Steal }

// ReadCPUTimes reads /proc/stat; ok is false without it.
func ReadCPUTimes() (CPUTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, false
	}
	return parseCPUTimes(string(b))
}

// parseCPUTimes parses the first line of /proc/stat's form:
// "cpu user nice system idle iowait irq softirq steal guest guest_nice"
// (older kernels stop after softirq or steal: the missing fields are 0).
func parseCPUTimes(stat string) (CPUTimes, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return CPUTimes{}, false
	}
	var v [8]uint64
	for i := range v {
		if i+1 >= len(f) {
			break
		}
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return CPUTimes{}, false
		}
		v[i] = n
	}
	return CPUTimes{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, true
}

// SetCPUShares records, from the CPU times at a run's start and end, the
// shares of the machine's CPU time that were busy and that were stolen by
// the hypervisor for other guests (a noisy neighbour the load average does
// not show). Nothing is recorded if either reading failed or no time passed.
func (e *Env) SetCPUShares(start, end CPUTimes, ok bool) {
	if !ok || end.total() <= start.total() {
		return
	}
	d := float64(end.total() - start.total())
	e.CPUBusy = Round(float64(end.Busy-start.Busy)/d, 3)
	e.CPUSteal = Round(float64(end.Steal-start.Steal)/d, 3)
}
