package testproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child process: with TESTPROC_HELPER set,
// TestHelperProcess plays the part named by the variable and never returns.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("TESTPROC_HELPER") {
	case "":
		return
	case "serve":
		// A grandchild in the same process group, to show Kill reaches it.
		if sleep, err := exec.LookPath("sleep"); err == nil {
			c := exec.Command(sleep, "600")
			if err := c.Start(); err == nil {
				fmt.Printf("grandchild %d\n", c.Process.Pid)
			}
		}
		fmt.Fprintln(os.Stderr, "some noise on stderr")
		fmt.Print("helper serving")
		time.Sleep(50 * time.Millisecond) // the ready line arrives in pieces
		fmt.Println(" on 127.0.0.1:1")
		select {}
	case "die":
		fmt.Println("helper giving up")
		os.Exit(3)
	case "mute":
		select {}
	}
}

func helperSpec(t *testing.T, role string) Spec {
	return Spec{Name: role, Path: os.Args[0], Args: []string{"-test.run=^TestHelperProcess$"},
		Env: []string{"TESTPROC_HELPER=" + role}, Ready: "serving on", ReadyTimeout: 5 * time.Second,
		LogPath: filepath.Join(t.TempDir(), role+".log")}
}

// alive reports whether pid runs; a zombie (dead, not yet reaped by whoever
// inherited it) counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func grandchild(t *testing.T, p *Proc) int {
	t.Helper()
	for _, line := range strings.Split(p.Tail(100), "\n") {
		if s, ok := strings.CutPrefix(line, "grandchild "); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	return 0
}

func TestStartKillRestart(t *testing.T) {
	p := Start(t, helperSpec(t, "serve"))
	if !p.Running() || p.Pid() == 0 || p.Starts() != 1 {
		t.Fatalf("running=%v pid=%d starts=%d after Start", p.Running(), p.Pid(), p.Starts())
	}
	pid, gc := p.Pid(), grandchild(t, p)
	if err := p.Start(); err == nil {
		t.Fatal("Start of a running process succeeded")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.Kills() != 1 {
		t.Fatalf("running=%v kills=%d after Kill", p.Running(), p.Kills())
	}
	if alive(pid) {
		t.Fatalf("pid %d alive after Kill", pid)
	}
	if gc != 0 {
		// SIGKILL is delivered asynchronously; allow the grandchild a moment.
		deadline := time.Now().Add(2 * time.Second)
		for alive(gc) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(gc) {
			t.Fatalf("grandchild %d survived the process group kill", gc)
		}
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill of a stopped process: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == pid || p.Starts() != 2 {
		t.Fatalf("restart: pid %d (was %d), starts %d", p.Pid(), pid, p.Starts())
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Running() {
		t.Fatal("running after Stop")
	}
	if log := p.Tail(1000); strings.Count(log, "=== testproc: start") != 2 || !strings.Contains(log, "noise on stderr") {
		t.Fatalf("log does not hold both runs and stderr:\n%s", log)
	}
}

func TestStartReportsEarlyExit(t *testing.T) {
	p, err := New(helperSpec(t, "die"))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Start()
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("Start = %v, want ErrExited with the log tail", err)
	}
}

func TestStartTimesOut(t *testing.T) {
	spec := helperSpec(t, "mute")
	spec.ReadyTimeout = 300 * time.Millisecond
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("Start = %v, want a readiness timeout", err)
	}
	if p.Running() {
		t.Fatal("a process that never became ready was left running")
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
