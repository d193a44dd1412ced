package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// TestGraphSpecCrossEdgesOnly (§VI-A): the local-mutual-exclusion
// predicate has one clause per edge between different clients' vertices,
// none for edges inside a client, each flag on its key's first replica.
func TestGraphSpecCrossEdgesOnly(t *testing.T) {
	g, err := RandomGraph(rand.New(rand.NewPCG(1, 2)), 40, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := kvcore.NewRing(3, 16)
	spec := g.Spec(ring)
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	total, cross := 0, 0
	for u, ns := range g.Adj {
		for _, v := range ns {
			if u < v {
				total++
				if g.Owner[u] != g.Owner[v] {
					cross++
				}
			}
		}
	}
	cl := spec.Predicates[0].Clauses
	if len(cl) != cross || cross == 0 || cross == total {
		t.Fatalf("%d clauses for %d cross edges of %d", len(cl), cross, total)
	}
	for _, c := range cl {
		for _, l := range c.Literals {
			if home := ring.Replicas(nil, l.Key, 1)[0]; l.Server != home {
				t.Fatalf("%s watched on %d, its first replica is %d", l.Key, l.Server, home)
			}
		}
	}
}

func TestSyntheticVarsHomedOnEachServer(t *testing.T) {
	ring, _ := kvcore.NewRing(5, 64)
	vars := SyntheticVars(ring)
	spec := SyntheticSpec(ring)
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, v := range vars {
		if ring.Replicas(nil, v, 1)[0] != i {
			t.Fatalf("var %s is not homed on server %d", v, i)
		}
	}
}

// cluster starts n in-process servers (N = n) monitoring spec with ε = 0
// (one machine, one clock: the skew bound is 0).
func cluster(t *testing.T, n int, spec func(*kvcore.Ring) *monitor.Spec) ([]string, *monitor.Spec) {
	t.Helper()
	ring, _ := kvcore.NewRing(n, kv.DefaultServerConfig().VNodes)
	sp := spec(ring)
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = l.Addr().String()
		l.Close()
	}
	dir := t.TempDir()
	for i := range n {
		cfg := kv.DefaultServerConfig()
		cfg.Peers, cfg.N = addrs, n
		cfg.Replica.Self, cfg.Replica.Dir, cfg.Replica.Sync, cfg.Replica.Epsilon = i, filepath.Join(dir, fmt.Sprint(i)), false, 0
		cfg.Spec, cfg.FlushEvery = sp, 20*time.Millisecond
		s, err := kv.NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop() })
	}
	return addrs, sp
}

func watch(t *testing.T, addrs []string, spec *monitor.Spec, rollback bool) *kv.Watcher {
	t.Helper()
	cfg := kv.DefaultWatcherConfig()
	cfg.Servers, cfg.Spec, cfg.Rollback, cfg.Monitor.Epsilon, cfg.PollWait = addrs, spec, rollback, 0, 100*time.Millisecond
	w, err := kv.NewWatcher(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// TestGraphSequentialKeepsMutualExclusion (§VI-B): with N = 3, R = 1,
// W = 3 (sequential) the clients' critical sections on neighbouring
// vertices never overlap, and the monitor (ε = 0 on one clock) reports
// nothing; every client makes progress.
func TestGraphSequentialKeepsMutualExclusion(t *testing.T) {
	g, err := RandomGraph(rand.New(rand.NewPCG(3, 4)), 12, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	addrs, spec := cluster(t, 3, g.Spec)
	w := watch(t, addrs, spec, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stats := make([]GraphStats, 3)
	errs := make([]error, 3)
	for i := range 3 {
		c, err := kvclient.Dial(ctx, addrs, kvclient.Options{R: 1, W: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = RunGraph(ctx, c, GraphConfig{Graph: g, Client: i, Updates: 25, Rand: rand.New(rand.NewPCG(uint64(i), 9))})
		}()
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil || stats[i].Updates != 25 {
			t.Fatalf("client %d: %+v %v", i, stats[i], errs[i])
		}
	}
	time.Sleep(200 * time.Millisecond) // let the last heartbeats through
	st := w.Stats()
	if st.Candidates[0]+st.Candidates[1]+st.Candidates[2] == 0 {
		t.Fatal("the monitor saw no candidates: nothing was checked")
	}
	if vs := w.Violations(); len(vs) != 0 {
		t.Fatalf("sequential consistency violated local mutual exclusion? %+v", vs[0])
	}
}

// TestSyntheticViolationDetectedAndRolledBack (§VI-A's conjunctive
// workload with β = 1): every variable becomes true, so ¬P holds; the
// watcher reports it and rolls back; afterwards the servers are in a new
// generation and the clients saw it.
func TestSyntheticViolationDetectedAndRolledBack(t *testing.T) {
	addrs, spec := cluster(t, 2, SyntheticSpec)
	w := watch(t, addrs, spec, true)
	ring, _ := kvcore.NewRing(2, kv.DefaultServerConfig().VNodes)
	vars := SyntheticVars(ring)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	clients := make([]*kvclient.Client, 2)
	for i := range 2 {
		c, err := kvclient.Dial(ctx, addrs, kvclient.Options{R: 1, W: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			RunSynthetic(ctx, c, SyntheticConfig{Vars: vars, Var: i, Beta: 1, PutFraction: 0.5, VarFraction: 1, Client: i, Ops: 50,
				Rand: rand.New(rand.NewPCG(uint64(i), 1))})
		}()
	}
	wg.Wait()
	// With β = 1 every state the clients left violates ¬P, and so may the
	// cut a rollback restores: the monitors, restarted on it, report the
	// violation again with its true (earlier) start and the next rollback
	// reaches further back. Rollbacks must stop once P holds.
	deadline := time.Now().Add(30 * time.Second)
	last, quiet := uint64(0), time.Now()
	for time.Since(quiet) < 500*time.Millisecond || last == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("rollbacks did not settle: %+v", w.Stats())
		}
		if n := w.Stats().Rollbacks; n != last {
			last, quiet = n, time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := w.Stats()
	if st.Violations == 0 || st.Rollbacks == 0 || st.RollbackFails != 0 {
		t.Fatalf("β = 1 must violate and roll back: %+v %+v", st, w.Rollbacks())
	}
	// P must hold where the monitors watch it: each variable on its home
	// replica. (A write a pause cut off may survive on another replica as
	// an in-flight write of the restored cut; read repair would bring it
	// home later, and the monitors would catch that as a new violation.)
	allTrue := true
	for i, v := range vars {
		resp, err := http.Post("http://"+addrs[i]+"/v1/kv/get", "application/json", strings.NewReader(`{"key": "`+v+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var g kvcore.GetResponse
		err = json.NewDecoder(resp.Body).Decode(&g)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		allTrue = allTrue && len(g.Siblings) > 0 && string(g.Siblings[len(g.Siblings)-1].Value) == "1"
	}
	if allTrue {
		t.Fatalf("the rollbacks settled on a state where ¬P still holds: %+v", w.Rollbacks())
	}
	if _, err := clients[0].Get(ctx, vars[0]); err != nil {
		t.Fatal(err)
	}
	if clients[0].Generation() != st.Gen || st.Gen == 0 {
		t.Fatalf("client generation %d, watcher's %d", clients[0].Generation(), st.Gen)
	}
}
