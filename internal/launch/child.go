package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ChildSpec describes a process for a Child to run.
type ChildSpec struct {
	// Name labels the process in errors and in its log, e.g. "kronos-2".
	// Default: the base name of Path.
	Name string
	// Path is the binary; Args its arguments (without argv[0]).
	Path string
	Args []string
	// Dir is the working directory; "" inherits ours.
	Dir string
	// Env is added to our environment.
	Env []string
	// Ready is a substring of an output line (stdout or stderr) meaning the
	// process is up; Start waits for it. "" means up once started.
	Ready string
	// ReadyTimeout bounds that wait. Default 15s.
	ReadyTimeout time.Duration
	// LogPath receives stdout and stderr, appended across restarts. Required.
	LogPath string
}

// ErrChildExited is returned by Child.Start when the process exits before
// it is ready.
var ErrChildExited = errors.New("launch: the child exited before it was ready")

const (
	// defaultReadyTimeout is ChildSpec.ReadyTimeout's default.
	defaultReadyTimeout = 15 * time.Second
	// quitGrace is how long a child that missed its ready line has, after
	// SIGQUIT, to write its goroutines' stacks to the log before SIGKILL.
	quitGrace = 2 * time.Second
	// waitDelay bounds how long a run's reaping waits, once the process is
	// dead, for something else still holding its output pipe.
	waitDelay = 2 * time.Second
	// readyTail and exitTail are the log lines quoted by a failed start and
	// by an unexpected exit.
	readyTail, exitTail = 20, 30
	// readyLineMax bounds the partial line kept while looking for the ready
	// line: a line that long is not it.
	readyLineMax = 1 << 16
)

// Child is one supervised child process (unlike Start's, which are
// detached and outlive us): it runs in a process group of its own, every
// signal goes to the group, and on Linux the kernel SIGKILLs it if we die.
// Its output is appended to the spec's log across restarts, each run
// after a line naming it. It can be started, stopped, killed, paused,
// resumed and started again; an exit nobody asked for (by Stop, Kill, a
// failed Start or ExpectExit) is recorded with the log's tail. Safe for
// concurrent use.
type Child struct {
	spec ChildSpec

	mu         sync.Mutex
	cmd        *exec.Cmd     // the current run; nil: not running
	exited     chan struct{} // closed when the current run has been reaped
	expected   bool          // the current run's exit was asked for
	paused     bool
	starts     int
	kills      int
	unexpected []string // exits nobody asked for, with the log's tail
}

// NewChild returns a Child that does not run yet; Start runs it.
func NewChild(spec ChildSpec) (*Child, error) {
	if spec.Path == "" || spec.LogPath == "" {
		return nil, fmt.Errorf("launch: child %s: Path and LogPath are required", spec.Name)
	}
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Path)
	}
	if spec.ReadyTimeout <= 0 {
		spec.ReadyTimeout = defaultReadyTimeout
	}
	return &Child{spec: spec}, nil
}

// Name returns the spec's name.
func (c *Child) Name() string { return c.spec.Name }

// LogPath returns the file holding the process's output.
func (c *Child) LogPath() string { return c.spec.LogPath }

// Start runs the process (again, after it exited) and waits until it
// logs its ready line. It is an error to Start a running process. A
// process that exits first fails with ErrChildExited; one that does not
// get ready in time gets SIGQUIT (a Go program writes every goroutine's
// stack to the log, showing where it is stuck), then SIGKILL. Either error
// quotes the log's tail.
func (c *Child) Start() error {
	exited, ready, err := c.spawn()
	if err != nil {
		return err
	}
	t := time.NewTimer(c.spec.ReadyTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return nil
	case <-exited:
		return fmt.Errorf("%w: %s\n%s", ErrChildExited, c.spec.Name, c.Tail(readyTail))
	case <-t.C:
		_ = c.end(syscall.SIGQUIT, quitGrace)
		return fmt.Errorf("launch: %s not ready (no line containing %q) after %v\n%s",
			c.spec.Name, c.spec.Ready, c.spec.ReadyTimeout, c.Tail(readyTail))
	}
}

// spawn starts one run and its reaper; it returns the run's exit and
// ready channels.
func (c *Child) spawn() (exited, ready <-chan struct{}, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return nil, nil, fmt.Errorf("launch: %s is already running", c.spec.Name)
	}
	logf, err := os.OpenFile(c.spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	w := newReadyWriter(logf, c.spec.Ready)
	cmd := exec.Command(c.spec.Path, c.spec.Args...)
	cmd.Dir = c.spec.Dir
	cmd.Env = append(os.Environ(), c.spec.Env...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = childSysProcAttr()
	cmd.WaitDelay = waitDelay
	fmt.Fprintf(logf, "=== launch: start %s (run %d): %s %s\n", c.spec.Name, c.starts+1, c.spec.Path, strings.Join(c.spec.Args, " "))
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("launch: start %s: %w", c.spec.Name, err)
	}
	ch := make(chan struct{})
	c.cmd, c.exited, c.expected, c.paused = cmd, ch, false, false
	c.starts++
	go c.reap(cmd, logf, ch)
	return ch, w.ready, nil
}

