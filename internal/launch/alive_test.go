package launch

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// stat builds a /proc/PID/stat line with the given command name and state.
func stat(comm string, state byte) []byte {
	return []byte("4242 (" + comm + ") " + string(state) + " 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0 555 1000 10")
}

func TestJudgeAlive(t *testing.T) {
	args := []string{"shard", "--name", "shard-1"}
	ours := []byte("/bin/weft\x00shard\x00--name\x00shard-1\x00--listen\x00x\x00")
	for _, c := range []struct {
		name string
		pr   probe
		want bool
	}{
		{"running, our command line", probe{stat: stat("weft", 'S'), cmdline: ours}, true},
		{"running (R), our command line", probe{stat: stat("weft", 'R'), cmdline: ours}, true},
		{"stopped (SIGSTOP) is alive", probe{stat: stat("weft", 'T'), cmdline: ours}, true},
		{"zombie", probe{stat: stat("weft", 'Z'), cmdline: nil}, false},
		{"zombie whose command line still reads", probe{stat: stat("weft", 'Z'), cmdline: ours}, false},
		{"dead (X)", probe{stat: stat("weft", 'X'), cmdline: ours}, false},
		{"reused pid: another program", probe{stat: stat("sleep", 'S'), cmdline: []byte("sleep\x00600\x00")}, false},
		{"reused pid: another weft process", probe{stat: stat("weft", 'S'),
			cmdline: []byte("/bin/weft\x00shard\x00--name\x00shard-2\x00")}, false},
		{"command name with spaces and parentheses", probe{stat: stat("we) (ft", 'S'), cmdline: ours}, true},
		{"zombie, name with parentheses", probe{stat: stat("a) S (b", 'Z'), cmdline: ours}, false},
		{"gone since kill(0)", probe{statErr: os.ErrNotExist, cmdErr: os.ErrNotExist}, false},
		{"not ours to read: trust kill(0)", probe{stat: stat("weft", 'S'), cmdErr: os.ErrPermission}, true},
		{"unparsable stat: decided by the command line", probe{stat: []byte("garbage"), cmdline: ours}, true},
	} {
		if got := judgeAlive(c.pr, args); got != c.want {
			t.Errorf("%s: judgeAlive = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	st, err := ParseStat(stat("a) Z (b", 'S'))
	if err != nil {
		t.Fatal(err)
	}
	if st.Pid != 4242 || st.PPid != 1 || st.State != 'S' || st.Ticks != 7+3+2+1 || st.Start != 555 || st.Zombie() {
		t.Fatalf("ParseStat = %+v", st)
	}
	// A command name with spaces and parentheses: fields count from the last ')'.
	line := "4242 (post (gres) x) S 4200 4242 4242 0 -1 4194560 100 0 0 0 150 25 7 3 20 0 1 0 12345 1000 10 18446744073709551615\n"
	if st, err = ParseStat([]byte(line)); err != nil {
		t.Fatal(err)
	}
	if st.Pid != 4242 || st.PPid != 4200 || st.Ticks != 150+25+7+3 || st.Start != 12345 || st.State != 'S' {
		t.Fatalf("parsed %+v, want pid 4242, ppid 4200, ticks 185, start 12345, state S", st)
	}
	for _, bad := range []string{"", "12 no-parens S 1", "x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
		"7 (a) S 1 2", "7 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 z"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

// TestAlive checks the real processes: this one, a child run to exit and
// left unreaped (a zombie), the same child once reaped, and pids that
// cannot be ours.
func TestAlive(t *testing.T) {
	if !hasProc() {
		t.Skip("no /proc")
	}
	if !Alive(os.Getpid(), os.Args) {
		t.Fatal("this process is not alive")
	}
	if Alive(os.Getpid(), []string{"no-such-argument-" + t.Name()}) {
		t.Fatal("this process taken for one with another command line")
	}
	if Alive(0, nil) || Alive(-1, nil) {
		t.Fatal("pid 0 or -1 alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	// Not reaped yet: once it exits it is a zombie, which kill(0) still finds.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, ok := ReadStat(pid); ok && st.Zombie() {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the child never became a zombie")
		}
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("kill(0) does not find the zombie")
	}
	if Alive(pid, nil) {
		t.Fatal("a zombie is alive")
	}
	_ = cmd.Wait()
	if Alive(pid, nil) {
		t.Fatal("a reaped process is alive")
	}
}

// Right after Start the process may still be in its exec (an empty
// command line for a moment): Alive must not call it gone.
func TestAliveRightAfterStart(t *testing.T) {
	if !hasProc() {
		t.Skip("no /proc")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	for i := range 100 {
		p := &Proc{Name: "fresh", Log: t.TempDir() + "/fresh.log", Args: []string{"-c", "sleep 600", "fresh"}}
		if err := Start(sh, p); err != nil {
			t.Fatal(err)
		}
		alive := p.Alive()
		_ = Kill(p)
		if !alive {
			t.Fatalf("start %d: not alive right after Start", i)
		}
	}
}

func TestProbeMidExec(t *testing.T) {
	for _, c := range []struct {
		name string
		pr   probe
		want bool
	}{
		{"empty command line, running", probe{stat: stat("sh", 'R')}, true},
		{"empty command line, zombie", probe{stat: stat("sh", 'Z')}, false},
		{"a command line", probe{stat: stat("sh", 'R'), cmdline: []byte("sh\x00")}, false},
		{"gone", probe{statErr: os.ErrNotExist, cmdErr: os.ErrNotExist}, false},
	} {
		if got := c.pr.midExec(); got != c.want {
			t.Errorf("%s: midExec = %v, want %v", c.name, got, c.want)
		}
	}
}
