package testproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// RepoRoot is the checkout's root: the nearest directory above the test's
// working directory (its package's) that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("testproc: no go.mod above the test's directory")
		}
		dir = up
	}
}

// Python returns the interpreter of the Python client's virtual
// environment (clients/python/.venv, as make creates it), creating it, or
// installing the client with extras (e.g. "kronos"; "" none) where it
// cannot import weft (and grpc, with an extra), so a test never skips for
// want of it; $WEFT_PYTHON overrides it. Packages tested in parallel take
// turns under a lock on the venv. A venv that cannot be made fails the test.
func Python(t testing.TB, extras string) string {
	t.Helper()
	if p := os.Getenv("WEFT_PYTHON"); p != "" {
		return p
	}
	pkg := filepath.Join(RepoRoot(t), "clients", "python")
	venv := filepath.Join(pkg, ".venv")
	py := filepath.Join(venv, "bin", "python")
	lock, err := os.OpenFile(filepath.Join(pkg, ".venv.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	check := "import weft"
	if extras != "" {
		check += ", grpc"
	}
	var steps [][]string
	if _, err := os.Stat(py); err != nil {
		steps = append(steps, []string{"python3", "-m", "venv", venv})
	}
	if len(steps) > 0 || exec.Command(py, "-c", check).Run() != nil {
		spec := pkg
		if extras != "" {
			spec += "[" + extras + "]"
		}
		steps = append(steps, []string{py, "-m", "pip", "install", "--quiet", "-e", spec})
		t.Logf("installing the Python client (%s) into %s", filepath.Base(spec), venv)
	}
	for _, args := range steps {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("testproc: %s: %v\n%s\nset WEFT_PYTHON to an interpreter with the weft package installed", strings.Join(args, " "), err, out)
		}
	}
	return py
}
