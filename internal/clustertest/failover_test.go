package clustertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/testproc"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/wire/clusterpb"
	"github.com/weft-db/weft/internal/wire/coordclient"
	coordpb "github.com/weft-db/weft/internal/wire/coordpb"
)

// upCluster is a cluster started by `weft cluster up`.
type upCluster struct {
	t     *testing.T
	bin   string
	dir   string
	procs map[string]upProc // by name
	coord *coordclient.Client
}

type upProc = launch.Proc

// gatekeeperHTTP is the HTTP API address of a gatekeeper process started by
// up.
func (u *upCluster) gatekeeperHTTP(t *testing.T) string {
	t.Helper()
	for _, p := range u.procs {
		if p.Role == "gatekeeper" && p.HTTPAddr != "" {
			return p.HTTPAddr
		}
	}
	t.Fatal("no gatekeeper with an HTTP API")
	return ""
}

// getJSON GETs path from a Weft HTTP API and decodes the 200 answer.
func getJSON(ctx context.Context, addr, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func clusterUp(t *testing.T, args ...string) *upCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	pgtest.Shared(t) // skips where PostgreSQL cannot be had, as the launcher would fail
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := filepath.Join(t.TempDir(), "c")
	u := &upCluster{t: t, bin: bin, dir: dir}
	// Registered first: a failing up leaves what it started recorded in
	// the state file, and down stops it.
	t.Cleanup(func() {
		if t.Failed() {
			u.dumpLogs()
		}
		_, _ = exec.Command(bin, "cluster", "down", "--dir", dir).CombinedOutput()
	})
	out, err := exec.Command(bin, append([]string{"cluster", "up", "--dir", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("weft cluster up: %v\n%s", err, out)
	}
	st, err := launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	u.procs = map[string]upProc{}
	var coordAddrs []string
	for _, p := range st.Procs {
		u.procs[p.Name] = *p
		if p.Role == "coord" {
			coordAddrs = append(coordAddrs, p.Addr)
		}
	}
	if u.coord, err = coordclient.NewClient(coordAddrs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.coord.Close() })
	return u
}

func (u *upCluster) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(u.dir, "logs", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		u.t.Logf("%s (tail):\n%s", l, b)
	}
}

// status is the coordinator leader's view.
func (u *upCluster) status(ctx context.Context) *coordpb.StatusResponse {
	u.t.Helper()
	st, err := u.coord.LeaderStatus(ctx)
	if err != nil {
		u.t.Fatal(err)
	}
	return st
}

// holder names the process holding role's slot.
func (u *upCluster) holder(ctx context.Context, role coordpb.Role, slot int32) upProc {
	u.t.Helper()
	st := u.status(ctx)
	var id uint64
	for _, s := range st.GetSlots() {
		if s.GetRole() == role && s.GetIndex() == slot {
			id = s.GetHolder()
		}
	}
	for _, m := range st.GetMembers() {
		if m.GetId() == id && id != 0 {
			p, ok := u.procs[m.GetName()]
			if !ok {
				u.t.Fatalf("member %d (%s) holds %v/%d but is not in cluster.json", id, m.GetName(), role, slot)
			}
			return p
		}
	}
	u.t.Fatalf("%v slot %d has no holder: %v", role, slot, st.GetSlots())
	return upProc{}
}

