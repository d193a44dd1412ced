package launch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Alive reports whether pid is a running process that runs args: the pid
// exists (kill(pid, 0) succeeds), it is not a zombie (an exited process
// nobody has reaped yet, state Z or X in /proc/PID/stat), and its command
// line holds args (pids are reused: another program with our old pid is
// not ours; a zombie's command line is empty). Without /proc (not Linux)
// it trusts kill(0). It waits a moment for a process in the middle of its
// exec, whose command line is not there yet.
func Alive(pid int, args []string) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	if !hasProc() {
		return true
	}
	pr := probePid(pid)
	// A process in the middle of its exec shows an empty command line for
	// a moment (the launcher asks right after Start): look again, briefly.
	// A kernel thread's stays empty, and is never ours.
	for try := 0; try < execRetries && pr.midExec(); try++ {
		time.Sleep(time.Millisecond)
		pr = probePid(pid)
	}
	return judgeAlive(pr, args)
}

// execRetries bounds Alive's looks at a process in the middle of its exec.
const execRetries = 50

func probePid(pid int) probe {
	stat, statErr := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	cmdline, cmdErr := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return probe{stat: stat, statErr: statErr, cmdline: cmdline, cmdErr: cmdErr}
}

// midExec reports whether the probe shows a live process with no command
// line yet.
func (pr probe) midExec() bool {
	if pr.statErr != nil || pr.cmdErr != nil || len(pr.cmdline) > 0 {
		return false
	}
	st, err := ParseStat(pr.stat)
	return err == nil && !st.Zombie()
}

// hasProc reports whether this system has a Linux /proc.
func hasProc() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// probe is what /proc tells of a pid that kill(0) found.
type probe struct {
	stat, cmdline   []byte
	statErr, cmdErr error
}

// judgeAlive is Alive's decision over what /proc showed (the pid exists).
func judgeAlive(pr probe, args []string) bool {
	if pr.statErr == nil {
		if st, err := ParseStat(pr.stat); err == nil && st.Zombie() {
			return false
		}
	}
	if pr.cmdErr != nil {
		// Gone since kill(0), or not ours to read (then trust kill(0)).
		return !errors.Is(pr.cmdErr, os.ErrNotExist)
	}
	return strings.Contains(string(pr.cmdline), strings.Join(args, "\x00"))
}

// Stat is what the launcher and the scale bench read of /proc/PID/stat.
type Stat struct {
	Pid, PPid int
	// State is the process state letter: R, S, D, T, Z (zombie), X (dead), …
	State byte
	// Ticks is utime+stime+cutime+cstime, in clock ticks (USER_HZ).
	Ticks int64
	// Start is the process's start time in ticks after boot: with the pid,
	// it names the process even after the pid is reused.
	Start int64
}

// Zombie reports whether the process has exited and waits to be reaped
// (or is being reaped).
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ParseStat parses the content of /proc/PID/stat. The command name (field
// 2) is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted from the last ')'.
func ParseStat(b []byte) (Stat, error) {
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 1 || close < open {
		return Stat{}, fmt.Errorf("launch: /proc stat %.60q: no command name", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return Stat{}, fmt.Errorf("launch: /proc stat %.60q: pid: %w", s, err)
	}
	// After the name: state(3) ppid(4) pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime(14) stime(15) cutime(16) cstime(17)
	// priority nice num_threads itrealvalue starttime(22).
	f := strings.Fields(s[close+1:])
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("launch: /proc stat of pid %d: %d fields after the name", pid, len(f))
	}
	st := Stat{Pid: pid, State: f[0][0]}
	if st.PPid, err = strconv.Atoi(f[1]); err != nil {
		return Stat{}, fmt.Errorf("launch: /proc stat of pid %d: ppid: %w", pid, err)
	}
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return Stat{}, fmt.Errorf("launch: /proc stat of pid %d: field %d: %w", pid, i+3, err)
		}
		st.Ticks += n
	}
	if st.Start, err = strconv.ParseInt(f[19], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("launch: /proc stat of pid %d: starttime: %w", pid, err)
	}
	return st, nil
}

// ReadStat reads one process's stat; ok is false when it is gone (or there
// is no /proc).
func ReadStat(pid int) (Stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, false
	}
	st, err := ParseStat(b)
	return st, err == nil
}
