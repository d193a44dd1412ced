package launch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// pollEvery is how often the waits below look again.
const pollEvery = 50 * time.Millisecond

// killWait bounds the wait for a process group to go after SIGKILL.
const killWait = 5 * time.Second

// Start starts bin with p.Args detached: in a process group of its own
// (signals go to the group, so nothing it forks outlives it) and released,
// so that it outlives the launcher. Its output is appended to p.Log after
// a line naming the start. p.Pid is set.
func Start(bin string, p *Proc) error {
	if err := os.MkdirAll(filepath.Dir(p.Log), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== weft cluster: start %s: %s %s\n", p.Name, bin, strings.Join(p.Args, " "))
	cmd := exec.Command(bin, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.Pid = cmd.Process.Pid
	return cmd.Process.Release()
}

// Signal sends sig to the process group of pid (Start made pgid = pid); a
// group already gone is no error.
func Signal(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("launch: signal %v to pid %d", sig, pid)
	}
	if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Kill sends SIGKILL to p's process group and waits, up to 5s, until p is
// gone.
func Kill(p *Proc) error {
	if err := Signal(p.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("launch: kill %s: %w", p.Name, err)
	}
	for end := time.Now().Add(killWait); p.Alive(); {
		if time.Now().After(end) {
			return fmt.Errorf("launch: %s (pid %d) still runs %v after SIGKILL", p.Name, p.Pid, killWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// Stop ends every running process of ps: SIGTERM to each group, a wait of
// up to timeout, then SIGKILL for those still running (each one reported
// to out) and a wait of up to 5s more. Processes not running are left
// alone.
func Stop(ps []*Proc, timeout time.Duration, out io.Writer) error {
	var running []*Proc
	for _, p := range ps {
		if p.Alive() {
			if err := Signal(p.Pid, syscall.SIGTERM); err != nil {
				return fmt.Errorf("stop %s (pid %d): %w", p.Name, p.Pid, err)
			}
			running = append(running, p)
		}
	}
	deadline := time.Now().Add(timeout)
	for len(running) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollEvery)
		running = alive(running)
	}
	for _, p := range running {
		fmt.Fprintf(out, "%s (pid %d) ignored SIGTERM for %v: SIGKILL\n", p.Name, p.Pid, timeout)
		_ = Signal(p.Pid, syscall.SIGKILL)
	}
	for end := time.Now().Add(killWait); len(running) > 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
		running = alive(running)
	}
	if len(running) > 0 {
		return fmt.Errorf("%s (pid %d) still running %v after SIGKILL", running[0].Name, running[0].Pid, killWait)
	}
	return nil
}

// alive returns the processes of ps that run.
func alive(ps []*Proc) []*Proc {
	var out []*Proc
	for _, p := range ps {
		if p.Alive() {
			out = append(out, p)
		}
	}
	return out
}

// WaitLog waits until a line of p's log holds line, while p runs.
func WaitLog(p *Proc, line string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return fmt.Errorf("%s (pid %d) exited; its log %s ends:\n%s", p.Name, p.Pid, p.Log, LogTail(p.Log, 15))
		}
		if logHas(p.Log, line) {
			return nil
		}
		time.Sleep(pollEvery)
	}
	return fmt.Errorf("%s (pid %d) not serving after %v; its log %s ends:\n%s", p.Name, p.Pid, timeout, p.Log, LogTail(p.Log, 15))
}

// logHas reports whether a line of the file at path holds s.
func logHas(path, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return true
		}
	}
	return false
}

// LogTail returns the last n lines of the file at path (for errors).
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
