package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/wire/coordpb"
	"github.com/weft-db/weft/internal/wire/kronospb"
)

func init() { subcommands = append(subcommands, newClusterCmd) }

// clusterStateFile is the launcher's record in --dir: every process it
// started, with pid and addresses, read by status and down.
const clusterStateFile = "cluster.json"

type clusterOpts struct {
	dir                                string
	gatekeepers, shards, kronos, coord int
	// backupGatekeepers and backupShards are extra processes that register
	// and wait; the coordinator promotes one when a slot holder fails.
	backupGatekeepers, backupShards int
	readyTimeout, stopTimeout       time.Duration
	// noRebalance: cluster add --role shard leaves the new shard empty.
	noRebalance bool
	// postgresURL is the store gatekeepers and shards share; epoch the
	// configuration epoch they are started in (larger on every up).
	postgresURL, postgresSchema string
	epoch                       uint64
	// dgraph gives every gatekeeper Dgraph's HTTP and gRPC APIs (weft
	// gatekeeper --dgraph-http/--dgraph-grpc) on addresses of their own;
	// dgraphPlacement is the Dgraph data's placement when first created.
	dgraph          bool
	dgraphPlacement string
}

// clusterProc is one launched process, as recorded in the state file.
type clusterProc struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	Index    int    `json:"index"`
	Pid      int    `json:"pid"`
	Addr     string `json:"addr"`
	HTTPAddr string `json:"http_addr,omitempty"`
	// PeerAddr is a gatekeeper's cluster-protocol address (Addr is its
	// Weft gRPC API, HTTPAddr its HTTP/JSON API).
	PeerAddr string `json:"peer_addr,omitempty"`
	// DgraphHTTPAddr and DgraphGRPCAddr are a gatekeeper's Dgraph APIs
	// (cluster up --dgraph).
	DgraphHTTPAddr string   `json:"dgraph_http_addr,omitempty"`
	DgraphGRPCAddr string   `json:"dgraph_grpc_addr,omitempty"`
	DataDir        string   `json:"data_dir"`
	Log            string   `json:"log"`
	Args           []string `json:"args"`
}

type clusterState struct {
	Binary  string    `json:"binary"`
	Started time.Time `json:"started"`
	// Epoch is the clock epoch base the gatekeepers and shards were given.
	Epoch uint64 `json:"epoch,omitempty"`
	// Dgraph and DgraphPlacement are up's --dgraph and --dgraph-placement
	// (cluster add gives a new gatekeeper the same).
	Dgraph          bool           `json:"dgraph,omitempty"`
	DgraphPlacement string         `json:"dgraph_placement,omitempty"`
	Stopped         bool           `json:"stopped"`
	Procs           []*clusterProc `json:"procs"`
	NotStarted      []string       `json:"not_started,omitempty"`
}

// launchRole is one row of the launcher's table: adding a role (when
// `weft gatekeeper` and `weft shard` exist) is adding a row.
type launchRole struct {
	name  string
	count func(o *clusterOpts) int
	// args builds instance i's command line; group holds every instance of
	// the role (addresses assigned), st the processes started before it.
	args func(o *clusterOpts, i int, group []*clusterProc, st *clusterState) []string
	// http reports whether the role serves health and metrics on its own port.
	http bool
	// peer reports whether the role also has a cluster-protocol address.
	peer bool
	// missing, if set, says why the role has no process yet: it is not started.
	missing string
}

