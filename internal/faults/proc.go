package faults

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one real process that the nemesis kills, restarts, pauses and
// resumes: it runs in its own process group and every signal goes to the
// group. Its output is appended to a log across restarts. Safe for
// concurrent use.
type proc struct {
	bin          string
	args         []string
	logPath      string
	ready        string // a substring of the output line that means "up"
	readyTimeout time.Duration

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{} // closed when the current run's Wait returns
	expected   bool          // the current run's exit was asked for (kill, stop)
	paused     bool
	starts     int
	unexpected []string // exits nobody asked for, with the log's tail
}

// errProcExited is returned by start when the process exits before it is ready.
var errProcExited = errors.New("faults: the server exited before it was ready")

// start runs the process and waits for its ready line.
func (p *proc) start() error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return fmt.Errorf("faults: %s is already running", p.bin)
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	w := &readyWriter{out: logf, want: p.ready, ready: make(chan struct{})}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = 2 * time.Second
	p.starts++
	fmt.Fprintf(logf, "=== faults: start %d: %s %s\n", p.starts, p.bin, strings.Join(p.args, " "))
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		logf.Close()
		return fmt.Errorf("faults: start %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.expected, p.paused = cmd, exited, false, false
	p.mu.Unlock()
	go p.wait(cmd, logf, exited)

	t := time.NewTimer(p.readyTimeout)
	defer t.Stop()
	select {
	case <-w.ready:
		return nil
	case <-exited:
		return fmt.Errorf("%w:\n%s", errProcExited, p.tail(20))
	case <-t.C:
		_ = p.kill()
		return fmt.Errorf("faults: the server was not ready after %v:\n%s", p.readyTimeout, p.tail(20))
	}
}

// wait reaps one run and notes an exit that nobody asked for.
func (p *proc) wait(cmd *exec.Cmd, logf *os.File, exited chan struct{}) {
	err := cmd.Wait()
	fmt.Fprintf(logf, "=== faults: exited: %v\n", err)
	logf.Close()
	p.mu.Lock()
	if p.cmd == cmd {
		if !p.expected {
			p.unexpected = append(p.unexpected, fmt.Sprintf("exit %v; log tail:\n%s", err, p.tail(30)))
		}
		p.cmd = nil
	}
	p.mu.Unlock()
	close(exited)
}

// kill sends SIGKILL to the group and waits for the exit; a process that is
// not running is left alone.
func (p *proc) kill() error {
	cmd, exited := p.expect()
	if cmd == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faults: kill: %w", err)
	}
	<-exited
	return nil
}

// stop asks for a clean exit (SIGTERM, with SIGCONT in case it is paused)
// and kills the process after timeout.
func (p *proc) stop(timeout time.Duration) error {
	cmd, exited := p.expect()
	if cmd == nil {
		return nil
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	select {
	case <-exited:
		return nil
	case <-time.After(timeout):
		return p.kill()
	}
}

// expect marks the current run's exit as asked for and returns it.
func (p *proc) expect() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.expected = true
	}
	return p.cmd, p.exited
}

// pause sends SIGSTOP to the group; resume sends SIGCONT.
func (p *proc) pause() error  { return p.signalRunning(syscall.SIGSTOP, true) }
func (p *proc) resume() error { return p.signalRunning(syscall.SIGCONT, false) }

func (p *proc) signalRunning(sig syscall.Signal, paused bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("faults: %v: %w", sig, err)
	}
	p.paused = paused
	return nil
}

// state reports whether the process runs and whether it is paused.
func (p *proc) state() (running, paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil, p.cmd != nil && p.paused
}

// startCount counts the runs started.
func (p *proc) startCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// unexpectedExits returns the exits nobody asked for.
func (p *proc) unexpectedExits() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.unexpected...)
}

// tail returns the last n lines of the log.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// readyWriter copies output to the log and closes ready at the first line
// holding want. exec serialises writes from one pipe; stdout and stderr
// share this writer, so it locks.
type readyWriter struct {
	mu    sync.Mutex
	out   *os.File
	want  string
	ready chan struct{}
	buf   []byte
	seen  bool
}

func (w *readyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.seen {
		w.buf = append(w.buf, b...)
		for i := bytes.IndexByte(w.buf, '\n'); i >= 0; i = bytes.IndexByte(w.buf, '\n') {
			if strings.Contains(string(w.buf[:i]), w.want) {
				w.seen, w.buf = true, nil
				close(w.ready)
				break
			}
			w.buf = w.buf[i+1:]
		}
		if len(w.buf) > 1<<16 { // a line that long is not the ready line
			w.buf = w.buf[:0]
		}
	}
	_, _ = w.out.Write(b) // never block or fail the child
	return len(b), nil
}

// pid returns the running process's id (0 when it is not running).
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// expectExit marks the current run's exit as asked for (on) or not: a
// process that may exit by design for a while (a fenced member resumed
// from a pause) is not reported as an unexpected exit.
func (p *proc) expectExit(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		p.expected = on
	}
}
