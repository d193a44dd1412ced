package main

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/testproc"
)

// TestClusterUpStatusDown starts a local cluster (3 Kronos and 3 coordinator
// replicas as separate processes), reads its status, kill -9s a coordinator
// replica (the status must still show a leader), and stops it: every process
// must be gone and the state file marked stopped.
func TestClusterUpStatusDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := filepath.Join(t.TempDir(), "c")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--dir", dir)...).CombinedOutput()
		if err != nil {
			t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		// Whatever happened, leave no process behind.
		if st, err := launch.Load(dir); err == nil {
			for _, p := range st.Procs {
				if p.Alive() {
					_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
				}
			}
		}
	})
	out := run("cluster", "up", "--gatekeepers", "2", "--shards", "4", "--kronos-replicas", "3", "--coord-replicas", "3")
	if strings.Contains(out, "not started") {
		t.Fatalf("up left roles out:\n%s", out)
	}
	st, err := launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Of("kronos")) != 3 || len(st.Of("coord")) != 3 || len(st.Of("postgres")) != 1 ||
		len(st.Of("shard")) != 4 || len(st.Of("gatekeeper")) != 2 {
		t.Fatalf("state file lists %d processes, want 3 kronos, 3 coord, 1 postgres, 4 shards, 2 gatekeepers: %+v", len(st.Procs), st.Procs)
	}
	for _, p := range st.Procs {
		if !p.Alive() {
			t.Fatalf("%s (pid %d) not running after up", p.Name, p.Pid)
		}
	}
	// The coordinator creates the slots the launcher asked for; the
	// gatekeepers and shards register and hold them (up waits for that),
	// and the Kronos replicas register as members.
	var status string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		status = run("cluster", "status")
		if strings.Contains(status, "shard/3") && strings.Contains(status, "gatekeeper/1") &&
			strings.Contains(status, "vertices=") && strings.Contains(status, "commits_per_sec=") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{"coordinator: leader", "gatekeeper/1", "shard/3", "status page: http://",
		"shard-4", "gatekeeper-2", "kronos-3", "vertices=", "commits_per_sec="} {
		if !strings.Contains(status, want) {
			t.Fatalf("status lacks %q:\n%s", want, status)
		}
	}
	if strings.Contains(status, "vacant") {
		t.Fatalf("a slot is vacant after up:\n%s", status)
	}
	if strings.Count(status, " up ") != 13 {
		t.Fatalf("status does not show 13 processes up:\n%s", status)
	}
	page := status[strings.Index(status, "status page: ")+len("status page: "):]
	page = strings.TrimSpace(strings.SplitN(page, "\n", 2)[0])
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "shard") || !strings.Contains(string(b), "Epoch") {
		t.Fatalf("GET %s: %d\n%.1000s", page, resp.StatusCode, b)
	}

	// Every shard and Kronos replica serves /healthz and /metrics.
	for _, want := range []struct{ role, metric string }{{"shard", "weft_shard_vertices"}, {"kronos", "weft_kronos_term"}} {
		for _, p := range st.Of(want.role) {
			for _, path := range []string{"/healthz", "/metrics"} {
				var body []byte
				code := 0
				for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
					resp, err := http.Get("http://" + p.HTTPAddr + path)
					if err != nil {
						continue
					}
					body, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
					if code = resp.StatusCode; code == 200 && (path == "/healthz" || strings.Contains(string(body), want.metric)) {
						break
					}
				}
				if code != 200 || (path == "/metrics" && !strings.Contains(string(body), want.metric)) {
					t.Fatalf("%s GET %s: %d\n%.500s", p.Name, path, code, body)
				}
			}
		}
	}

	// kill -9 one coordinator replica: a minority; the group still leads.
	victim := st.Of("coord")[0]
	if err := syscall.Kill(-victim.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		status = run("cluster", "status")
		if strings.Contains(status, "coordinator: leader") && strings.Count(status, " up ") == 12 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(status, "coordinator: leader") || strings.Count(status, " down ") != 1 {
		t.Fatalf("after kill -9 of %s, status:\n%s", victim.Name, status)
	}

	out = run("cluster", "down", "--timeout", "5s")
	if !strings.Contains(out, "stopped") {
		t.Fatalf("down: %s", out)
	}
	st, err = launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stopped {
		t.Fatal("state file not marked stopped")
	}
	for _, p := range st.Procs {
		if p.Alive() {
			t.Fatalf("%s (pid %d) still running after down", p.Name, p.Pid)
		}
	}
	// A second up on the same data needs the same replica counts.
	if out, err := exec.Command(bin, "cluster", "up", "--dir", dir, "--coord-replicas", "1").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "holds the data of 3") {
		t.Fatalf("up with another replica count on old data: err %v\n%s", err, out)
	}
}
