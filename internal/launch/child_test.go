package launch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// childReady is the ready line of shChild's scripts. $READY prints it in
// two pieces (the ready line may arrive in pieces), split in the script
// so that the log's start line, which quotes the script, does not hold it.
const childReady = "serving on"

// shChild is a Child (not started) running a shell script in a fresh
// directory, where $READY logs the ready line. The test kills it at the
// end.
func shChild(t *testing.T, name, script string) *Child {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	c, err := NewChild(ChildSpec{Name: name, Path: sh, Dir: dir, Ready: childReady, ReadyTimeout: 10 * time.Second,
		LogPath: filepath.Join(dir, name+".log"),
		Args:    []string{"-c", strings.ReplaceAll(script, "$READY", "printf 'serv'; sleep 0.05; echo 'ing on here'"), name}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Kill() })
	return c
}

// gone waits until no process pid runs (a zombie counts as gone).
func gone(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); Alive(pid, nil); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("pid %d still runs", pid)
		}
	}
}

// waitState waits until /proc shows pid in state s (or not in it).
func waitState(t *testing.T, pid int, s byte, in bool) {
	t.Helper()
	if !hasProc() {
		return
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, ok := ReadStat(pid); ok && (st.State == s) == in {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("pid %d: state %c is %v: not seen", pid, s, in)
		}
	}
}

