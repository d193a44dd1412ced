package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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

// procStat is what the CPU accounting needs of one /proc/<pid>/stat.
type procStat struct {
	pid, ppid int
	// ticks is utime+stime+cutime+cstime, in clock ticks.
	ticks int64
	// start is the process's start time (ticks after boot): with the pid,
	// it names the process even after the pid is reused.
	start int64
}

// parseProcStat parses the content of /proc/<pid>/stat. The command name
// (field 2) is in parentheses and may hold spaces and parentheses itself,
// so the fields are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || close < open {
		return procStat{}, fmt.Errorf("bench: /proc stat %.60q: no command name", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("bench: /proc stat %.60q: pid: %w", s, err)
	}
	// After the name: state(3) ppid(4) pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime(14) stime(15) cutime(16) cstime(17)
	// priority nice num_threads itrealvalue starttime(22).
	f := strings.Fields(s[close+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("bench: /proc stat of pid %d: %d fields after the name", pid, len(f))
	}
	st := procStat{pid: pid}
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("bench: /proc stat of pid %d: ppid: %w", pid, err)
	}
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("bench: /proc stat of pid %d: field %d: %w", pid, i+3, err)
		}
		st.ticks += n
	}
	if st.start, err = strconv.ParseInt(f[19], 10, 64); err != nil {
		return procStat{}, fmt.Errorf("bench: /proc stat of pid %d: starttime: %w", pid, err)
	}
	return st, nil
}

// readProcStat reads one process's stat; ok is false when it is gone.
func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	st, err := parseProcStat(b)
	return st, err == nil
}

// procTable is a snapshot of every process: pid → stat.
type procTable map[int]procStat

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
		st, err := parseProcStat(b)
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
		children[st.ppid] = append(children[st.ppid], pid)
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
		ticks += t[pid].ticks
	}
	return time.Duration(ticks) * time.Second / clockTicksPerSecond
}
