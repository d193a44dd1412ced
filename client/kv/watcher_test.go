package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ikv "github.com/weft-db/weft/internal/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

const xySpec = `{"servers": 2, "predicates": [{"name": "xy", "type": "conjunctive",
  "clauses": [{"vars": [{"server": 0, "key": "x", "value": 1}, {"server": 1, "key": "y", "value": 1}]}]}]}`

// monitoredCluster starts n in-process servers (N = n) whose detectors
// watch spec, with ε = eps and heartbeat flush.
func monitoredCluster(t *testing.T, n int, spec string, eps, flush time.Duration) ([]string, []*ikv.Server, *monitor.Spec) {
	addrs, servers, sp, _ := monitoredClusterCfg(t, n, spec, eps, flush)
	return addrs, servers, sp
}

func monitoredClusterCfg(t *testing.T, n int, spec string, eps, flush time.Duration) ([]string, []*ikv.Server, *monitor.Spec, []ikv.ServerConfig) {
	t.Helper()
	sp, err := monitor.ParseJSON([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
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
	servers := make([]*ikv.Server, n)
	cfgs := make([]ikv.ServerConfig, n)
	for i := range servers {
		cfg := ikv.DefaultServerConfig()
		cfg.Peers, cfg.N, cfg.R, cfg.W = addrs, n, 1, 1
		cfg.Replica.Self, cfg.Replica.Dir = i, filepath.Join(dir, fmt.Sprint(i))
		cfg.Replica.Epsilon = uint64(eps)
		cfg.Spec, cfg.FlushEvery = sp, flush
		s, err := ikv.NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		servers[i], cfgs[i] = s, cfg
		t.Cleanup(func() { s.Stop() })
	}
	return addrs, servers, sp, cfgs
}

// startRollbackWatcher starts a watcher that rolls back violations of
// spec on addrs (hc: its HTTP client, nil for the default); the test's
// cleanup stops it.
func startRollbackWatcher(t *testing.T, addrs []string, spec *monitor.Spec, eps time.Duration, hc *http.Client) *ikv.Watcher {
	t.Helper()
	wcfg := ikv.DefaultWatcherConfig()
	wcfg.Servers, wcfg.Spec, wcfg.Rollback = addrs, spec, true
	wcfg.Monitor.Epsilon, wcfg.PollWait = uint64(eps), 200*time.Millisecond
	wcfg.HTTPClient = hc
	w, err := ikv.NewWatcher(wcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// restartServer stops old and starts a server from cfg in its place (on
// the same address and data); the test's cleanup stops it. It does not
// call t.Fatal, so a transport may call it.
func restartServer(t *testing.T, old *ikv.Server, cfg ikv.ServerConfig) (*ikv.Server, error) {
	if err := old.Stop(); err != nil {
		return nil, err
	}
	s, err := ikv.NewServer(cfg, nil)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { s.Stop() })
	return s, nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func read(t *testing.T, c *Client, key string) string {
	t.Helper()
	g, err := c.Get(context.Background(), key, WithQuorum(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Siblings) == 0 {
		return ""
	}
	return string(g.Siblings[len(g.Siblings)-1].Value)
}

// TestWatcherDetectsAndRollsBack (§IV–V end to end): servers with
// detectors, a watcher with rollback. A client makes x@0=1 ∧ y@1=1 hold,
// then keeps writing; the watcher reports the violation with its cut and
// detection latency, pauses the servers, restores C(Since) everywhere and
// resumes. Afterwards P holds, the write that completed the violation and
// every later one are gone, an earlier write is still there, the client
// sees the new generation, and the store takes writes again.
func TestWatcherDetectsAndRollsBack(t *testing.T) {
	const eps = 5 * time.Millisecond
	addrs, _, spec := monitoredCluster(t, 2, xySpec, eps, 0)
	w := startRollbackWatcher(t, addrs, spec, eps, nil)

	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	put := func(key, val string) {
		t.Helper()
		if _, err := c.Write(ctx, key, []byte(val), WithQuorum(2, 2)); err != nil {
			t.Fatal(err)
		}
	}
	put("x", "0")
	put("y", "0")
	put("base", "kept")
	time.Sleep(10 * eps) // so "base" is more than ε before the violation
	put("x", "1")
	put("y", "1") // completes the violation
	put("after", "discarded")
	put("x", "2") // ends x=1's state: its candidate goes out
	// Likewise y=1's. Its first replica's write ends the state, so the
	// watcher may pause the servers before the second one answers: the
	// PUT then fails with ErrPaused (it is discarded either way).
	if _, err := c.Write(ctx, "y", []byte("2"), WithQuorum(2, 2)); err != nil && !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	waitFor(t, "a rollback", func() bool { return w.Stats().Rollbacks >= 1 })

	vs := w.Violations()
	if len(vs) != 1 || vs[0].Predicate != "xy" || len(vs[0].Cut) != 2 || vs[0].Rollback != 1 {
		t.Fatalf("violations: %+v", vs)
	}
	for _, cj := range vs[0].Cut {
		if cj.Values[0] != "1" {
			t.Errorf("witness cut holds %v, want x=1 and y=1", cj.Values)
		}
	}
	if vs[0].Completed == 0 || vs[0].LatencyNs == 0 || vs[0].DetectedAt < vs[0].Completed {
		t.Errorf("latency not measured: %+v", vs[0])
	}
	if x, y := read(t, c, "x"), read(t, c, "y"); x == "1" && y == "1" {
		t.Fatalf("P still violated after the rollback: x=%s y=%s", x, y)
	}
	if y := read(t, c, "y"); y != "0" {
		t.Errorf("y = %q: the PUT completing the violation survived", y)
	}
	if v := read(t, c, "after"); v != "" {
		t.Errorf("after = %q: a write after the violation survived", v)
	}
	if v := read(t, c, "base"); v != "kept" {
		t.Errorf("base = %q: a write before the violation was lost", v)
	}
	if g := c.Generation(); g != 1 {
		t.Errorf("client generation %d, want 1", g)
	}
	put("y", "3") // resumed
	rbs := w.Rollbacks()
	if len(rbs) != 1 || !rbs[0].OK || rbs[0].Gen != 1 || rbs[0].Undone[0]+rbs[0].Undone[1] < 4 {
		t.Fatalf("rollbacks: %+v", rbs)
	}
	// The HTTP face lists it, and /metrics counts it.
	srv := http.Server{Handler: w.Handler()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	for path, want := range map[string]string{
		"/v1/monitor/violations": `"predicate":"xy"`,
		"/metrics":               "weft_monitor_rollbacks_total 1",
	} {
		resp, err := http.Get("http://" + l.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("%s lacks %s:\n%s", path, want, body)
		}
	}
}

// TestPausedServerRefusesRequests: during a rollback's pause the servers
// answer PAUSED (retryable) and a client's PUT fails with ErrPaused; resume
// lifts it.
func TestPausedServerRefusesRequests(t *testing.T) {
	addrs, servers, _ := monitoredCluster(t, 2, xySpec, 5*time.Millisecond, 0)
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{RoundTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin := func(path string, gen uint64) {
		t.Helper()
		resp, err := http.Post("http://"+addrs[0]+path, "application/json", strings.NewReader(fmt.Sprintf(`{"gen": %d}`, gen)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d", path, resp.StatusCode)
		}
	}
	admin("/v1/kv/admin/pause", 1)
	_, err = c.Put(ctx, "k", []byte("v"), nil, WithQuorum(1, 2))
	if !errors.Is(err, ErrPaused) || !errors.Is(err, ErrQuorum) {
		t.Fatalf("PUT during a pause: %v", err)
	}
	if st := servers[0].Replica().Stats(); st.Applied != 0 {
		t.Fatalf("a paused server applied %d PUTs", st.Applied)
	}
	admin("/v1/kv/admin/resume", 1)
	if _, err := c.Put(ctx, "k", []byte("v"), nil, WithQuorum(1, 2)); err != nil {
		t.Fatalf("PUT after resume: %v", err)
	}
}

// TestWatcherFollowsServerRestart: a server restarts (new incarnation,
// its detector renumbered from 0 and loaded from the stored values); the
// watcher notices, resets its monitors instead of refusing the candidates
// as out of order, and still detects a violation made after the restart.
func TestWatcherFollowsServerRestart(t *testing.T) {
	const eps = 5 * time.Millisecond
	addrs, servers, spec, cfgs := monitoredClusterCfg(t, 2, xySpec, eps, 10*time.Millisecond)
	wcfg := ikv.DefaultWatcherConfig()
	wcfg.Servers, wcfg.Spec = addrs, spec
	wcfg.Monitor.Epsilon, wcfg.PollWait = uint64(eps), 100*time.Millisecond
	w, err := ikv.NewWatcher(wcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{RoundTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	put := func(key, val string) {
		t.Helper()
		if _, err := c.Write(ctx, key, []byte(val), WithQuorum(1, 2)); err != nil {
			t.Fatal(err)
		}
	}
	put("x", "0")
	put("y", "1") // y=1 is stored on server 1 before it restarts
	waitFor(t, "candidates from server 1", func() bool { return w.Stats().Candidates[1] > 0 })
	if _, err := restartServer(t, servers[1], cfgs[1]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restart to be seen", func() bool { return w.Stats().Restarts[1] == 1 })
	put("x", "1") // with y=1 loaded from the store: a violation
	waitFor(t, "the violation", func() bool { return w.Stats().Violations > 0 })
	if st := w.Stats(); st.StepErrors != 0 {
		t.Fatalf("candidates refused after the restart: %+v", st)
	}
}

// TestWatcherAdvisesSequentialQuorum (§IV): once violations are frequent
// (here: one) the watcher advises R=1, W=N; servers pass the advice on and
// a session with FollowAdvice switches to it.
func TestWatcherAdvisesSequentialQuorum(t *testing.T) {
	const eps = 5 * time.Millisecond
	addrs, _, spec := monitoredCluster(t, 2, xySpec, eps, 10*time.Millisecond)
	wcfg := ikv.DefaultWatcherConfig()
	wcfg.Servers, wcfg.Spec = addrs, spec
	wcfg.Monitor.Epsilon, wcfg.PollWait = uint64(eps), 100*time.Millisecond
	wcfg.AdviseAfter, wcfg.Advice = 1, kvcore.Advice{R: 1}
	w, err := ikv.NewWatcher(wcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	c, err := Dial(ctx, addrs, Options{R: 1, W: 1, FollowAdvice: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, kv := range [][2]string{{"x", "1"}, {"y", "1"}} {
		if _, err := c.Write(ctx, kv[0], []byte(kv[1]), WithQuorum(2, 2)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the advice", func() bool { return w.Stats().Advised })
	if _, err := c.Get(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if r, wq, ok := c.Advice(); !ok || r != 1 || wq != 2 {
		t.Fatalf("advice seen by the client: %d %d %v", r, wq, ok)
	}
	if q := c.Quorum(); q.R != 1 || q.W != 2 || !q.Sequential() {
		t.Fatalf("the session did not follow the advice: %+v", q)
	}
}

// failFirstRestore is the watcher's transport in
// TestWatcherRetriesFailedRestore: the first restore call to addr fails
// in the way mode says, every other call goes through.
type failFirstRestore struct {
	base    http.RoundTripper
	addr    string
	mode    string // "request": never sent; "answer": applied, answer lost; "restart": the server restarts instead
	restart func() error
	mu      sync.Mutex
	failed  bool
}

func (f *failFirstRestore) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	fail := !f.failed && r.URL.Host == f.addr && r.URL.Path == "/v1/kv/admin/restore"
	f.failed = f.failed || fail
	f.mu.Unlock()
	if !fail {
		return f.base.RoundTrip(r)
	}
	switch f.mode {
	case "answer":
		resp, err := f.base.RoundTrip(r)
		if err == nil {
			resp.Body.Close()
		}
	case "restart":
		if err := f.restart(); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("injected: restore call lost")
}

// TestWatcherRetriesFailedRestore: a restore that fails on one server (its
// request lost, its answer lost, or the server restarted between the pause
// and the restore, losing its pause) is redone, so the rollback completes
// with every replica at the cut instead of leaving some restored and
// others not.
func TestWatcherRetriesFailedRestore(t *testing.T) {
	for _, mode := range []string{"request", "answer", "restart"} {
		t.Run(mode, func(t *testing.T) {
			const eps = 5 * time.Millisecond
			addrs, servers, spec, cfgs := monitoredClusterCfg(t, 2, xySpec, eps, 0)
			tr := &failFirstRestore{base: &http.Transport{}, addr: addrs[1], mode: mode}
			// straddle is a write server 0 applied before the cut and
			// server 1 applies only after its restart, unpaused, before
			// the watcher pauses it again: it must survive there too.
			var straddle kvcore.PutRequest
			tr.restart = func() error {
				if _, err := restartServer(t, servers[1], cfgs[1]); err != nil {
					return err
				}
				post := func(path string, body any) (int, error) {
					b, _ := json.Marshal(body)
					resp, err := http.Post("http://"+addrs[1]+path, "application/json", bytes.NewReader(b))
					if err != nil {
						return 0, err
					}
					resp.Body.Close()
					return resp.StatusCode, nil
				}
				// It stored its pause, so it comes back paused.
				if code, err := post("/v1/kv/put", straddle); err != nil || code == http.StatusOK {
					return fmt.Errorf("restarted server took a PUT during the rollback (status %d, %v)", code, err)
				}
				// Its pause expires (here: lifted by hand) before the
				// watcher retries, and it applies the straddling write.
				if code, err := post("/v1/kv/admin/resume", kvcore.PauseRequest{Gen: 1}); err != nil || code != http.StatusOK {
					return fmt.Errorf("resume: status %d, %v", code, err)
				}
				if code, err := post("/v1/kv/put", straddle); err != nil || code != http.StatusOK {
					return fmt.Errorf("late PUT of the straddling write: status %d, %v", code, err)
				}
				return nil
			}
			w := startRollbackWatcher(t, addrs, spec, eps, &http.Client{Transport: tr})
			ctx := context.Background()
			c, err := Dial(ctx, addrs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			put := func(key, val string) {
				t.Helper()
				if _, err := c.Write(ctx, key, []byte(val), WithQuorum(2, 2)); err != nil && !errors.Is(err, ErrPaused) {
					t.Fatal(err)
				}
			}
			put("x", "0")
			put("y", "0")
			put("base", "kept")
			ring, err := kvcore.NewRing(2, c.Meta().VNodes)
			if err != nil {
				t.Fatal(err)
			}
			skey := "s0"
			for k := 1; ring.Replicas(nil, skey, 1)[0] != 0; k++ {
				skey = fmt.Sprintf("s%d", k)
			}
			one, err := Dial(ctx, addrs, Options{W: 1, Preferred: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer one.Close()
			if _, err := one.Write(ctx, skey, []byte("straddles")); err != nil {
				t.Fatal(err)
			}
			sibs, err := c.GetReplica(ctx, 0, skey)
			if err != nil || len(sibs) != 1 {
				t.Fatalf("server 0 holds %v (%v), want the write", sibs, err)
			}
			if on1, err := c.GetReplica(ctx, 1, skey); err != nil || len(on1) != 0 {
				t.Fatalf("server 1 holds %v (%v), want nothing yet", on1, err)
			}
			straddle = kvcore.PutRequest{Key: skey, Sibling: sibs[0]}
			time.Sleep(10 * eps)
			put("x", "1")
			put("y", "1") // completes the violation
			put("after", "discarded")
			put("x", "2")
			put("y", "2")
			waitFor(t, "a rollback", func() bool { return len(w.Rollbacks()) >= 1 })
			rb := w.Rollbacks()[0]
			if !rb.OK || rb.Retries < 1 || !tr.failed {
				t.Fatalf("rollback %+v (restore failed once: %v), want it completed after a retry", rb, tr.failed)
			}
			for i := range addrs {
				for key, want := range map[string]string{"y": "0", "after": "", "base": "kept"} {
					sibs, err := c.GetReplica(ctx, i, key)
					if err != nil {
						t.Fatal(err)
					}
					got := ""
					if len(sibs) == 1 {
						got = string(sibs[0].Value)
					}
					if len(sibs) > 1 || got != want {
						t.Errorf("server %d holds %s = %q (%d siblings), want %q: not at the cut", i, key, got, len(sibs), want)
					}
				}
			}
			if mode == "restart" {
				for i := range addrs {
					if got, err := c.GetReplica(ctx, i, skey); err != nil || len(got) != 1 || string(got[0].Value) != "straddles" {
						t.Errorf("server %d holds %s = %v (%v), want the write that took effect before the cut", i, skey, got, err)
					}
				}
			}
			put("y", "3") // resumed everywhere
			if g := read(t, c, "y"); g != "3" {
				t.Fatalf("y = %q after the resume, want 3", g)
			}
		})
	}
}

// TestPauseSurvivesRestart: a server restarted between a rollback's pause
// and its resume comes back paused (the pause is stored), so it does not
// serve the state the rollback is discarding; a resume, or the pause's
// expiry, clears the stored pause for later restarts.
func TestPauseSurvivesRestart(t *testing.T) {
	addrs, servers, _, cfgs := monitoredClusterCfg(t, 2, xySpec, 5*time.Millisecond, 0)
	ctx := context.Background()
	admin := func(path, body string) {
		t.Helper()
		resp, err := http.Post("http://"+addrs[0]+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d", path, resp.StatusCode)
		}
	}
	cur := servers[0]
	restart := func() {
		t.Helper()
		s, err := restartServer(t, cur, cfgs[0])
		if err != nil {
			t.Fatal(err)
		}
		cur = s
	}
	c, err := Dial(ctx, addrs, Options{RoundTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	paused := func() bool {
		t.Helper()
		st, err := c.ServerStats(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return st.Paused
	}
	admin("/v1/kv/admin/pause", `{"gen": 1}`)
	restart()
	if !paused() {
		t.Fatal("a server restarted during a pause serves requests")
	}
	if _, err := c.Put(ctx, "k", []byte("v"), nil, WithQuorum(1, 2)); !errors.Is(err, ErrPaused) {
		t.Fatalf("PUT to the restarted paused server: %v", err)
	}
	admin("/v1/kv/admin/resume", `{"gen": 1}`)
	restart()
	if paused() {
		t.Fatal("paused again after a resume and a restart")
	}
	admin("/v1/kv/admin/pause", `{"gen": 1, "timeout_ms": 50}`)
	waitFor(t, "the pause to expire", func() bool { return !paused() })
	restart()
	if paused() {
		t.Fatal("paused again after the pause expired and a restart")
	}
	if _, err := c.Put(ctx, "k", []byte("v"), nil, WithQuorum(1, 2)); err != nil {
		t.Fatalf("PUT after the expiry: %v", err)
	}
}
