package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/testproc"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// cluster is the processes of one cluster and the gatekeepers' API addresses.
type cluster struct {
	procs []*testproc.Proc
	api   []string
}

func startCluster(t *testing.T, gatekeepers, shards int) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	pg := pgtest.Shared(t)
	schema := pgtest.Schema(t)
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(1 + shards + 2*gatekeepers)
	if err != nil {
		t.Fatal(err)
	}
	kronosAddr, shardAddrs := addrs[0], addrs[1:1+shards]
	gkAddrs, apiAddrs := addrs[1+shards:1+shards+gatekeepers], addrs[1+shards+gatekeepers:]
	dir := t.TempDir()
	c := &cluster{api: apiAddrs}
	start := func(name, ready string, args ...string) {
		p := testproc.Start(t, testproc.Spec{Name: name, Path: bin, Ready: ready, Args: args,
			LogPath: filepath.Join(dir, name+".log")})
		c.procs = append(c.procs, p)
	}
	start("kronos", "kronos replica", "kronos", "--id", "1", "--addr", kronosAddr, "--data-dir", filepath.Join(dir, "kronos"), "--sync=false")
	common := []string{"--epoch", "1", "--gatekeepers", fmt.Sprint(gatekeepers), "--shards", fmt.Sprint(shards),
		"--gatekeeper-addrs", strings.Join(gkAddrs, ","), "--shard-addrs", strings.Join(shardAddrs, ","),
		"--kronos", kronosAddr, "--postgres-url", pg.URL(), "--postgres-schema", schema}
	for i := range shards {
		start(fmt.Sprintf("shard%d", i), " serving on ",
			append([]string{"shard", "--id", fmt.Sprint(i), "--listen", shardAddrs[i]}, common...)...)
	}
	// Gatekeepers wait for their peers' clocks before answering, so they
	// start together.
	var wg sync.WaitGroup
	procs := make([]*testproc.Proc, gatekeepers)
	for i := range gatekeepers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i] = testproc.Start(t, testproc.Spec{Name: fmt.Sprintf("gatekeeper%d", i), Path: bin,
				Ready: fmt.Sprintf("gatekeeper %d serving on", i), LogPath: filepath.Join(dir, fmt.Sprintf("gatekeeper%d.log", i)),
				Args: append([]string{"gatekeeper", "--id", fmt.Sprint(i), "--listen", gkAddrs[i], "--grpc-addr", apiAddrs[i],
					"--http-addr", ""}, common...)})
		}()
	}
	wg.Wait()
	c.procs = append(c.procs, procs...)
	return c
}

// Counters incremented concurrently through every gatekeeper process: each
// acknowledged increment is counted exactly once, and a read through any
// gatekeeper after all of them sees every one.
func TestClusterProcessesCount(t *testing.T) {
	c := startCluster(t, 2, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var clients []*weft.Client
	for _, a := range c.api {
		cl, err := weft.Dial(a)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		clients = append(clients, cl)
	}
	const counters = 4
	if err := clients[0].Update(ctx, func(tx *weft.Tx) error {
		for k := range counters {
			tx.CreateVertex(fmt.Sprintf("c%d", k))
			tx.SetVertexProp(weft.Handle(fmt.Sprintf("c%d", k)), "n", int64(0))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var acked [counters]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[w%len(clients)]
			for i := range 25 {
				k := (w + i) % counters
				h := fmt.Sprintf("c%d", k)
				err := cl.Update(ctx, func(tx *weft.Tx) error {
					v, err := tx.GetVertex(ctx, weft.Handle(h))
					if err != nil {
						return err
					}
					n, _ := v.Props["n"].(int64)
					tx.SetVertexProp(weft.Handle(h), "n", n+1)
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("increment of %s through gatekeeper %d: %w", h, w%len(clients), err)
					return
				}
				acked[k].Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, cl := range clients {
		for k := range counters {
			var got struct {
				Props map[string]int64 `json:"props"`
			}
			if err := cl.Run(ctx, "read_node_props", map[string]any{"node": fmt.Sprintf("c%d", k), "keys": []string{"n"}}, &got); err != nil {
				t.Fatal(err)
			}
			if got.Props["n"] != acked[k].Load() {
				t.Fatalf("counter c%d read through gatekeeper %d: %d, want %d acknowledged increments", k, i, got.Props["n"], acked[k].Load())
			}
		}
	}
	t.Logf("200 increments through 2 gatekeeper processes, 2 shard processes, Kronos and PostgreSQL: all counted once")
}

// `weft cluster up` starts every role as a process (PostgreSQL through
// `weft postgres`, Kronos, coordinator, shards, gatekeepers); a client writes
// through one gatekeeper and reads through the other; `weft cluster down`
// stops them.
func TestClusterUpRunsEveryRole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	pgtest.Shared(t) // skips where PostgreSQL cannot be had, as the launcher would fail
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := filepath.Join(t.TempDir(), "c")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
			t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// Registered first: a failing up leaves what it started recorded in
	// the state file, and down stops it.
	t.Cleanup(func() { _, _ = exec.Command(bin, "cluster", "down", "--dir", dir).CombinedOutput() })
	out := run("cluster", "up", "--dir", dir, "--gatekeepers", "2", "--shards", "2", "--kronos-replicas", "1", "--coord-replicas", "1")
	if strings.Contains(out, "not started") {
		t.Fatalf("roles left out:\n%s", out)
	}
	st, err := launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var api []string
	for _, p := range st.Procs {
		if p.Role == "gatekeeper" {
			api = append(api, p.Addr)
		}
	}
	if len(api) != 2 {
		t.Fatalf("gatekeepers in the state file: %v", st.Procs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := weft.Dial(api[0])
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := weft.Dial(api[1])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := w.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex("alice")
		tx.CreateVertex("bob")
		tx.CreateEdge(weft.Handle("alice"), "knows", weft.Handle("bob"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Reachable bool `json:"reachable"`
	}
	if err := r.Run(ctx, "reachability", map[string]any{"src": "alice", "dest": "bob"}, &got); err != nil || !got.Reachable {
		t.Fatalf("reachability through the other gatekeeper: %+v %v", got, err)
	}
	down := run("cluster", "down", "--dir", dir)
	t.Logf("up:\n%s\ndown:\n%s", out, down)
}
