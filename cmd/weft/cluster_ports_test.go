package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/testproc"
)

// TestClusterUpBasePortJSONLogs: cluster up --base-port lays the ports out
// as documented and prints them labelled, --port moves one address (the
// coordinator's HTTP, which then serves there); --log-format json reaches every
// process, whose log lines parse as JSON with time, level and msg, and
// the raft groups' leader lines are among them.
func TestClusterUpBasePortJSONLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := filepath.Join(t.TempDir(), "c")
	t.Cleanup(func() {
		if st, err := launch.Load(dir); err == nil {
			for _, p := range st.Procs {
				if p.Alive() {
					_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
				}
			}
		}
	})
	port, err := launch.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := port - port%1000 + 500 // in [12500, 32500]: its 500 ports are below the ephemeral range
	coordHTTP, err := launch.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "cluster", "up", "--dir", dir, "--gatekeepers", "0", "--shards", "0",
		"--kronos-replicas", "1", "--coord-replicas", "1", "--base-port", fmt.Sprint(base),
		"--port", fmt.Sprintf("coord-1.http=%d", coordHTTP), "--log-format", "json").CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "is in use") {
			t.Skipf("a port of the layout is in use: %s", out)
		}
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	defer exec.Command(bin, "cluster", "down", "--dir", dir, "--timeout", "5s").Run()
	for _, w := range []string{"ROLE", "NAME", "PID", "ADDRESSES", "LOG",
		fmt.Sprintf("grpc+raft 127.0.0.1:%d  http 127.0.0.1:%d", base, base+1),
		fmt.Sprintf("grpc+raft 127.0.0.1:%d  http 127.0.0.1:%d", base+100, coordHTTP),
		filepath.Join("logs", "kronos-1.log")} {
		if !strings.Contains(string(out), w) {
			t.Errorf("up's table lacks %q:\n%s", w, out)
		}
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", coordHTTP))
	if err != nil {
		t.Fatalf("coord-1's HTTP at its --port: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("coord-1 /healthz at its --port: %s", resp.Status)
	}
	for name, want := range map[string]string{"kronos-1": "kronos leader", "coord-1": "coordinator leader"} {
		f, err := os.Open(filepath.Join(dir, "logs", name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		n, found := 0, false
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "{") {
				continue // the ready line, plain text on stdout
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("%s: a log line is not JSON: %v\n%s", name, err, line)
				continue
			}
			for _, k := range []string{"time", "level", "msg"} {
				if _, ok := rec[k]; !ok {
					t.Errorf("%s: log line without %q: %s", name, k, line)
				}
			}
			n++
			found = found || rec["msg"] == want
		}
		f.Close()
		if n == 0 || !found {
			t.Errorf("%s: %d JSON log lines, %q among them: %v", name, n, want, found)
		}
	}
}
