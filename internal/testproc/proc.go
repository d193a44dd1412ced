package testproc

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
	"testing"
	"time"

	"github.com/weft-db/weft/internal/launch"
)

// Spec describes a process to run.
type Spec struct {
	// Name labels the process in errors and logs, e.g. "kronos-2".
	Name string
	// Path is the binary; Args its arguments (without argv[0]).
	Path string
	Args []string
	// Dir is the working directory; "" inherits the test's.
	Dir string
	// Env is added to the test's environment.
	Env []string
	// Ready is a substring of an output line (stdout or stderr) meaning the
	// process is up; Start waits for it. "" means up once started.
	Ready string
	// ReadyTimeout bounds that wait. Default 15s.
	ReadyTimeout time.Duration
	// LogPath receives stdout and stderr, appended across restarts. Required.
	LogPath string
}

// ErrExited is returned by Start when the process exits before it is ready.
var ErrExited = errors.New("testproc: process exited before it was ready")

// Proc is a process that can be started, killed and restarted.
type Proc struct {
	spec Spec

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current run's Wait returns
	starts int
	kills  int
}

// New returns a stopped Proc; Start runs it.
func New(spec Spec) (*Proc, error) {
	if spec.Path == "" || spec.LogPath == "" {
		return nil, fmt.Errorf("testproc: %s: Path and LogPath are required", spec.Name)
	}
	if spec.ReadyTimeout <= 0 {
		spec.ReadyTimeout = 15 * time.Second
	}
	return &Proc{spec: spec}, nil
}

// Start runs spec with t: it fails the test if the process does not come up,
// and kills it (its whole process group) when the test ends, pass or fail.
func Start(t testing.TB, spec Spec) *Proc {
	t.Helper()
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Name returns the spec's name.
func (p *Proc) Name() string { return p.spec.Name }

// LogPath returns the file holding the process's output.
func (p *Proc) LogPath() string { return p.spec.LogPath }

// Start runs the process (again, after Kill or Stop) and waits until it is
// ready. It is an error to Start a running process.
func (p *Proc) Start() error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return fmt.Errorf("testproc: %s is already running", p.spec.Name)
	}
	logf, err := os.OpenFile(p.spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	w := &lineWatcher{out: logf, want: p.spec.Ready, ready: make(chan struct{})}
	if w.want == "" {
		close(w.ready)
	}
	cmd := exec.Command(p.spec.Path, p.spec.Args...)
	cmd.Dir = p.spec.Dir
	cmd.Env = append(os.Environ(), p.spec.Env...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	// Wait returns this long after the process dies even if something still
	// holds its output pipe.
	cmd.WaitDelay = 2 * time.Second
	fmt.Fprintf(logf, "=== testproc: start %s (run %d): %s %s\n", p.spec.Name, p.starts+1, p.spec.Path, strings.Join(p.spec.Args, " "))
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		logf.Close()
		return fmt.Errorf("testproc: start %s: %w", p.spec.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	p.starts++
	p.mu.Unlock()

	go func() {
		err := cmd.Wait()
		fmt.Fprintf(logf, "=== testproc: %s exited: %v\n", p.spec.Name, err)
		logf.Close()
		p.mu.Lock()
		if p.cmd == cmd {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(exited)
	}()

	select {
	case <-w.ready:
		return nil
	case <-exited:
		return fmt.Errorf("%w: %s\n%s", ErrExited, p.spec.Name, p.Tail(20))
	case <-time.After(p.spec.ReadyTimeout):
		// SIGQUIT first: a Go program prints every goroutine's stack to the
		// log, showing where it is stuck.
		_ = p.signal(syscall.SIGQUIT, 2*time.Second)
		_ = p.Kill()
		return fmt.Errorf("testproc: %s not ready (no line containing %q) after %v\n%s",
			p.spec.Name, p.spec.Ready, p.spec.ReadyTimeout, p.Tail(20))
	}
}

// Kill sends SIGKILL to the process group (kill -9: no shutdown code runs)
// and waits for the process to exit. Killing a stopped Proc does nothing.
func (p *Proc) Kill() error {
	return p.signal(syscall.SIGKILL, 0)
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, then kills.
func (p *Proc) Stop(timeout time.Duration) error {
	return p.signal(syscall.SIGTERM, timeout)
}

func (p *Proc) signal(sig syscall.Signal, timeout time.Duration) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd != nil && sig == syscall.SIGKILL {
		p.kills++
	}
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	// The negative pid names the process group (Setpgid made pgid = pid).
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("testproc: signal %s: %w", p.spec.Name, err)
	}
	if sig != syscall.SIGKILL {
		select {
		case <-exited:
			return nil
		case <-time.After(timeout):
			return p.Kill()
		}
	}
	<-exited
	return nil
}

// Running reports whether the process is running.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Pid returns the running process's id, or 0.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Starts counts the runs started.
func (p *Proc) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Kills counts the SIGKILLs sent to a running process.
func (p *Proc) Kills() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kills
}

// Tail returns the last n lines of the process's log.
func (p *Proc) Tail(n int) string {
	b, err := os.ReadFile(p.spec.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lineWatcher copies output to the log and signals the first line holding want.
type lineWatcher struct {
	out   *os.File
	want  string
	ready chan struct{}
	buf   []byte // a partial line, while still waiting
	seen  bool
}

func (w *lineWatcher) Write(b []byte) (int, error) {
	if !w.seen && w.want != "" {
		w.buf = append(w.buf, b...)
		for {
			i := bytes.IndexByte(w.buf, '\n')
			if i < 0 {
				break
			}
			if strings.Contains(string(w.buf[:i]), w.want) {
				w.seen = true
				close(w.ready)
				w.buf = nil
				break
			}
			w.buf = w.buf[i+1:]
		}
	}
	// Output goes on to the log even if it fails: never block the child.
	_, _ = w.out.Write(b)
	return len(b), nil
}

// Build compiles the main package pkg (an import path or ./dir relative to
// the test's directory) into t.TempDir() and returns the binary's path.
func Build(t testing.TB, pkg string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("testproc: no go tool to build %s: %v", pkg, err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmdArgs := append([]string{"build", "-o", out}, args...)
	cmd := exec.Command(gobin, append(cmdArgs, pkg)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("testproc: go build %s: %v\n%s", pkg, err, stderr.String())
	}
	return out
}

// FreeAddrs returns n distinct loopback addresses for processes to bind
// (launch.FreeAddrs: outside the kernel's ephemeral range, reserved against
// other launchers for a while).
func FreeAddrs(n int) ([]string, error) { return launch.FreeAddrs(n, nil) }