// Start waits for the ready line; Kill ends the whole group (a grandchild
// too); Start and Restart run it again, appending to the same log.
func TestChildStartKillRestart(t *testing.T) {
	c := shChild(t, "calm", "sleep 600 & echo grandchild $!; echo 'noise on stderr' >&2; $READY; wait")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if !c.Running() || c.Pid() == 0 || c.Starts() != 1 || !strings.Contains(c.Tail(1), childReady) {
		t.Fatalf("after Start: running %v pid %d starts %d, log:\n%s", c.Running(), c.Pid(), c.Starts(), c.Tail(10))
	}
	pid, gc := c.Pid(), grandchild(t, c)
	if err := c.Start(); err == nil {
		t.Fatal("Start of a running child succeeded")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if c.Running() || c.Pid() != 0 || c.Kills() != 1 {
		t.Fatalf("after Kill: running %v pid %d kills %d", c.Running(), c.Pid(), c.Kills())
	}
	gone(t, pid)
	gone(t, gc)
	select {
	case <-c.Exited():
	default:
		t.Fatal("Exited not closed after Kill")
	}
	if err := c.Kill(); err != nil || c.Kills() != 1 {
		t.Fatalf("Kill of a child not running: %v, kills %d", err, c.Kills())
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	second := c.Pid()
	if second == pid || c.Starts() != 2 {
		t.Fatalf("second start: pid %d (was %d), starts %d", second, pid, c.Starts())
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if c.Pid() == second || c.Starts() != 3 || c.Kills() != 2 {
		t.Fatalf("Restart: pid %d (was %d), starts %d, kills %d", c.Pid(), second, c.Starts(), c.Kills())
	}
	if err := c.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	log := c.Tail(1000)
	if strings.Count(log, "=== launch: start calm") != 3 || !strings.Contains(log, "(run 3)") ||
		strings.Count(log, "\nnoise on stderr\n") != 3 || strings.Count(log, "=== launch: calm exited") != 3 {
		t.Fatalf("the log does not hold the three runs and their stderr:\n%s", log)
	}
	if ex := c.UnexpectedExits(); len(ex) != 0 {
		t.Fatalf("exits asked for recorded as unexpected: %q", ex)
	}
}

// grandchild is the pid the script logged after "grandchild ".
func grandchild(t *testing.T, c *Child) int {
	t.Helper()
	for _, line := range strings.Split(c.Tail(100), "\n") {
		if s, ok := strings.CutPrefix(line, "grandchild "); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no grandchild in the log:\n%s", c.Tail(100))
	return 0
}

func TestChildExitBeforeReady(t *testing.T) {
	c := shChild(t, "quitter", "echo giving up; exit 3")
	err := c.Start()
	if !errors.Is(err, ErrChildExited) || !strings.Contains(err.Error(), "giving up") {
		t.Fatalf("Start = %v, want ErrChildExited with the log's tail", err)
	}
	if c.Running() {
		t.Fatal("running after it exited")
	}
	if ex := c.UnexpectedExits(); len(ex) != 1 || !strings.Contains(ex[0], "exit status 3") {
		t.Fatalf("unexpected exits %q, want the one exit", ex)
	}
}

// A child that never logs its ready line is ended (SIGQUIT, then SIGKILL
// for one that ignores it) and the error says so.
func TestChildReadyTimeout(t *testing.T) {
	for _, script := range []string{"echo mute; while :; do sleep 1; done", "trap '' QUIT; echo deaf; while :; do sleep 1; done"} {
		c := shChild(t, "mute", script)
		c.spec.ReadyTimeout = 300 * time.Millisecond
		if err := c.Start(); err == nil || !strings.Contains(err.Error(), "not ready") {
			t.Fatalf("%s: Start = %v, want a readiness timeout", script, err)
		}
		if c.Running() || len(c.UnexpectedExits()) != 0 {
			t.Fatalf("%s: running %v, unexpected exits %q", script, c.Running(), c.UnexpectedExits())
		}
	}
}

func TestChildNoReadyLine(t *testing.T) {
	c := shChild(t, "plain", "sleep 600 & wait")
	c.spec.Ready = ""
	if err := c.Start(); err != nil || !c.Running() {
		t.Fatalf("Start = %v, running %v", err, c.Running())
	}
}

// Stop is SIGTERM, then SIGKILL after the grace for a child that ignores it.
func TestChildStop(t *testing.T) {
	calm := shChild(t, "calm", "$READY; sleep 600 & wait")
	stubborn := shChild(t, "stubborn", "trap '' TERM; $READY; while :; do sleep 1; done")
	for _, c := range []*Child{calm, stubborn} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	if err := calm.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 30*time.Second || calm.Kills() != 0 {
		t.Fatalf("a child that obeys SIGTERM: stopped after %v with %d kills", d, calm.Kills())
	}
	if err := stubborn.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if stubborn.Running() || stubborn.Kills() != 1 {
		t.Fatalf("a child that ignores SIGTERM: running %v, kills %d", stubborn.Running(), stubborn.Kills())
	}
	if len(calm.UnexpectedExits())+len(stubborn.UnexpectedExits()) != 0 {
		t.Fatal("a stop recorded as an unexpected exit")
	}
}

// Pause stops the group, Resume continues it, and Stop ends a paused
// child without waiting out its grace (SIGCONT).
func TestChildPauseResume(t *testing.T) {
	c := shChild(t, "sleepy", "$READY; sleep 600 & wait")
	if err := c.Pause(); err != nil {
		t.Fatalf("Pause of a child not running: %v", err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	if running, paused := c.State(); !running || !paused {
		t.Fatalf("after Pause: running %v paused %v", running, paused)
	}
	waitState(t, c.Pid(), 'T', true)
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	if running, paused := c.State(); !running || paused {
		t.Fatalf("after Resume: running %v paused %v", running, paused)
	}
	waitState(t, c.Pid(), 'T', false)
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c.Pid(), 'T', true)
	t0 := time.Now()
	if err := c.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 30*time.Second || c.Kills() != 0 {
		t.Fatalf("Stop of a paused child: %v, %d kills", d, c.Kills())
	}
	if running, paused := c.State(); running || paused {
		t.Fatalf("after Stop: running %v paused %v", running, paused)
	}
}

// An exit nobody asked for is recorded with the log's tail, unless
// ExpectExit allowed it.
func TestChildUnexpectedExit(t *testing.T) {
	c := shChild(t, "fragile", "$READY; while [ ! -e quit ]; do sleep 0.02; done; rm quit; echo dying words; exit 7")
	quit := func() {
		t.Helper()
		if err := os.WriteFile(filepath.Join(c.spec.Dir, "quit"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.Exited():
		case <-time.After(10 * time.Second):
			t.Fatal("the child did not exit")
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	quit()
	ex := c.UnexpectedExits()
	if len(ex) != 1 || !strings.HasPrefix(ex[0], "fragile (pid ") || !strings.Contains(ex[0], "exit status 7") ||
		!strings.Contains(ex[0], "dying words") {
		t.Fatalf("unexpected exits %q, want the one with its tail", ex)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	c.ExpectExit(true)
	quit()
	if n := len(c.UnexpectedExits()); n != 1 {
		t.Fatalf("an exit allowed by ExpectExit recorded: %d exits", n)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	c.ExpectExit(true)
	c.ExpectExit(false)
	quit()
	if n := len(c.UnexpectedExits()); n != 2 {
		t.Fatalf("after ExpectExit(false) an exit is unexpected again: %d exits, want 2", n)
	}
}

// Every method may be called while others run (go test -race).
func TestChildConcurrent(t *testing.T) {
	c := shChild(t, "busy", "$READY; sleep 600 & wait")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c.State()
			c.Pid()
			c.Starts()
			c.Kills()
			c.UnexpectedExits()
			c.ExpectExit(false)
			<-time.After(time.Millisecond)
		}
	})
	for range 3 {
		if err := c.Pause(); err != nil {
			t.Error(err)
		}
		if err := c.Resume(); err != nil {
			t.Error(err)
		}
		if err := c.Restart(); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if err := c.Kill(); err != nil || c.Starts() != 4 {
		t.Fatalf("Kill = %v, starts %d", err, c.Starts())
	}
}

func TestNewChild(t *testing.T) {
	for _, spec := range []ChildSpec{{Path: "/bin/true"}, {LogPath: "x.log"}} {
		if _, err := NewChild(spec); err == nil {
			t.Errorf("NewChild(%+v): no error", spec)
		}
	}
	c, err := NewChild(ChildSpec{Path: "/usr/bin/weft", LogPath: "x.log"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "weft" || c.LogPath() != "x.log" || c.spec.ReadyTimeout != defaultReadyTimeout || c.Running() {
		t.Fatalf("defaults: %+v", c.spec)
	}
	select {
	case <-c.Exited():
	default:
		t.Fatal("Exited of a child never started is not closed")
	}
}