// reap waits for one run to end and records an exit nobody asked for.
func (c *Child) reap(cmd *exec.Cmd, logf *os.File, exited chan struct{}) {
	err := cmd.Wait()
	fmt.Fprintf(logf, "=== launch: %s exited: %v\n", c.spec.Name, err)
	logf.Close()
	c.mu.Lock()
	if c.cmd == cmd {
		if !c.expected {
			c.unexpected = append(c.unexpected, fmt.Sprintf("%s (pid %d) exited: %v; log tail:\n%s",
				c.spec.Name, cmd.Process.Pid, err, c.Tail(exitTail)))
		}
		c.cmd = nil
	}
	c.mu.Unlock()
	close(exited)
}

// Kill sends SIGKILL to the process group (kill -9: no shutdown code runs)
// and waits, up to 5s, for the process to exit. A Child that does not run
// is left alone.
func (c *Child) Kill() error { return c.end(syscall.SIGKILL, 0) }

// Stop asks for a clean exit (SIGTERM, and SIGCONT in case it is paused),
// waits up to grace, then kills the process.
func (c *Child) Stop(grace time.Duration) error { return c.end(syscall.SIGTERM, grace) }

// Restart kills the running process (if any) and starts it again.
func (c *Child) Restart() error {
	if err := c.Kill(); err != nil {
		return err
	}
	return c.Start()
}

// end marks the current run's exit as asked for and ends it: sig to the
// group (and SIGCONT, so that a paused one acts on it) and a wait of up
// to grace, then SIGKILL to the group (whether or not the process obeyed)
// and a wait of up to killWait.
func (c *Child) end(sig syscall.Signal, grace time.Duration) error {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	if cmd != nil {
		c.expected = true
	}
	c.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pid := cmd.Process.Pid
	if sig != syscall.SIGKILL {
		if err := Signal(pid, sig); err != nil {
			return fmt.Errorf("launch: %v to %s: %w", sig, c.spec.Name, err)
		}
		_ = Signal(pid, syscall.SIGCONT)
		t := time.NewTimer(grace)
		select {
		case <-exited:
			t.Stop()
			// What it forked and left behind (a job ignoring sig) goes too.
			_ = Signal(pid, syscall.SIGKILL)
			return nil
		case <-t.C:
		}
	}
	c.mu.Lock()
	if c.cmd == cmd {
		c.kills++
	}
	c.mu.Unlock()
	if err := Signal(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("launch: kill %s: %w", c.spec.Name, err)
	}
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-exited:
		return nil
	case <-t.C:
		return fmt.Errorf("launch: %s (pid %d) still runs %v after SIGKILL", c.spec.Name, pid, killWait)
	}
}

// Pause stops the process group with SIGSTOP; Resume continues it with
// SIGCONT. A Child that does not run is left alone.
func (c *Child) Pause() error  { return c.signalRunning(syscall.SIGSTOP, true) }
func (c *Child) Resume() error { return c.signalRunning(syscall.SIGCONT, false) }

func (c *Child) signalRunning(sig syscall.Signal, paused bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return nil
	}
	if err := Signal(c.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("launch: %v to %s: %w", sig, c.spec.Name, err)
	}
	c.paused = paused
	return nil
}

// ExpectExit marks the current run's exit as asked for (on) or not: a
// process that may exit by design for a while (a fenced member resumed
// from a pause) is not recorded as an unexpected exit.
func (c *Child) ExpectExit(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		c.expected = on
	}
}

// noRun is the channel Exited returns when nothing runs: closed.
var noRun = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Exited returns a channel closed once the current run has exited and
// been reaped (closed already when the process does not run).
func (c *Child) Exited() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return noRun
	}
	return c.exited
}

// Running reports whether the process runs (paused or not).
func (c *Child) Running() bool {
	running, _ := c.State()
	return running
}

// State reports whether the process runs and whether it is paused.
func (c *Child) State() (running, paused bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd != nil, c.cmd != nil && c.paused
}

// Pid returns the running process's id, or 0.
func (c *Child) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Starts counts the runs started.
func (c *Child) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// Kills counts the SIGKILLs sent to a running process.
func (c *Child) Kills() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kills
}

// UnexpectedExits returns the exits nobody asked for, each with the log's
// tail.
func (c *Child) UnexpectedExits() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.unexpected...)
}

// Tail returns the last n lines of the process's log.
func (c *Child) Tail(n int) string { return LogTail(c.spec.LogPath, n) }

// readyWriter copies output to the log and closes ready at the first line
// holding want (at once when want is ""). exec serialises the writes from
// one pipe; stdout and stderr share this writer, so it locks.
type readyWriter struct {
	mu    sync.Mutex
	out   *os.File
	want  string
	ready chan struct{}
	buf   []byte // a partial line, while still looking
	seen  bool
}

func newReadyWriter(out *os.File, want string) *readyWriter {
	w := &readyWriter{out: out, want: want, ready: make(chan struct{})}
	if want == "" {
		w.seen = true
		close(w.ready)
	}
	return w
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
		if len(w.buf) > readyLineMax {
			w.buf = w.buf[:0]
		}
	}
	_, _ = w.out.Write(b) // output goes on to the log even if it fails: never block the child
	return len(b), nil
}
