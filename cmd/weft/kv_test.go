package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/testproc"
)

// kvSpec makes every server's detector watch "lock" (semilinear: each PUT
// of a relevant key ends a state that goes out as a candidate).
const kvSpec = `{"servers": 3, "predicates": [{"name": "two-holders", "type": "semilinear", "clauses": [
  {"vars": [{"server": 0, "key": "lock", "value": "a"}, {"server": 1, "key": "lock", "value": "b"}]}]}]}`

// TestKVThreeServersQuorumAndKill runs three real `weft kv serve` processes
// on loopback (N=3): quorum PUTs and GETs with R=W=2; one server killed with
// SIGKILL, after which R=W=2 still works and R=3 fails with QUORUM; the
// killed server restarted on its data directory still holds what it
// acknowledged; the CLI's put and get; the detector's candidates; and a
// clean stop of every process.
func TestKVThreeServersQuorumAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, []byte(kvSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	procs := make([]*testproc.Proc, 3)
	for i := range procs {
		procs[i] = testproc.Start(t, testproc.Spec{
			Name: fmt.Sprintf("kv-%d", i), Path: bin, Ready: "weft kv serving",
			Args: []string{"kv", "serve", "--id", fmt.Sprint(i), "--peers", strings.Join(addrs, ","),
				"--data-dir", filepath.Join(dir, fmt.Sprint(i)), "--predicates", specPath, "--flush-every", "100ms"},
			LogPath: filepath.Join(dir, fmt.Sprintf("kv-%d.log", i)),
		})
	}
	start := time.Now()
	defer func() { t.Logf("cluster part took %v", time.Since(start)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := kvclient.Options{R: 2, W: 2, RoundTimeout: 300 * time.Millisecond}

	// All up: 20 keys written and read back with R=W=2.
	c := dialKV(ctx, t, addrs, opts)
	writeKeys(ctx, t, c, 0, 20)
	readKeys(ctx, t, c, 0, 20)
	for _, v := range []string{"a", "free", "a"} {
		if _, err := c.Write(ctx, "lock", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close() // waits until the third replica of every PUT answered too

	// Server 2 killed: R=W=2 still works, R=3 cannot.
	if err := procs[2].Kill(); err != nil {
		t.Fatal(err)
	}
	c = dialKV(ctx, t, addrs, opts)
	writeKeys(ctx, t, c, 20, 40)
	readKeys(ctx, t, c, 0, 40)
	if _, err := c.Get(ctx, "key-0", kvclient.WithQuorum(3, 0)); !errors.Is(err, kvclient.ErrQuorum) {
		t.Fatalf("R=3 with a server down: %v, want ErrQuorum", err)
	}
	c.Close()

	// Restarted on its directory, server 2 has every key it acknowledged.
	if err := procs[2].Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		var out kvcore.GetResponse
		postJSON(t, addrs[2], "/v1/kv/get", kvcore.GetRequest{Key: fmt.Sprintf("key-%d", i)}, &out)
		if len(out.Siblings) != 1 || string(out.Siblings[0].Value) != fmt.Sprintf("value-%d", i) {
			t.Fatalf("server 2 after kill -9 and restart: key-%d = %v", i, out.Siblings)
		}
	}
	c = dialKV(ctx, t, addrs, opts)
	readKeys(ctx, t, c, 0, 40, kvclient.WithQuorum(3, 0)) // R=3 again
	// The detector on server 0 saw the lock's PUTs.
	// Heartbeats (every 100 ms) cut states too, so equal neighbours merge;
	// the last state reaches the buffer at the next heartbeat.
	want := []string{"", "a", "free", "a"}
	var values []string
	var cands kvclient.CandidatesResponse
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cands, err = c.Candidates(ctx, 0, 0, 4096); err != nil {
			t.Fatal(err)
		}
		values = values[:0]
		for _, cd := range cands.Candidates {
			if cd.Name != "two-holders" || cd.Server != 0 || cd.End == nil || len(cd.Keys) != 1 || cd.Keys[0] != "lock" {
				t.Fatalf("bad candidate %+v", cd)
			}
			if v := cd.Values[0]; len(values) == 0 || values[len(values)-1] != v {
				values = append(values, v)
			}
		}
		if slices.Equal(values, want) {
			break
		}
		t.Logf("candidates so far: %q", values)
	}
	if !slices.Equal(values, want) || cands.Missed != 0 {
		t.Fatalf("server 0's candidates went through lock states %q (missed %d), want %q", values, cands.Missed, want)
	}
	var stats json.RawMessage
	getJSON(t, addrs[0], "/v1/kv/stats", &stats)
	t.Logf("server 0's detector: %d candidates; stats %s", len(cands.Candidates), stats)
	c.Close()

	// The CLI: put (read, then supersede), get with R=3.
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"kv"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("weft kv %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	servers := "--servers=" + addrs[1]
	cli("put", servers, "--w", "3", "greeting", "hello")
	cli("put", servers, "greeting", "hello again")
	if out := cli("get", servers, "--r", "3", "greeting"); !strings.HasPrefix(out, "hello again\t") || strings.Count(out, "\n") != 1 {
		t.Fatalf("weft kv get: %q, want the one value \"hello again\"", out)
	}

	for _, p := range procs {
		if err := p.Stop(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if p.Running() {
			t.Fatalf("%s still running after Stop", p.Name())
		}
	}
}

func dialKV(ctx context.Context, t *testing.T, addrs []string, opts kvclient.Options) *kvclient.Client {
	t.Helper()
	c, err := kvclient.Dial(ctx, addrs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Meta(); m.N != 3 || len(m.Peers) != 3 || !m.Monitoring {
		t.Fatalf("meta %+v", m)
	}
	return c
}

func writeKeys(ctx context.Context, t *testing.T, c *kvclient.Client, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := c.Write(ctx, fmt.Sprintf("key-%d", i), fmt.Appendf(nil, "value-%d", i)); err != nil {
			t.Fatalf("write key-%d: %v", i, err)
		}
	}
}

func readKeys(ctx context.Context, t *testing.T, c *kvclient.Client, from, to int, opts ...kvclient.ReqOption) {
	t.Helper()
	for i := from; i < to; i++ {
		g, err := c.Get(ctx, fmt.Sprintf("key-%d", i), opts...)
		if err != nil {
			t.Fatalf("get key-%d: %v", i, err)
		}
		if len(g.Siblings) != 1 || string(g.Siblings[0].Value) != fmt.Sprintf("value-%d", i) {
			t.Fatalf("get key-%d = %v", i, g.Siblings)
		}
	}
}

func getJSON(t *testing.T, addr, path string, out any) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func postJSON(t *testing.T, addr, path string, in, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	resp, err := http.Post("http://"+addr+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s%s: HTTP %d", addr, path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
