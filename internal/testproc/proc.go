package testproc

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/weft-db/weft/internal/launch"
)

// Spec describes a process to run: Name, Path, Args, Dir, Env, the Ready
// line and its ReadyTimeout (default 15s), and the LogPath that receives
// its output across restarts (required).
type Spec = launch.ChildSpec

// Proc is a process that can be started, stopped, killed, paused and
// restarted (launch.Child).
type Proc = launch.Child

// Start runs spec with t: it fails the test if the process does not come up
// (the error quotes the log's tail), and kills it (its whole process group)
// when the test ends, pass or fail.
func Start(t testing.TB, spec Spec) *Proc {
	t.Helper()
	p, err := launch.NewChild(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p
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
