package launch

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shProc is a detached shell process running script, where $READY logs
// the ready line. (A script's last command may replace the shell, exec
// without fork, changing the command line Alive looks for: the scripts
// end in a wait or a loop. And the ready line is split in the script, so
// that the log's start line, which quotes the script, does not hold it.)
func shProc(t *testing.T, name, script string) *Proc {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	p := &Proc{Name: name, Log: filepath.Join(t.TempDir(), "logs", name+".log"),
		Args: []string{"-c", strings.ReplaceAll(script, "$READY", "echo '"+name+" serv''ing on here'"), name}}
	if err := Start(sh, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Kill(p) })
	return p
}

func TestStartWaitStop(t *testing.T) {
	p := shProc(t, "calm", "$READY; sleep 600 & wait")
	if err := WaitLog(p, servingLine, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("not alive after its ready line")
	}
	stubborn := shProc(t, "stubborn", "trap '' TERM; $READY; while :; do sleep 1; done")
	if err := WaitLog(stubborn, servingLine, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := Stop([]*Proc{p, stubborn}, 300*time.Millisecond, &out); err != nil {
		t.Fatal(err)
	}
	if p.Alive() || stubborn.Alive() {
		t.Fatal("alive after Stop")
	}
	if !strings.Contains(out.String(), "stubborn") || strings.Contains(out.String(), "calm") {
		t.Fatalf("Stop's report: %q", out.String())
	}
	if !strings.Contains(LogTail(p.Log, 5), "=== weft cluster: start calm") {
		t.Fatalf("log: %s", LogTail(p.Log, 5))
	}
}

func TestWaitLogExitAndKill(t *testing.T) {
	// Released, never reaped by this process (its parent): it stays a
	// zombie, which WaitLog must see as exited.
	p := shProc(t, "quitter", "$READY; exit 3")
	if err := WaitLog(p, "no such line", 10*time.Second); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("WaitLog on an exited process: %v", err)
	}
	k := shProc(t, "victim", "$READY; sleep 600 & wait")
	if err := Kill(k); err != nil {
		t.Fatal(err)
	}
	if k.Alive() {
		t.Fatal("alive after Kill")
	}
	if err := Stop([]*Proc{k}, time.Second, io.Discard); err != nil {
		t.Fatalf("Stop of a process already gone: %v", err)
	}
}
