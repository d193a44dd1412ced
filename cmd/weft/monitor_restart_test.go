package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/testproc"
)

const xyMonitorSpec = `{"servers": 2, "predicates": [{"name": "xy", "type": "conjunctive",
  "clauses": [{"vars": [{"server": 0, "key": "x", "value": 1}, {"server": 1, "key": "y", "value": 1}]}]}]}`

// monitorView fetches a monitor process's violations and stats.
func monitorView(ctx context.Context, addr string) ([]kv.ViolationReport, kv.WatcherStats, error) {
	var vs struct {
		Violations []kv.ViolationReport `json:"violations"`
	}
	var st kv.WatcherStats
	for path, out := range map[string]any{"/v1/monitor/violations": &vs, "/v1/monitor/stats": &st} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, st, err
		}
		err = json.NewDecoder(resp.Body).Decode(out)
		resp.Body.Close()
		if err != nil {
			return nil, st, err
		}
	}
	return vs.Violations, st, nil
}

// TestMonitorSurvivesRestart (§IV-V, a monitor process that survives its
// own restart): two `weft kv serve --predicates` and a `weft monitor
// --data-dir`. A client runs 24 episodes, each making x@0 = 1 ∧ y@1 = 1
// hold (a violation of the conjunctive predicate) and then undoing it,
// with the episodes causally ordered and more than ε apart, so the
// servers' histories imply exactly 24 violations (the servers run without
// detector heartbeats, which would split a state in two and make the
// monitor report one episode through two cuts). The monitor is killed
// with SIGKILL after it reported some, episodes go on while it is down,
// and it restarts on its data directory: in the end it lists exactly 24
// violations, each episode once (distinct cuts, ids 1..24), the ones found
// again by its replay of the servers' retained candidates counted as
// duplicates and not reported.
func TestMonitorSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	kvAddrs, monAddr := addrs[:2], addrs[2]
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, []byte(xyMonitorSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	const eps = "2ms"
	for i := range kvAddrs {
		testproc.Start(t, testproc.Spec{
			Name: fmt.Sprintf("kv-%d", i), Path: bin, Ready: "weft kv serving",
			Args: []string{"kv", "serve", "--id", fmt.Sprint(i), "--peers", strings.Join(kvAddrs, ","), "--n", "2",
				"--data-dir", filepath.Join(dir, fmt.Sprint(i)), "--predicates", specPath, "--flush-every", "0s", "--epsilon", eps},
			LogPath: filepath.Join(dir, fmt.Sprintf("kv-%d.log", i)),
		})
	}
	mon := testproc.Start(t, testproc.Spec{
		Name: "monitor", Path: bin, Ready: "weft monitor watching",
		Args: []string{"monitor", "--spec", specPath, "--servers", strings.Join(kvAddrs, ","), "--addr", monAddr,
			"--epsilon", eps, "--poll-wait", "200ms", "--data-dir", filepath.Join(dir, "monitor")},
		LogPath: filepath.Join(dir, "monitor.log"),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := kvclient.Dial(ctx, kvAddrs, kvclient.Options{R: 2, W: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	write := func(k, v string) {
		t.Helper()
		if _, err := c.Write(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	episode := func() {
		write("x", "1")
		write("y", "1") // x = 1 ∧ y = 1: a violation
		write("x", "0")
		write("y", "0")
		time.Sleep(20 * time.Millisecond) // ≫ ε: episodes never overlap
	}
	waitViolations := func(n int) []kv.ViolationReport {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			vs, _, err := monitorView(ctx, monAddr)
			if err == nil && len(vs) >= n {
				return vs
			}
			if time.Now().After(deadline) {
				t.Fatalf("the monitor lists %d violations (%v), want at least %d", len(vs), err, n)
			}
		}
	}
	const episodes = 24
	for range 8 {
		episode()
	}
	before := waitViolations(8)
	if err := mon.Kill(); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		episode()
	}
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	for range episodes - 16 {
		episode()
	}
	vs := waitViolations(episodes)
	// Let the replay and the heartbeats settle: nothing more may come.
	time.Sleep(time.Second)
	vs, st, err := monitorView(ctx, monAddr)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != episodes {
		t.Fatalf("the restarted monitor lists %d violations, want exactly %d (one per episode): %s", len(vs), episodes, cutsOf(vs))
	}
	cuts := map[string]bool{}
	for i, v := range vs {
		if v.ID != uint64(i+1) || v.Predicate != "xy" || len(v.Cut) != 2 {
			t.Fatalf("violation %d: %+v", i, v)
		}
		var id strings.Builder
		for _, cj := range v.Cut {
			if cj.Values[0] != "1" {
				t.Fatalf("violation %d's cut holds %v, want x = 1 and y = 1", v.ID, cj.Values)
			}
			fmt.Fprintf(&id, "%d:%d ", cj.Server, cj.Seq)
		}
		if cuts[id.String()] {
			t.Fatalf("violation %d repeats the cut %s", v.ID, id.String())
		}
		cuts[id.String()] = true
	}
	for i, v := range before[:8] {
		if vs[i].Since != v.Since {
			t.Fatalf("violation %d changed across the restart: %+v, then %+v", v.ID, v, vs[i])
		}
	}
	if st.Duplicates < uint64(len(before)) {
		t.Fatalf("the replay found %d violations again, want at least the %d reported before the kill", st.Duplicates, len(before))
	}
	t.Logf("%d violations listed, %d before the kill; the restarted monitor's replay found %d again (not reported)", len(vs), len(before), st.Duplicates)
}

func cutsOf(vs []kv.ViolationReport) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "#%d:", v.ID)
		for _, cj := range v.Cut {
			fmt.Fprintf(&b, " s%d/%d", cj.Server, cj.Seq)
		}
		b.WriteString("; ")
	}
	return b.String()
}
