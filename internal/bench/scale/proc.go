package scale

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/weft-db/weft/internal/launch"
)

// CPU accounting of `weft bench scale` from /proc: the CPU a cluster
// process used is its own (utime+stime) plus that of every descendant
// (`weft postgres` runs the PostgreSQL server and its backends as child
// processes), plus what the descendants that exited had used (cutime+cstime
// of the process that reaped them). Summing utime+stime+cutime+cstime over
// the live members of a process tree counts every process of the tree, live
// or exited and reaped, exactly once.

// clockTicksPerSecond is USER_HZ, the unit of /proc/<pid>/stat's times:
// 100 on every Linux architecture (sysconf(_SC_CLK_TCK)).
const clockTicksPerSecond = 100

// procTable is a snapshot of every process: pid → stat.
type procTable map[int]launch.Stat

// readProcTable reads /proc/*/stat. Processes that exit while it reads are
// skipped (their time is in their parent's cutime once reaped).
func readProcTable() (procTable, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("bench: CPU accounting needs /proc: %w", err)
	}
	t := procTable{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
				continue
			}
			return nil, err
		}
		st, err := launch.ParseStat(b)
		if err != nil {
			return nil, err
		}
		t[pid] = st
	}
	return t, nil
}

// tree returns root and its descendants in t (none when root is gone).
func (t procTable) tree(root int) []int {
	if _, ok := t[root]; !ok {
		return nil
	}
	children := map[int][]int{}
	for pid, st := range t {
		children[st.PPid] = append(children[st.PPid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out) && i < len(t); i++ { // bounded: a pid appears once
		out = append(out, children[out[i]]...)
	}
	return out
}

// treeCPU returns the CPU time of root's process tree (see the file comment).
func (t procTable) treeCPU(root int) time.Duration {
	var ticks int64
	for _, pid := range t.tree(root) {
		ticks += t[pid].Ticks
	}
	return time.Duration(ticks) * time.Second / clockTicksPerSecond
}