// launchRoles in start order: the replicated services first, then the roles
// that register with the coordinator.
var launchRoles = []launchRole{
	{name: "kronos", count: func(o *clusterOpts) int { return o.kronos }, http: true,
		args: func(o *clusterOpts, i int, g []*clusterProc, st *clusterState) []string {
			return []string{"kronos", "--id", fmt.Sprint(i + 1), "--addr", g[i].Addr, "--peers", peerList(g),
				"--data-dir", g[i].DataDir, "--coord", coordAddrs(st), "--http-addr", g[i].HTTPAddr}
		}},
	{name: "coord", count: func(o *clusterOpts) int { return o.coord }, http: true,
		args: func(o *clusterOpts, i int, g []*clusterProc, _ *clusterState) []string {
			return []string{"coord", "--id", fmt.Sprint(i + 1), "--addr", g[i].Addr, "--http-addr", g[i].HTTPAddr,
				"--peers", peerList(g), "--data-dir", g[i].DataDir,
				"--gatekeepers", fmt.Sprint(o.gatekeepers), "--shards", fmt.Sprint(o.shards)}
		}},
	// The store gatekeepers and shards share, when no --postgres-url names
	// one.
	{name: "postgres", count: func(o *clusterOpts) int {
		if o.postgresURL == "" && o.gatekeepers+o.shards > 0 {
			return 1
		}
		return 0
	},
		args: func(o *clusterOpts, i int, g []*clusterProc, _ *clusterState) []string {
			_, port, _ := net.SplitHostPort(g[i].Addr)
			return []string{"postgres", "--dir", g[i].DataDir, "--port", port}
		}},
	// Shards before gatekeepers: a gatekeeper opens its FIFO streams to
	// every shard when it starts.
	// Gatekeepers and shards register with the coordinator, which gives
	// them their slots (the first to register; the rest wait as backups).
	{name: "shard", count: func(o *clusterOpts) int { return o.shards + o.backupShards }, http: true,
		args: func(o *clusterOpts, i int, g []*clusterProc, st *clusterState) []string {
			return append([]string{"shard", "--name", g[i].Name, "--listen", g[i].Addr, "--http-addr", g[i].HTTPAddr},
				roleArgs(o, st)...)
		}},
	{name: "gatekeeper", count: func(o *clusterOpts) int { return o.gatekeepers + o.backupGatekeepers }, http: true, peer: true,
		args: func(o *clusterOpts, i int, g []*clusterProc, st *clusterState) []string {
			args := []string{"gatekeeper", "--name", g[i].Name, "--listen", g[i].PeerAddr,
				"--grpc-addr", g[i].Addr, "--http-addr", g[i].HTTPAddr}
			if o.dgraph {
				args = append(args, "--dgraph-http", g[i].DgraphHTTPAddr, "--dgraph-grpc", g[i].DgraphGRPCAddr)
				if o.dgraphPlacement != "" {
					args = append(args, "--dgraph-placement", o.dgraphPlacement)
				}
			}
			return append(args, roleArgs(o, st)...)
		}},
}

// roleArgs are the flags every gatekeeper and shard process of the cluster
// shares; st holds every process planned (addresses assigned).
func roleArgs(o *clusterOpts, st *clusterState) []string {
	addrs := func(role string) string {
		var out []string
		for _, p := range procsOf(st, role) {
			out = append(out, p.Addr)
		}
		return strings.Join(out, ",")
	}
	url := o.postgresURL
	if pg := procsOf(st, "postgres"); url == "" && len(pg) == 1 {
		url = fmt.Sprintf("postgres://weft@%s/postgres?sslmode=disable", pg[0].Addr)
	}
	args := []string{"--epoch", fmt.Sprint(o.epoch), "--coord", addrs("coord"), "--kronos", addrs("kronos"), "--postgres-url", url}
	if o.postgresSchema != "" {
		args = append(args, "--postgres-schema", o.postgresSchema)
	}
	return args
}

func coordAddrs(st *clusterState) string {
	var out []string
	for _, p := range procsOf(st, "coord") {
		out = append(out, p.Addr)
	}
	return strings.Join(out, ",")
}

func peerList(g []*clusterProc) string {
	var ps []string
	for i, p := range g {
		ps = append(ps, fmt.Sprintf("%d=%s", i+1, p.Addr))
	}
	return strings.Join(ps, ",")
}

