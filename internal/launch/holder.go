package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cmdlineMax bounds the command line FileHolder returns.
const cmdlineMax = 120

// FileHolder finds the process that has path open, through /proc/*/fd
// (Linux; elsewhere, or when no such process is visible, pid 0), and its
// command line (argv[0] as its base name).
func FileHolder(path string) (pid int, cmdline string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, ""
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, ""
	}
	self := os.Getpid()
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil || n == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // not ours to read, or gone
		}
		for _, fd := range fds {
			if t, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && t == abs {
				return n, procCmdline(n)
			}
		}
	}
	return 0, ""
}

func procCmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = filepath.Base(args[0])
	s := strings.Join(args, " ")
	if len(s) > cmdlineMax {
		s = s[:cmdlineMax] + "…"
	}
	return s
}
