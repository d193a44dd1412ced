package testproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// DebianPackage returns path, installing Debian's package pkg (which
// provides it) with apt-get when it is missing and the test runs as root,
// as CI does; elsewhere a missing program fails the test with the command
// that installs it. Never a skip: a test that needs a program has it.
// Installs take turns across test binaries under a lock.
func DebianPackage(t testing.TB, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if os.Geteuid() != 0 {
		t.Fatalf("no %s and this is not root: apt-get install %s", path, pkg)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("no %s and no apt-get to install %s", path, pkg)
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "weft-apt.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(path); err == nil {
		return path // another test installed it meanwhile
	}
	apt := func(args ...string) error {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	install := []string{"install", "-y", "--no-install-recommends", pkg}
	if err := apt(install...); err != nil {
		if err := apt("update"); err != nil {
			t.Fatal(err)
		}
		if err := apt(install...); err != nil {
			t.Fatal(err) // root with apt-get: failing to install is a failure, not a skip
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("apt-get installed %s but %s is missing: %v", pkg, path, err)
	}
	return path
}
