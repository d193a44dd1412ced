package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFileHolder: a child holding a file open is found with its command
// line; a file nobody holds has no holder.
func TestFileHolder(t *testing.T) {
	dir := t.TempDir()
	held, free := filepath.Join(dir, "LOCK"), filepath.Join(dir, "other")
	for _, p := range []string{held, free} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", "exec 3<"+held+"; echo ready; exec sleep 30")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	var pid int
	var line string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if pid, line = FileHolder(held); pid != 0 && strings.HasPrefix(line, "sleep") {
			break
		}
	}
	if pid != cmd.Process.Pid || !strings.HasPrefix(line, "sleep 30") {
		t.Fatalf("FileHolder(held) = %d %q, want %d \"sleep 30\"", pid, line, cmd.Process.Pid)
	}
	if pid, _ := FileHolder(free); pid != 0 {
		t.Fatalf("FileHolder(free) = %d, want 0", pid)
	}
}