// gatekeepers returns the API addresses of the gatekeepers holding slots
// (none when the coordinator does not answer).
func (u *upCluster) gatekeepers(ctx context.Context) []string {
	st, err := u.coord.LeaderStatus(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range st.GetConfig().GetGatekeepers() {
		if e.GetApiAddress() != "" {
			out = append(out, e.GetApiAddress())
		}
	}
	return out
}

// serving waits until the configuration is active, every slot held, and
// every gatekeeper in it answers.
func (u *upCluster) serving(ctx context.Context) error {
	for {
		err := func() error {
			st, err := u.coord.LeaderStatus(ctx)
			if err != nil {
				return err
			}
			conf := st.GetConfig()
			if conf.GetActiveEpoch() != conf.GetEpoch() {
				return fmt.Errorf("epoch %d not active", conf.GetEpoch())
			}
			for _, e := range append(conf.GetGatekeepers(), conf.GetShards()...) {
				if e.GetMember() == 0 {
					return errors.New("a slot is vacant")
				}
			}
			for _, a := range u.gatekeepers(ctx) {
				c, err := weft.Dial(a, weft.Options{CallTimeout: time.Second})
				if err != nil {
					return err
				}
				_, err = c.Status(ctx)
				c.Close()
				if err != nil {
					return err
				}
			}
			return nil
		}()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not serving: %w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A shard and then a gatekeeper are killed with SIGKILL while clients keep
// incrementing counters through every gatekeeper: the coordinator promotes
// the backups, every process moves to the new epoch (the shards rebuilding
// from the store), and afterwards every acknowledged increment is counted
// exactly once (increments whose outcome the client could not learn may or
// may not be).
func TestClusterFailoverKillShardAndGatekeeper(t *testing.T) {
	u := clusterUp(t, "--gatekeepers", "2", "--shards", "2", "--kronos-replicas", "1", "--coord-replicas", "1",
		"--backup-gatekeepers", "1", "--backup-shards", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	first := u.gatekeepers(ctx)
	if len(first) != 2 {
		t.Fatalf("gatekeepers in the configuration: %v", first)
	}
	const counters = 4
	createCounters(ctx, t, first[0], counters)
	inc := u.increments(ctx, 4, counters)
	u.killAndRecover(ctx, coordpb.Role_SHARD, &inc.ok)
	u.killAndRecover(ctx, coordpb.Role_GATEKEEPER, &inc.ok)
	time.Sleep(200 * time.Millisecond)
	inc.stop()
	inc.check(ctx)
}

// createCounters creates counters c0…c<n-1> at 0 through the gatekeeper
// at addr.
func createCounters(ctx context.Context, t *testing.T, addr string, n int) {
	t.Helper()
	c, err := weft.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		for k := range n {
			tx.CreateVertex(fmt.Sprintf("c%d", k))
			tx.SetVertexProp(weft.Handle(fmt.Sprintf("c%d", k)), "n", int64(0))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// incrementers are clients incrementing counters c0…c<n-1> through every
// gatekeeper in the configuration, counting the acknowledged increments
// and those of unknown outcome per counter.
type incrementers struct {
	u              *upCluster
	acked, unknown []atomic.Int64
	ok             atomic.Int64 // increments acknowledged
	stopCh         chan struct{}
	wg             sync.WaitGroup
}

// increments starts workers incrementing counters c0…c<counters-1>.
func (u *upCluster) increments(ctx context.Context, workers, counters int) *incrementers {
	in := &incrementers{u: u, acked: make([]atomic.Int64, counters), unknown: make([]atomic.Int64, counters),
		stopCh: make(chan struct{})}
	for w := range workers {
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-in.stopCh:
					return
				case <-ctx.Done():
					return
				default:
				}
				addrs := u.gatekeepers(ctx)
				if len(addrs) == 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				cl, err := weft.Dial(addrs[(w+i)%len(addrs)], weft.Options{CallTimeout: 2 * time.Second, Attempts: 3})
				if err != nil {
					continue
				}
				k := (w + i) % counters
				outcome := increment(ctx, cl, fmt.Sprintf("c%d", k))
				cl.Close()
				switch outcome {
				case committed:
					in.acked[k].Add(1)
					in.ok.Add(1)
				case maybe:
					in.unknown[k].Add(1)
				}
			}
		}()
	}
	return in
}

func (in *incrementers) stop() {
	close(in.stopCh)
	in.wg.Wait()
}

// check reads every counter through every gatekeeper: each holds every
// acknowledged increment once, and at most the ones of unknown outcome
// besides.
func (in *incrementers) check(ctx context.Context) {
	t := in.u.t
	t.Helper()
	counters := len(in.acked)

	addrs := in.u.gatekeepers(ctx)
	for i, a := range addrs {
		cl, err := weft.Dial(a)
		if err != nil {
			t.Fatal(err)
		}
		for k := range counters {
			var got struct {
				Props map[string]int64 `json:"props"`
			}
			if err := cl.Run(ctx, "read_node_props", map[string]any{"node": fmt.Sprintf("c%d", k), "keys": []string{"n"}}, &got); err != nil {
				t.Fatal(err)
			}
			n, lo, hi := got.Props["n"], in.acked[k].Load(), in.acked[k].Load()+in.unknown[k].Load()
			if n < lo || n > hi {
				t.Fatalf("counter c%d read through gatekeeper %d: %d, want between %d acknowledged and %d (with %d of unknown outcome)",
					k, i, n, lo, hi, in.unknown[k].Load())
			}
		}
		cl.Close()
	}
	var a, un int64
	for k := range counters {
		a += in.acked[k].Load()
		un += in.unknown[k].Load()
	}
	t.Logf("%d increments acknowledged, %d of unknown outcome, every acknowledged one counted once", a, un)
}

// killAndRecover kills with SIGKILL the process holding role's slot 0,
// once ok (successful client operations) has passed 20, and returns how
// long until the cluster serves again and ok grows by 5 more.
func (u *upCluster) killAndRecover(ctx context.Context, role coordpb.Role, ok *atomic.Int64) time.Duration {
	t := u.t
	t.Helper()
	for ok.Load() < 20 {
		if ctx.Err() != nil {
			t.Fatalf("fewer than 20 operations succeeded before the kill of %v slot 0", role)
		}
		time.Sleep(10 * time.Millisecond)
	}
	victim := u.holder(ctx, role, 0)
	before := ok.Load()
	t0 := time.Now()
	if err := syscall.Kill(victim.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", victim.Name, err)
	}
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	if err := u.serving(sctx); err != nil {
		t.Fatalf("after kill -9 of %s: %v", victim.Name, err)
	}
	for ok.Load() <= before+5 {
		if ctx.Err() != nil {
			t.Fatalf("no operation succeeded after kill -9 of %s", victim.Name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	d := time.Since(t0)
	if now := u.holder(ctx, role, 0); now.Name == victim.Name {
		t.Fatalf("%v slot 0 still held by the killed %s", role, victim.Name)
	}
	t.Logf("kill -9 %s (%v slot 0): serving again and operations succeeding after %v", victim.Name, role, d.Round(time.Millisecond))
	return d
}

type outcome int

const (
	notApplied outcome = iota
	committed
	maybe // the commit's answer was lost: it may or may not have been applied
)

// increment reads counter h and writes it plus one in one transaction.
func increment(ctx context.Context, cl *weft.Client, h string) outcome {
	tx, err := cl.Begin(ctx)
	if err != nil {
		return notApplied
	}
	v, err := tx.GetVertex(ctx, weft.Handle(h))
	if err != nil {
		return notApplied
	}
	n, _ := v.Props["n"].(int64)
	tx.SetVertexProp(weft.Handle(h), "n", n+1)
	if _, err = tx.Commit(ctx); err == nil {
		return committed
	}
	if weft.IsRetryable(err) { // aborted or refused: nothing was applied
		return notApplied
	}
	return maybe
}

// `weft cluster add --role shard` under increments: the new shard process
// takes a new slot, every shard rebuilds under the new count, the new one
// holds its share of the vertices, and every acknowledged increment is
// counted once.
func TestClusterAddShard(t *testing.T) {
	u := clusterUp(t, "--gatekeepers", "2", "--shards", "2", "--kronos-replicas", "1", "--coord-replicas", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	addrs := u.gatekeepers(ctx)
	cl, err := weft.Dial(addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const vertices, counters = 60, 3
	if err := cl.Update(ctx, func(tx *weft.Tx) error {
		for i := range vertices {
			tx.CreateVertex(fmt.Sprintf("v%d", i))
		}
		for k := range counters {
			tx.CreateVertex(fmt.Sprintf("c%d", k))
			tx.SetVertexProp(weft.Handle(fmt.Sprintf("c%d", k)), "n", int64(0))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var acked, unknown [counters]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := weft.Dial(addrs[w], weft.Options{CallTimeout: 2 * time.Second})
			if err != nil {
				return
			}
			defer c.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				k := (w + i) % counters
				switch increment(ctx, c, fmt.Sprintf("c%d", k)) {
				case committed:
					acked[k].Add(1)
				case maybe:
					unknown[k].Add(1)
				default:
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	out, err := exec.Command(u.bin, "cluster", "add", "--dir", u.dir, "--role", "shard").CombinedOutput()
	if err != nil {
		t.Fatalf("weft cluster add: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	conf := u.status(ctx).GetConfig()
	if len(conf.GetShards()) != 3 {
		t.Fatalf("shard slots after the add: %d, want 3", len(conf.GetShards()))
	}
	// Every vertex is readable, each on the shard its handle hashes to now.
	for i := range vertices {
		var got *struct {
			Handle string `json:"handle"`
		}
		if err := cl.Run(ctx, "get_node", map[string]any{"node": fmt.Sprintf("v%d", i)}, &got); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Handle != fmt.Sprintf("v%d", i) {
			t.Fatalf("v%d lost by the move to 3 shards", i)
		}
	}
	st, err := cl.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Shards != 3 || st.Vertices != vertices+counters {
		t.Fatalf("status after the add: %d shards, %d vertices; want 3 and %d", st.Shards, st.Vertices, vertices+counters)
	}
	// The new shard started empty and received its share of the slots by
	// online moves (the rebalance of cluster add): it holds the vertices of
	// those slots, and no vertex is on two shards (the status counts each
	// shard's partition).
	if !strings.Contains(string(out), "rebalanced: ") {
		t.Fatalf("cluster add did not rebalance:\n%s", out)
	}
	conn, err := grpc.NewClient(conf.GetShards()[2].GetAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ss, err := clusterpb.NewShardClient(conn).Status(ctx, &clusterpb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var place struct {
		Slots []int `json:"slots"`
		Moved []struct {
			Unit  string `json:"unit"`
			Shard uint32 `json:"shard"`
		} `json:"moved"`
	}
	if err := getJSON(ctx, u.gatekeeperHTTP(t), "/v1/placement", &place); err != nil {
		t.Fatal(err)
	}
	onNew := map[string]bool{}
	for _, m := range place.Moved {
		if m.Shard == 2 {
			onNew[m.Unit] = true
		}
	}
	if len(place.Slots) != 3 || place.Slots[2] < 2*txn.SlotsPerShard/3 || len(onNew) != place.Slots[2] {
		t.Fatalf("placement after the add: %+v", place)
	}
	want := 0
	for i := range vertices + counters {
		name := fmt.Sprintf("v%d", i)
		if i >= vertices {
			name = fmt.Sprintf("c%d", i-vertices)
		}
		if onNew[txn.UnitOf(name, 2).String()] {
			want++
		}
	}
	if int(ss.GetVertices()) != want || want == 0 {
		t.Fatalf("the new shard holds %d vertices, want the %d of the slots moved to it", ss.GetVertices(), want)
	}
	for k := range counters {
		var got struct {
			Props map[string]int64 `json:"props"`
		}
		if err := cl.Run(ctx, "read_node_props", map[string]any{"node": fmt.Sprintf("c%d", k), "keys": []string{"n"}}, &got); err != nil {
			t.Fatal(err)
		}
		n, lo, hi := got.Props["n"], acked[k].Load(), acked[k].Load()+unknown[k].Load()
		if n < lo || n > hi {
			t.Fatalf("counter c%d: %d, want between %d acknowledged and %d", k, n, lo, hi)
		}
	}
	t.Logf("the new shard holds %d of %d vertices", want, vertices+counters)
	if acked[0].Load()+acked[1].Load()+acked[2].Load() == 0 {
		t.Fatal("no increment succeeded")
	}
}