func newClusterCmd() *cobra.Command {
	o := &clusterOpts{}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Start, inspect and stop a local cluster of separate processes on loopback",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.dir, "dir", "weft-cluster", "directory for data, logs and the state file "+clusterStateFile)
	up := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster (Kronos and coordinator replicas; gatekeepers and shards once they exist as processes)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return clusterUp(cmd.Context(), cmd.OutOrStdout(), o) },
	}
	f := up.Flags()
	f.IntVar(&o.gatekeepers, "gatekeepers", 2, "gatekeeper slots")
	f.IntVar(&o.shards, "shards", 4, "shard slots")
	f.IntVar(&o.kronos, "kronos", 3, "Kronos replicas (1, 3 or 5)")
	f.IntVar(&o.coord, "coord", 3, "coordinator replicas (1, 3 or 5)")
	f.IntVar(&o.backupGatekeepers, "backup-gatekeepers", 0, "extra gatekeeper processes that wait as backups")
	f.IntVar(&o.backupShards, "backup-shards", 0, "extra shard processes that wait as backups")
	f.DurationVar(&o.readyTimeout, "ready-timeout", 30*time.Second, "wait this long for every process to serve")
	f.StringVar(&o.postgresURL, "postgres-url", "", "PostgreSQL the gatekeepers and shards share (empty: up starts one, `weft postgres`, in DIR/postgres-1)")
	f.StringVar(&o.postgresSchema, "postgres-schema", "", "schema of the shared store (default: the store's)")
	f.BoolVar(&o.dgraph, "dgraph", false, "every gatekeeper also serves Dgraph's HTTP and gRPC APIs (weft gatekeeper --dgraph-http/--dgraph-grpc) on ports of its own, listed by up and status")
	f.StringVar(&o.dgraphPlacement, "dgraph-placement", "", `with --dgraph: the Dgraph data's placement when first created, "vertex" or "predicate" (weft serve --dgraph-placement)`)
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the cluster's processes, members, slots and epochs",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return clusterStatus(cmd.Context(), cmd.OutOrStdout(), o) },
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster: SIGTERM, then SIGKILL after --timeout",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return clusterDown(cmd.OutOrStdout(), o) },
	}
	down.Flags().DurationVar(&o.stopTimeout, "timeout", 10*time.Second, "wait this long after SIGTERM before SIGKILL")
	var addRole string
	add := &cobra.Command{
		Use:   "add",
		Short: "Grow a running cluster by one shard or gatekeeper: start its process, then add its slot (a new epoch)",
		Long: `Start one more shard (or gatekeeper) process, wait until it registers with the
coordinator as a backup, then add a slot for it: the coordinator gives it the
slot in a new configuration epoch, every shard rebuilds its partition from the
store, and the cluster serves again once the epoch is active (clients see
retryable errors during the switch). A new shard starts empty: then its share
of the placement slots moves to it online, one move transaction per slot,
while transactions and programs go on (weft rebalance; docs/operations.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clusterAdd(cmd.Context(), cmd.OutOrStdout(), o, addRole)
		},
	}
	add.Flags().StringVar(&addRole, "role", "shard", "shard or gatekeeper")
	add.Flags().BoolVar(&o.noRebalance, "no-rebalance", false, "with --role shard: leave the new shard empty (weft rebalance moves slots to it later)")
	add.Flags().DurationVar(&o.readyTimeout, "ready-timeout", 60*time.Second, "wait this long for the process and the new epoch")
	cmd.AddCommand(up, status, down, add)
	return cmd
}

func readClusterState(dir string) (*clusterState, error) {
	b, err := os.ReadFile(filepath.Join(dir, clusterStateFile))
	if err != nil {
		return nil, err
	}
	st := &clusterState{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, clusterStateFile), err)
	}
	return st, nil
}

func writeClusterState(dir string, st *clusterState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, clusterStateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, clusterStateFile))
}

func clusterUp(ctx context.Context, out io.Writer, o *clusterOpts) error {
	for _, n := range []int{o.kronos, o.coord} {
		if n < 1 || n > 7 {
			return fmt.Errorf("replica counts must be in [1, 7], got %d", n)
		}
	}
	if o.gatekeepers < 0 || o.shards < 0 || o.backupGatekeepers < 0 || o.backupShards < 0 {
		return errors.New("slot and backup counts must not be negative")
	}
	if (o.gatekeepers == 0) != (o.shards == 0) {
		return errors.New("a cluster has both gatekeepers and shards, or neither")
	}
	if o.dgraphPlacement != "" && !o.dgraph {
		return errors.New("--dgraph-placement needs --dgraph")
	}
	if err := dgraph.CheckPlacement(o.dgraphPlacement); err != nil {
		return fmt.Errorf("--dgraph-placement: %w", err)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	unlock, err := lockClusterDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	var prev *clusterState
	if old, err := readClusterState(dir); err == nil {
		for _, p := range old.Procs {
			if procAlive(p) {
				return fmt.Errorf("a cluster is already running in %s (%s pid %d): run `weft cluster down --dir %s` first", dir, p.Name, p.Pid, o.dir)
			}
		}
		prev = old // restart on the same data, with the same addresses
	}
	// A replica group remembers its members: restarting its data with
	// another count would leave it without a quorum.
	for _, r := range launchRoles {
		n := 0
		for fileExists(filepath.Join(dir, fmt.Sprintf("%s-%d", r.name, n+1))) {
			n++
		}
		if n > 0 && r.missing == "" && n != r.count(o) {
			return fmt.Errorf("%s holds the data of %d %s replicas (their raft group remembers them): "+
				"restart with --%s %d, or use a new --dir", dir, n, r.name, r.name, n)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.epoch = uint64(time.Now().Unix()) // larger on every up: stamps of a new run follow the old
	st := &clusterState{Binary: self, Started: time.Now().UTC(), Epoch: o.epoch, Dgraph: o.dgraph, DgraphPlacement: o.dgraphPlacement}
	// Every group's addresses are planned first: shards are told the
	// gatekeepers' addresses before those start.
	planned := map[string][]*clusterProc{}
	used := map[string]bool{} // every address planned, so no two processes get one port
	if prev != nil {
		for _, q := range prev.Procs {
			used[q.Addr], used[q.PeerAddr], used[q.HTTPAddr] = true, true, true
			used[q.DgraphHTTPAddr], used[q.DgraphGRPCAddr] = true, true
		}
	}
	for _, r := range launchRoles {
		if n := r.count(o); n > 0 {
			if planned[r.name], err = planGroup(dir, r, n, prev, used); err != nil {
				return err
			}
		}
	}
	if o.dgraph {
		if err := planDgraph(planned["gatekeeper"], prev, used); err != nil {
			return err
		}
	}
	plannedState := &clusterState{}
	for _, r := range launchRoles {
		plannedState.Procs = append(plannedState.Procs, planned[r.name]...)
	}
	for _, r := range launchRoles {
		n := r.count(o)
		if n == 0 {
			continue
		}
		if r.missing != "" {
			st.NotStarted = append(st.NotStarted, fmt.Sprintf("%d %s: %s", n, r.name, r.missing))
			continue
		}
		group := planned[r.name]
		for i, p := range group {
			p.Args = r.args(o, i, group, plannedState)
			if err := startProc(self, p); err != nil {
				_ = writeClusterState(dir, st)
				return err
			}
			st.Procs = append(st.Procs, p)
			if err := writeClusterState(dir, st); err != nil {
				return err
			}
		}
		// A group serves before the next starts: shards need the store,
		// gatekeepers the shards.
		for _, p := range group {
			if err := waitServing(p, o.readyTimeout); err != nil {
				return fmt.Errorf("%w (the processes started are in %s; `weft cluster down --dir %s` stops them)", err, filepath.Join(dir, clusterStateFile), o.dir)
			}
		}
	}
	for _, p := range st.Procs {
		if err := waitServing(p, o.readyTimeout); err != nil {
			return fmt.Errorf("%w (the processes started are in %s; `weft cluster down --dir %s` stops them)", err, filepath.Join(dir, clusterStateFile), o.dir)
		}
	}
	if err := waitLeaders(ctx, st, o.readyTimeout); err != nil {
		return err
	}
	if o.gatekeepers > 0 {
		if err := waitActive(ctx, st, 0, o.readyTimeout); err != nil {
			return fmt.Errorf("%w (the processes started are in %s; `weft cluster down --dir %s` stops them)", err, filepath.Join(dir, clusterStateFile), o.dir)
		}
	}
	if o.dgraph && o.gatekeepers > 0 {
		if err := waitDgraph(procsOf(st, "gatekeeper"), o.gatekeepers, o.readyTimeout); err != nil {
			return fmt.Errorf("%w (the processes started are in %s; `weft cluster down --dir %s` stops them)", err, filepath.Join(dir, clusterStateFile), o.dir)
		}
	}
	fmt.Fprintf(out, "cluster up in %s\n", dir)
	for _, p := range st.Procs {
		fmt.Fprintf(out, "  %-8s pid %-7d %s %s\n", p.Name, p.Pid, p.Addr, p.HTTPAddr)
	}
	for _, p := range st.Procs {
		if p.DgraphHTTPAddr != "" {
			fmt.Fprintf(out, "  %-8s Dgraph HTTP http://%s  Dgraph gRPC %s\n", p.Name, p.DgraphHTTPAddr, p.DgraphGRPCAddr)
		}
	}
	for _, s := range st.NotStarted {
		fmt.Fprintf(out, "  not started: %s\n", s)
	}
	return nil
}

// lockClusterDir takes the directory's launcher lock: one up or add at a
// time per directory (two would share data dirs and ports).
func lockClusterDir(dir string) (unlock func(), err error) {
	lock, err := os.OpenFile(filepath.Join(dir, "cluster.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("another `weft cluster up` or `add` is running in %s: %w", dir, err)
	}
	return func() { lock.Close() }, nil
}

// clusterAdd starts one more process of role and gives it a new slot.
func clusterAdd(ctx context.Context, out io.Writer, o *clusterOpts, role string) error {
	var r *launchRole
	for i := range launchRoles {
		if launchRoles[i].name == role && (role == "shard" || role == "gatekeeper") {
			r = &launchRoles[i]
		}
	}
	if r == nil {
		return fmt.Errorf("cluster add: role %q: want shard or gatekeeper", role)
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	unlock, err := lockClusterDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readClusterState(dir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", o.dir, err)
	}
	if st.Stopped || st.Epoch == 0 {
		return fmt.Errorf("the cluster in %s is stopped (or was started by an older weft): `weft cluster up` first", o.dir)
	}
	o.epoch, o.dgraph, o.dgraphPlacement = st.Epoch, st.Dgraph, st.DgraphPlacement
	existing := procsOf(st, role)
	n := len(existing)
	used := map[string]bool{}
	for _, q := range st.Procs {
		used[q.Addr], used[q.PeerAddr], used[q.HTTPAddr] = true, true, true
		used[q.DgraphHTTPAddr], used[q.DgraphGRPCAddr] = true, true
	}
	group, err := planGroup(dir, *r, n+1, nil, used)
	if err != nil {
		return err
	}
	p := group[n]
	if o.dgraph && role == "gatekeeper" {
		if err := planDgraph(group[n:], nil, used); err != nil {
			return err
		}
	}
	p.Index = n
	for _, q := range existing { // planGroup gave the new one fresh addresses; keep the names unique
		if q.Name == p.Name {
			return fmt.Errorf("cluster add: %s exists", p.Name)
		}
	}
	group = append(existing, p)
	p.Args = r.args(o, n, group, st)
	if err := startProc(st.Binary, p); err != nil {
		return err
	}
	st.Procs = append(st.Procs, p)
	if err := writeClusterState(dir, st); err != nil {
		return err
	}
	if err := waitServing(p, o.readyTimeout); err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.readyTimeout)
	defer cancel()
	c, err := coord.NewClient(splitAddrs(coordAddrs(st)))
	if err != nil {
		return err
	}
	defer c.Close()
	rr, _ := coord.ParseRole(role)
	slots := int32(0)
	for {
		cs, err := c.LeaderStatus(ctx)
		if err != nil {
			return fmt.Errorf("cluster add: the coordinator: %w", err)
		}
		registered := false
		for _, m := range cs.GetMembers() {
			registered = registered || (m.GetName() == p.Name && m.GetLive())
		}
		if registered {
			slots = 0
			for _, s := range cs.GetSlots() {
				if s.GetRole() == rr {
					slots++
				}
			}
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster add: %s did not register with the coordinator: %w", p.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	resp, err := c.AddSlot(ctx, &coordpb.AddSlotRequest{Role: rr, Count: slots + 1})
	if err != nil {
		return fmt.Errorf("cluster add: adding the slot: %w", err)
	}
	t0 := time.Now()
	if err := waitActive(ctx, st, resp.GetConfig().GetEpoch(), o.readyTimeout); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s added (pid %d, %s): %d %s slots in epoch %d; serving again after %v\n", p.Name, p.Pid, p.Addr,
		slots+1, role, resp.GetConfig().GetEpoch(), time.Since(t0).Round(time.Millisecond))
	if role != "shard" || o.noRebalance {
		return nil
	}
	// The new shard starts empty (the placement base is pinned): move its
	// share of slots to it online.
	for _, q := range st.Procs {
		if q.Role == "gatekeeper" && q.HTTPAddr != "" {
			_, err := rebalance(parent, out, terminal(os.Stderr), q.HTTPAddr)
			return err
		}
	}
	return errors.New("cluster add: no gatekeeper with an HTTP API to rebalance through (weft rebalance --http ADDR)")
}

// planGroup assigns each instance its name, addresses and directories,
// reusing those of a stopped cluster in the same directory.
func planGroup(dir string, r launchRole, n int, prev *clusterState, used map[string]bool) ([]*clusterProc, error) {
	group := make([]*clusterProc, n)
	for i := range group {
		name := fmt.Sprintf("%s-%d", r.name, i+1)
		p := &clusterProc{Name: name, Role: r.name, Index: i, DataDir: filepath.Join(dir, name),
			Log: filepath.Join(dir, "logs", name+".log")}
		if prev != nil {
			for _, q := range prev.Procs {
				if q.Name == name {
					p.Addr, p.HTTPAddr, p.PeerAddr = q.Addr, q.HTTPAddr, q.PeerAddr
				}
			}
		}
		var err error
		if p.Addr == "" {
			if p.Addr, err = freeAddrNot(used); err != nil {
				return nil, err
			}
		}
		if r.peer && p.PeerAddr == "" {
			if p.PeerAddr, err = freeAddrNot(used); err != nil {
				return nil, err
			}
		}
		if r.http && p.HTTPAddr == "" {
			if p.HTTPAddr, err = freeAddrNot(used); err != nil {
				return nil, err
			}
		}
		group[i] = p
	}
	return group, nil
}

// planDgraph gives each gatekeeper of group its Dgraph HTTP and gRPC
// addresses, reusing those of a stopped cluster in the same directory.
func planDgraph(group []*clusterProc, prev *clusterState, used map[string]bool) error {
	for _, p := range group {
		if prev != nil {
			for _, q := range prev.Procs {
				if q.Name == p.Name {
					p.DgraphHTTPAddr, p.DgraphGRPCAddr = q.DgraphHTTPAddr, q.DgraphGRPCAddr
				}
			}
		}
		for _, a := range []*string{&p.DgraphHTTPAddr, &p.DgraphGRPCAddr} {
			if *a != "" {
				continue
			}
			var err error
			if *a, err = freeAddrNot(used); err != nil {
				return err
			}
		}
	}
	return nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// freeAddrNot returns a loopback address for a process to bind, not in
// used (the addresses planned so far), and adds it to used.
func freeAddrNot(used map[string]bool) (string, error) {
	a, err := launch.FreeAddrs(1, used)
	if err != nil {
		return "", err
	}
	return a[0], nil
}

// startProc starts p detached (its own process group, outliving `up`),
// output appended to its log.
func startProc(self string, p *clusterProc) error {
	if err := os.MkdirAll(filepath.Dir(p.Log), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== weft cluster: start %s: %s %s\n", p.Name, self, strings.Join(p.Args, " "))
	cmd := exec.Command(self, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.Pid = cmd.Process.Pid
	return cmd.Process.Release()
}

// waitServing waits for p's "serving on" log line.
func waitServing(p *clusterProc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !procAlive(p) {
			return fmt.Errorf("%s (pid %d) exited; its log %s ends:\n%s", p.Name, p.Pid, p.Log, logTail(p.Log, 15))
		}
		if f, err := os.Open(p.Log); err == nil {
			sc := bufio.NewScanner(f)
			found := false
			for sc.Scan() {
				if strings.Contains(sc.Text(), " serving on ") {
					found = true
				}
			}
			f.Close()
			if found {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s (pid %d) not serving after %v; its log %s ends:\n%s", p.Name, p.Pid, timeout, p.Log, logTail(p.Log, 15))
}

// dgraphReady is the line a gatekeeper logs once its Dgraph face serves
// (cmd/weft/dgraph.go, describe).
const dgraphReady = "Dgraph HTTP API on"

// waitDgraph waits until n of the gatekeepers (the slot holders; backups
// serve Dgraph only once promoted) log that their Dgraph face serves.
func waitDgraph(gks []*clusterProc, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready := 0
		for _, p := range gks {
			if b, err := os.ReadFile(p.Log); err == nil && strings.Contains(string(b), dgraphReady) {
				ready++
			}
		}
		if ready >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d gatekeepers serve Dgraph's API after %v (see their logs in %s)", ready, n, timeout, filepath.Dir(gks[0].Log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitLeaders waits until the coordinator and Kronos groups have leaders.
func waitLeaders(ctx context.Context, st *clusterState, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cs, _ := coordStatus(ctx, st)
		ks := kronosStatus(ctx, st)
		ok := (cs != nil || len(procsOf(st, "coord")) == 0) && (len(ks) == 0 || kronosLeader(ks) != 0)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the coordinator or Kronos group elected no leader within %v", timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitActive waits until the coordinator's configuration, of epoch at least
// minEpoch, is active with every slot held, and every gatekeeper in it
// answers a status call (which reaches every shard; a gatekeeper that left
// the old epoch answers only once it serves the new one).
func waitActive(ctx context.Context, st *clusterState, minEpoch uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	why := "no answer"
	for {
		if err := clusterServes(ctx, st, minEpoch); err == nil {
			return nil
		} else {
			why = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster did not serve within %v: %s", timeout, why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func clusterServes(ctx context.Context, st *clusterState, minEpoch uint64) error {
	cs, err := coordStatus(ctx, st)
	if err != nil {
		return err
	}
	conf := cs.GetConfig()
	if conf.GetEpoch() < minEpoch {
		return fmt.Errorf("epoch %d not posted yet (the coordinator shows %d)", minEpoch, conf.GetEpoch())
	}
	if conf.GetActiveEpoch() != conf.GetEpoch() {
		return fmt.Errorf("epoch %d not active yet (active %d)", conf.GetEpoch(), conf.GetActiveEpoch())
	}
	for _, e := range append(append([]*coordpb.Endpoint{}, conf.GetGatekeepers()...), conf.GetShards()...) {
		if e.GetMember() == 0 {
			return fmt.Errorf("slot %d vacant", e.GetSlot())
		}
	}
	for _, e := range conf.GetGatekeepers() {
		c, err := weft.Dial(e.GetApiAddress(), weft.Options{CallTimeout: time.Second})
		if err != nil {
			return err
		}
		_, err = c.Status(ctx)
		c.Close()
		if err != nil {
			return fmt.Errorf("gatekeeper %d at %s: %w", e.GetSlot(), e.GetApiAddress(), err)
		}
	}
	return nil
}

func procsOf(st *clusterState, role string) []*clusterProc {
	var out []*clusterProc
	for _, p := range st.Procs {
		if p.Role == role {
			out = append(out, p)
		}
	}
	return out
}

// procAlive reports whether p's pid is still the process the launcher
// started (the pid may have been reused: its command line must name p's
// data directory).
func procAlive(p *clusterProc) bool {
	if p.Pid <= 0 || syscall.Kill(p.Pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) // no /proc (not Linux): trust kill(0)
	}
	if strings.Contains(string(b), "\x00<defunct>") {
		return false
	}
	// The pid is ours if the process runs the arguments we started it with
	// (pids are reused).
	return strings.Contains(string(b), strings.Join(p.Args, "\x00"))
}

func coordStatus(ctx context.Context, st *clusterState) (*coordpbStatus, error) {
	var addrs []string
	for _, p := range procsOf(st, "coord") {
		addrs = append(addrs, p.Addr)
	}
	if len(addrs) == 0 {
		return nil, errors.New("no coordinator replicas")
	}
	c, err := coord.NewClient(addrs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.AttemptTimeout = 500 * time.Millisecond
	s, err := c.LeaderStatus(ctx)
	if err != nil || !s.IsLeader {
		return nil, fmt.Errorf("no serving coordinator leader (%v)", err)
	}
	return s, nil
}

func kronosStatus(ctx context.Context, st *clusterState) map[string]*kronospb.StatsResponse {
	out := map[string]*kronospb.StatsResponse{}
	for _, p := range procsOf(st, "kronos") {
		conn, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		s, err := kronospb.NewKronosClient(conn).Stats(cctx, &kronospb.StatsRequest{})
		cancel()
		conn.Close()
		if err == nil {
			out[p.Name] = s
		}
	}
	return out
}

func kronosLeader(ks map[string]*kronospb.StatsResponse) uint64 {
	for _, s := range ks {
		if s.IsLeader {
			return s.NodeId
		}
	}
	return 0
}

func clusterStatus(ctx context.Context, out io.Writer, o *clusterOpts) error {
	st, err := readClusterState(o.dir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", o.dir, err)
	}
	ks := kronosStatus(ctx, st)
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROCESS\tPID\tSTATE\tADDR\tHTTP\tRAFT")
	for _, p := range st.Procs {
		state := "down"
		if procAlive(p) {
			state = "up"
		}
		raft := ""
		if s, ok := ks[p.Name]; ok {
			raft = fmt.Sprintf("leader %d term %d applied %d", s.LeaderId, s.Term, s.AppliedIndex)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", p.Name, p.Pid, state, p.Addr, p.HTTPAddr, raft)
	}
	w.Flush()
	for _, s := range st.NotStarted {
		fmt.Fprintf(out, "not started: %s\n", s)
	}
	for _, p := range st.Procs {
		if p.DgraphHTTPAddr != "" {
			fmt.Fprintf(out, "%s: Dgraph HTTP http://%s, Dgraph gRPC %s (served once it holds a slot)\n", p.Name, p.DgraphHTTPAddr, p.DgraphGRPCAddr)
		}
	}
	if len(procsOf(st, "coord")) == 0 {
		return nil
	}
	cs, err := coordStatus(ctx, st)
	if err != nil {
		fmt.Fprintf(out, "\ncoordinator: %v\n", err)
		return nil
	}
	printCoordStatus(out, cs)
	for _, p := range procsOf(st, "coord") {
		if p.Index == int(cs.NodeId)-1 {
			fmt.Fprintf(out, "status page: http://%s/status\n", p.HTTPAddr)
		}
	}
	return nil
}

type coordpbStatus = coordpb.StatusResponse

func printCoordStatus(out io.Writer, cs *coordpbStatus) {
	v := coord.StatusView{StatusResponse: cs}
	fmt.Fprintf(out, "\ncoordinator: leader %d term %d applied %d; epoch %d, active epoch %d\n",
		cs.LeaderId, cs.Term, cs.AppliedIndex, cs.Config.GetEpoch(), cs.Config.GetActiveEpoch())
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SLOT\tMEMBER\tADDRESS\tSINCE EPOCH")
	for _, s := range cs.Slots {
		m := "vacant"
		if s.Holder != 0 {
			m = fmt.Sprint(s.Holder)
		}
		fmt.Fprintf(w, "%s/%d\t%s\t%s\t%d\n", v.Role(s.Role), s.Index, m, v.Address(s.Holder), s.SinceEpoch)
	}
	w.Flush()
	w = tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nMEMBER\tNAME\tROLE\tSTATE\tADDRESS\tACKED\tFAILED\tLAST HEARTBEAT\tLOAD")
	for _, m := range cs.Members {
		failed := ""
		if !m.Live {
			failed = fmt.Sprint(m.FailedEpoch)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Id, m.Name, v.Role(m.Role), v.State(m), m.Address,
			m.AckedEpoch, failed, v.HeartbeatAge(m.Id), v.Load(m.Id))
	}
	w.Flush()
}

func clusterDown(out io.Writer, o *clusterOpts) error {
	st, err := readClusterState(o.dir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", o.dir, err)
	}
	var running []*clusterProc
	for _, p := range st.Procs {
		if procAlive(p) {
			// The negative pid names its process group (Setpgid at start).
			if err := syscall.Kill(-p.Pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("stop %s (pid %d): %w", p.Name, p.Pid, err)
			}
			running = append(running, p)
		}
	}
	deadline := time.Now().Add(o.stopTimeout)
	for len(running) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		running = stillAlive(running)
	}
	for _, p := range running {
		fmt.Fprintf(out, "%s (pid %d) ignored SIGTERM for %v: SIGKILL\n", p.Name, p.Pid, o.stopTimeout)
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
	for end := time.Now().Add(5 * time.Second); len(running) > 0 && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
		running = stillAlive(running)
	}
	if len(running) > 0 {
		return fmt.Errorf("%s (pid %d) still running 5s after SIGKILL", running[0].Name, running[0].Pid)
	}
	st.Stopped = true
	if err := writeClusterState(o.dir, st); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster in %s stopped (%d processes); data kept: `weft cluster up --dir %s` restarts it\n", o.dir, len(st.Procs), o.dir)
	return nil
}

func stillAlive(ps []*clusterProc) []*clusterProc {
	var out []*clusterProc
	for _, p := range ps {
		if procAlive(p) {
			out = append(out, p)
		}
	}
	return out
}
