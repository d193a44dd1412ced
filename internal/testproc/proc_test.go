package testproc

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The process behaviour is launch.Child's, tested there; here, only what
// Start adds: the process is up when it returns, and gone when the test
// that started it ends.
func TestStartCleanup(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	var p *Proc
	t.Run("starts", func(t *testing.T) {
		p = Start(t, Spec{Name: "sleeper", Path: sh, Args: []string{"-c", "echo 'up''per'; sleep 600 & wait"},
			Ready: "upper", LogPath: filepath.Join(t.TempDir(), "sleeper.log")})
		if !p.Running() || p.Starts() != 1 {
			t.Fatalf("running %v, starts %d after Start", p.Running(), p.Starts())
		}
	})
	if p == nil || p.Running() || p.Kills() != 1 {
		t.Fatal("the process outlived the test that started it")
	}
}

func TestFreeAddrsDistinct(t *testing.T) {
	addrs, err := FreeAddrs(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("bad or repeated address %q in %v", a, addrs)
		}
		seen[a] = true
	}
}
