package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/wire/coordclient"
	"github.com/weft-db/weft/internal/wire/coordpb"
	"github.com/weft-db/weft/internal/wire/kronospb"
)

// The cluster fault kinds. A kill sends SIGKILL to one process of a role
// and, after the fault's hold, restarts it with its recorded command line
// (a gatekeeper or shard comes back as a new member, a backup; a Kronos or
// coordinator replica rejoins its raft group on its data directory). A
// pause stops one process with SIGSTOP for the hold, then SIGCONT: a
// gatekeeper or shard paused past the coordinator's failure detector is
// replaced and, fenced, registers again as a backup when it resumes (should
// it exit instead, the harness restarts it as for a kill).
const (
	// FaultKillGatekeeper kills the holder of a gatekeeper slot.
	FaultKillGatekeeper FaultKind = "kill-gatekeeper"
	// FaultKillShard kills the holder of a shard slot.
	FaultKillShard FaultKind = "kill-shard"
	// FaultKillKronos kills a Kronos replica: the leader on the kind's 1st,
	// 3rd, … fault, a follower on the others.
	FaultKillKronos FaultKind = "kill-kronos"
	// FaultKillCoord kills a coordinator replica, leader and follower in
	// turn as for Kronos.
	FaultKillCoord FaultKind = "kill-coord"
	// FaultPauseGatekeeper, FaultPauseShard, FaultPauseKronos and
	// FaultPauseCoord pause the process the kill of the same role would
	// kill.
	FaultPauseGatekeeper FaultKind = "pause-gatekeeper"
	FaultPauseShard      FaultKind = "pause-shard"
	FaultPauseKronos     FaultKind = "pause-kronos"
	FaultPauseCoord      FaultKind = "pause-coord"
)

// ClusterKills are the kill -9 kinds, one per role: the default cluster
// nemeses (a plan over them kills each role in turn: PlanFaults draws kinds
// in rounds).
var ClusterKills = []FaultKind{FaultKillGatekeeper, FaultKillShard, FaultKillKronos, FaultKillCoord}

// AllClusterNemeses lists every cluster fault kind: the kills, then the
// pauses.
var AllClusterNemeses = []FaultKind{FaultKillGatekeeper, FaultKillShard, FaultKillKronos, FaultKillCoord,
	FaultPauseGatekeeper, FaultPauseShard, FaultPauseKronos, FaultPauseCoord}

const clusterNemesesList = "kill-gatekeeper, kill-shard, kill-kronos, kill-coord, pause-gatekeeper, pause-shard, pause-kronos, pause-coord, " +
	"isolate-holders, isolate-gk-shard (the last two with --proxied)"

// The cluster's roles, as `weft cluster up` names them in cluster.json.
const (
	roleGatekeeper = "gatekeeper"
	roleShard      = "shard"
	roleKronos     = "kronos"
	roleCoord      = "coord"
)

// clusterPollEvery is the period of the recovery measurement's polls (and
// so its resolution on the configuration's side).
const clusterPollEvery = 50 * time.Millisecond

// ClusterConfig shapes the cluster target: the `weft cluster up` flags of
// the same names.
type ClusterConfig struct {
	// Gatekeepers and Shards are the slots. Default 2 and 2.
	Gatekeepers int `json:"gatekeepers"`
	Shards      int `json:"shards"`
	// Kronos and Coord are the replicas of each raft group. Default 3 and 3.
	Kronos int `json:"kronos"`
	Coord  int `json:"coord"`
	// BackupGatekeepers and BackupShards are extra processes that wait to
	// be promoted into a failed holder's slot. Default 1 and 1.
	BackupGatekeepers int `json:"backup_gatekeepers"`
	BackupShards      int `json:"backup_shards"`
	// RecoveryTimeout bounds the wait for a kill's recovery (every client's
	// next success and the configuration active with every slot held),
	// and for the cluster to become whole again after a restart. A kill
	// not recovered by then makes the run invalid. Default 60s.
	RecoveryTimeout time.Duration `json:"-"`
	// MoveEvery, when positive, runs a mover for the workloads' duration:
	// about every MoveEvery (jittered, seeded) it moves one placement unit
	// to another shard through a gatekeeper's POST /v1/move, preferring
	// the units of the workloads' vertices (mover.go). 0: no moves.
	MoveEvery time.Duration `json:"move_every,omitempty"`
	// Proxied routes every gatekeeper's and shard's traffic to the
	// coordinators, and every gatekeeper's to the shards, through fault
	// proxies of its own (cluster_lease.go), which the partition kinds
	// (LeaseNemeses) cut.
	Proxied bool `json:"proxied,omitempty"`
	// PlantIgnoreLease starts the gatekeepers and shards with the planted
	// bug --plant-ignore-lease (they serve on after their lease lapsed);
	// needs Proxied.
	PlantIgnoreLease bool `json:"plant_ignore_lease,omitempty"`
	// PinnedClients: the first PinnedClients clients of each workload
	// never leave the gatekeeper they first connected to (as a client
	// library given one address would not), the others fail over as
	// usual. The planted-lease run uses it: pinned clients keep reading
	// through a cut-off gatekeeper while the others write through the new
	// epoch's. A pinned client on a replaced gatekeeper makes no progress:
	// the run's liveness checks fail; its checkers' verdicts stand.
	PinnedClients int `json:"pinned_clients,omitempty"`
}

// DefaultClusterConfig returns the documented defaults.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{Gatekeepers: 2, Shards: 2, Kronos: 3, Coord: 3, BackupGatekeepers: 1, BackupShards: 1,
		RecoveryTimeout: 60 * time.Second}
}

func (c *ClusterConfig) validate() error {
	switch {
	case c.Gatekeepers < 1 || c.Gatekeepers > 16 || c.Shards < 1 || c.Shards > 64:
		return fmt.Errorf("cluster: %d gatekeepers and %d shards, want 1..16 and 1..64", c.Gatekeepers, c.Shards)
	case c.Kronos < 1 || c.Kronos > 7 || c.Coord < 1 || c.Coord > 7:
		return fmt.Errorf("cluster: %d Kronos and %d coordinator replicas, want 1..7", c.Kronos, c.Coord)
	case c.BackupGatekeepers < 0 || c.BackupGatekeepers > 16 || c.BackupShards < 0 || c.BackupShards > 16:
		return fmt.Errorf("cluster: backups %d and %d, want 0..16", c.BackupGatekeepers, c.BackupShards)
	case c.RecoveryTimeout < 0:
		return fmt.Errorf("cluster: RecoveryTimeout %v", c.RecoveryTimeout)
	case c.MoveEvery < 0:
		return fmt.Errorf("cluster: MoveEvery %v, want 0 (no moves) or more", c.MoveEvery)
	case c.PlantIgnoreLease && !c.Proxied:
		return errors.New("cluster: PlantIgnoreLease needs Proxied")
	}
	return nil
}

func (c *ClusterConfig) recoveryTimeout() time.Duration {
	if c == nil || c.RecoveryTimeout <= 0 {
		return 60 * time.Second
	}
	return c.RecoveryTimeout
}

// ParseClusterNemeses parses a comma-separated list of cluster fault kinds
// ("kills": ClusterKills, "all": AllClusterNemeses, "partitions":
// LeaseNemeses, "none": no faults).
func ParseClusterNemeses(s string) ([]FaultKind, error) {
	switch strings.TrimSpace(s) {
	case "kills":
		return slices.Clone(ClusterKills), nil
	case "partitions":
		return slices.Clone(LeaseNemeses), nil
	case "all":
		return slices.Clone(AllClusterNemeses), nil
	case "none", "":
		return nil, nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k := FaultKind(f)
		if !slices.Contains(AllClusterNemeses, k) && !isIsolation(k) {
			return nil, fmt.Errorf("%w: unknown cluster nemesis %q (want %s)", ErrInvalid, f, clusterNemesesList)
		}
		out = append(out, k)
	}
	return out, nil
}

// roleOf names the role a cluster fault hits.
func roleOf(k FaultKind) string {
	_, role, _ := strings.Cut(string(k), "-")
	return role
}

// isPause reports whether k pauses rather than kills.
func isPause(k FaultKind) bool { return strings.HasPrefix(string(k), "pause-") }

// member is one process of the cluster: as the state file records it
// (a gatekeeper's HTTPAddr serves the mover's /v1/placement and
// /v1/move), and what the harness did to it.
type member struct {
	*launch.Proc

	p         *launch.Child // the harness's restart of it; nil: the launcher's process
	down      bool          // killed by the nemesis, not restarted yet
	exitNoted bool          // an exit nobody asked for was recorded
	// mayExit: resumed after a pause that may have fenced it; its exit is
	// the protocol's, not a crash (settle restarts it).
	mayExit bool
}

// clusterTarget is a cluster of real processes started by `weft cluster
// up` in OutDir/cluster: the clients use the gatekeepers' API addresses
// from the coordinator's configuration, the nemesis kills (or pauses) its
// processes, and every fault's recovery is measured. A watcher goroutine
// notes processes that exit by themselves and follows the configuration.
type clusterTarget struct {
	h     *harness
	cc    ClusterConfig
	dir   string
	bin   string
	book  *addrBook
	coord *coordclient.Client
	rng   *rand.Rand // the victims' choice (nemesis goroutine only)

	mu         sync.Mutex
	members    []*member
	kills      map[FaultKind]int // faults begun, by kind
	recs       []Recovery
	unexpected []string
	restarts   int
	epoch      uint64 // the configuration last seen, for describe
	active     uint64
	kronos     map[string]*grpc.ClientConn // by address
	refusals   map[string]int64            // lease refusals by process (cluster_lease.go)
	needEpoch  uint64                      // a partition's recovery needs an epoch above this one

	px *proxies // with Proxied: every member's proxies

	stopWatch chan struct{}
	watchWG   sync.WaitGroup
	stopOnce  sync.Once
	stopErr   error
}

// startCluster runs `weft cluster up` in OutDir/cluster (removing a
// previous run's) and loads what it started. On an error every process
// recorded is stopped.
func startCluster(ctx context.Context, h *harness) (*clusterTarget, error) {
	cc := *h.cfg.Cluster
	dir, err := filepath.Abs(filepath.Join(h.cfg.OutDir, "cluster"))
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	t := &clusterTarget{h: h, cc: cc, dir: dir, bin: h.cfg.Bin, kills: map[FaultKind]int{},
		kronos: map[string]*grpc.ClientConn{}, stopWatch: make(chan struct{}),
		rng: rand.New(rand.NewPCG(h.cfg.Seed, 0x6b696c6c))}
	args := []string{"cluster", "up", "--dir", dir,
		"--gatekeepers", fmt.Sprint(cc.Gatekeepers), "--shards", fmt.Sprint(cc.Shards),
		"--kronos-replicas", fmt.Sprint(cc.Kronos), "--coord-replicas", fmt.Sprint(cc.Coord),
		"--backup-gatekeepers", fmt.Sprint(cc.BackupGatekeepers), "--backup-shards", fmt.Sprint(cc.BackupShards),
		"--ready-timeout", h.cfg.ReadyTimeout.String()}
	out, err := exec.CommandContext(ctx, t.bin, args...).CombinedOutput()
	h.log.Info("weft cluster up", "dir", dir, "err", err, "output", string(out))
	if err == nil {
		t.members, err = loadMembers(dir)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("faults: weft cluster up: %w\n%s", err, out), t.down())
	}
	if t.coord, err = coordclient.NewClient(t.addrsOf(roleCoord)); err != nil {
		return nil, errors.Join(err, t.down())
	}
	t.coord.AttemptTimeout = 300 * time.Millisecond
	st, err := t.leaderStatus(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("faults: the cluster's coordinator: %w", err), t.stop())
	}
	gks := gatekeeperAPIs(st)
	if len(gks) == 0 {
		return nil, errors.Join(errors.New("faults: the configuration lists no gatekeeper API address"), t.stop())
	}
	t.book = newAddrBook(gks...)
	t.watchWG.Go(t.watch)
	if cc.Proxied {
		j := &journal{start: time.Now(), log: h.log}
		if err := t.routeThroughProxies(ctx, j); err != nil {
			return nil, errors.Join(err, t.stop())
		}
	}
	return t, nil
}

// loadMembers reads the processes from dir's state file.
func loadMembers(dir string) ([]*member, error) {
	st, err := launch.Load(dir)
	if err != nil {
		return nil, err
	}
	out := make([]*member, len(st.Procs))
	for i, p := range st.Procs {
		out[i] = &member{Proc: p}
	}
	return out, nil
}

func (t *clusterTarget) addrsOf(role string) []string {
	var out []string
	for _, m := range t.members {
		if m.Role == role {
			out = append(out, m.Addr)
		}
	}
	return out
}

func (t *clusterTarget) addrs() *addrBook { return t.book }

// gatekeeperAPIs are the API addresses of the gatekeeper slots' holders.
func gatekeeperAPIs(st *coordpb.StatusResponse) []string {
	var out []string
	for _, e := range st.GetConfig().GetGatekeepers() {
		if e.GetMember() != 0 && e.GetApiAddress() != "" {
			out = append(out, e.GetApiAddress())
		}
	}
	return out
}

// leaderStatus is the serving coordinator leader's view.
func (t *clusterTarget) leaderStatus(ctx context.Context) (*coordpb.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := t.coord.LeaderStatus(ctx)
	if err != nil {
		return nil, err
	}
	if !st.GetIsLeader() {
		return nil, errors.New("no serving coordinator leader")
	}
	return st, nil
}

// watch notes exits nobody asked for and follows the configuration (the
// clients' addresses) until stop.
func (t *clusterTarget) watch() {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.stopWatch:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		for _, m := range t.members {
			if m.p == nil && !m.down && !m.mayExit && !m.exitNoted && !m.Alive() {
				m.exitNoted = true
				t.unexpected = append(t.unexpected, fmt.Sprintf("%s (pid %d) exited; log tail:\n%s",
					m.Name, m.Pid, launch.LogTail(m.Log, 30)))
			}
		}
		t.mu.Unlock()
		if st, err := t.leaderStatus(context.Background()); err == nil {
			t.book.set(gatekeeperAPIs(st))
			t.mu.Lock()
			t.epoch, t.active = st.GetConfig().GetEpoch(), st.GetConfig().GetActiveEpoch()
			t.mu.Unlock()
		}
	}
}

// alive reports whether m's process runs.
func (t *clusterTarget) alive(m *member) bool {
	if m.p != nil {
		return m.p.Running()
	}
	return m.Alive()
}

// ensure restarts the processes that exited by themselves (the report
// lists their exits) and waits until the cluster is whole.
func (t *clusterTarget) ensure(j *journal) error {
	return t.waitWhole(context.Background(), j)
}

// revive restarts, as a supervisor would, every process that exited though
// nobody asked for it (skip aside: the process under a fault): the exit is
// reported, and the run goes on with a whole cluster.
func (t *clusterTarget) revive(j *journal, skip *member) error {
	t.mu.Lock()
	var gone []*member
	for _, m := range t.members {
		if m != skip && !m.down && !m.mayExit && !t.alive(m) {
			gone = append(gone, m)
		}
	}
	t.mu.Unlock()
	for _, m := range gone {
		j.note("exited", m.Name+" exited by itself: restarting it")
		if err := t.restart(m, j); err != nil {
			return err
		}
	}
	return nil
}

// healAll restarts whatever is down and waits until the cluster is whole.
func (t *clusterTarget) healAll(j *journal) error {
	j.note("heal-all", "")
	return t.ensure(j)
}

// finalFault: a cluster has none; its final reads run on the healed
// cluster.
func (t *clusterTarget) finalFault(*journal) (bool, error) { return false, nil }

// inject kills or pauses one process of f's role, restarts or resumes it
// after f.Hold, and measures the recovery; it returns once the cluster is
// whole again.
func (t *clusterTarget) inject(ctx context.Context, f Fault, j *journal) error {
	if isIsolation(f.Kind) {
		return t.injectIsolation(ctx, f, j)
	}
	pause := isPause(f.Kind)
	m, victim, holder, err := t.pickVictim(ctx, f.Kind)
	if err != nil {
		return err
	}
	j.note(map[bool]string{false: "kill", true: "pause"}[pause], fmt.Sprintf("%s (%s, pid %d)", m.Name, victim, t.pidOf(m)))
	mark := t.h.markKill()
	begun := time.Now()
	if pause {
		err = t.pause(m)
	} else {
		err = t.kill(m)
	}
	if err != nil {
		return err
	}
	undone := make(chan error, 1)
	go func() {
		sleep(ctx, f.Hold)
		if pause {
			undone <- t.resume(m, j)
		} else {
			undone <- t.restart(m, j)
		}
	}()
	rec := Recovery{Fault: f.Kind, Role: roleOf(f.Kind), Process: m.Name, Victim: victim, At: mark.at, ClientsMs: -1, ConfigMs: -1}
	replaced := holder // a kill's recovery needs the holder replaced; a short pause need not cost the slot
	if pause {
		replaced = 0
	}
	undoErr := t.measure(ctx, &rec, mark, begun, replaced, pause, undone, func() error { return t.revive(j, m) })
	t.h.mark.Store(nil)
	t.mu.Lock()
	t.recs = append(t.recs, rec)
	sums := summarizeRecoveries(t.recs)
	t.mu.Unlock()
	j.note("recovered", rec.String())
	if p := t.h.cfg.Progress; p != nil {
		fmt.Fprintf(p, "faults: %5.0fs %s (at %.1fs)\n", time.Since(t.h.start).Seconds(), rec, float64(rec.At)/1e9)
		for _, s := range sums {
			if s.Fault == f.Kind {
				fmt.Fprintf(p, "faults:        %s so far: %d/%d recovered; ms min/median/max clients %s, configuration %s\n",
					s.Fault, s.Recovered, s.Faults, s.Clients, s.Config)
			}
		}
	}
	if undoErr != nil {
		return undoErr
	}
	if pause {
		if err := t.settle(ctx, m, holder, j); err != nil {
			return err
		}
	}
	return t.waitWhole(ctx, j)
}

// measure polls until every client has succeeded since the fault began
// and the configuration has recovered (for a pause, only once the process
// has resumed), or the recovery timeout passes; it fills rec and returns
// the undo's (restart's or resume's) error. Every poll revives the other
// processes that exited meanwhile.
func (t *clusterTarget) measure(ctx context.Context, rec *Recovery, mark *recoveryMark, begun time.Time, holder uint64,
	afterUndo bool, undone <-chan error, revive func() error) error {
	deadline := begun.Add(t.cc.recoveryTimeout())
	var undoErr, reviveErr error
	done := false
	for {
		if reviveErr == nil {
			reviveErr = revive()
		}
		if !done {
			select {
			case undoErr = <-undone:
				done = true
			default:
			}
		}
		if rec.ConfigMs < 0 && (done || !afterUndo) {
			if why := t.configRecovered(ctx, rec.Role, holder); why == "" {
				rec.ConfigMs = time.Since(begun).Milliseconds()
			} else {
				rec.Why = why
			}
		}
		if rec.ClientsMs < 0 {
			if d, ok := mark.recovered(); ok {
				rec.ClientsMs = d.Milliseconds()
			}
		}
		if (rec.Recovered() && done) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		sleep(ctx, clusterPollEvery)
	}
	switch {
	case rec.Recovered():
		rec.Why = ""
	case rec.ClientsMs < 0 && rec.ConfigMs < 0:
		rec.Why += "; and not every client has succeeded since the fault began"
	case rec.ClientsMs < 0:
		rec.Why = "not every client has succeeded since the fault began"
	}
	if !done {
		undoErr = <-undone
	}
	return errors.Join(undoErr, reviveErr)
}

func (t *clusterTarget) pidOf(m *member) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.p != nil {
		return m.p.Pid()
	}
	return m.Pid
}

// pickVictim chooses the process kind hits: a slot holder (seeded choice
// among the slots) for gatekeepers and shards, the leader or a follower in
// turn for the raft groups. holder is the chosen member's id in the
// coordinator (gatekeepers and shards).
func (t *clusterTarget) pickVictim(ctx context.Context, kind FaultKind) (m *member, victim string, holder uint64, err error) {
	role := roleOf(kind)
	t.mu.Lock()
	n := t.kills[kind]
	t.kills[kind]++
	t.mu.Unlock()
	switch role {
	case roleGatekeeper, roleShard:
		st, err := t.leaderStatus(ctx)
		if err != nil {
			return nil, "", 0, fmt.Errorf("faults: choosing a %s to kill: %w", role, err)
		}
		want := map[string]coordpb.Role{roleGatekeeper: coordpb.Role_GATEKEEPER, roleShard: coordpb.Role_SHARD}[role]
		var slots []*coordpb.Slot
		for _, s := range st.GetSlots() {
			if s.GetRole() == want && s.GetHolder() != 0 {
				slots = append(slots, s)
			}
		}
		if len(slots) == 0 {
			return nil, "", 0, fmt.Errorf("faults: no %s slot is held", role)
		}
		s := slots[t.rng.IntN(len(slots))]
		for _, mm := range st.GetMembers() {
			if mm.GetId() == s.GetHolder() {
				if m = t.byName(mm.GetName()); m != nil {
					return m, fmt.Sprintf("holder of %s slot %d, member %d", role, s.GetIndex(), s.GetHolder()), s.GetHolder(), nil
				}
			}
		}
		return nil, "", 0, fmt.Errorf("faults: the holder %d of %s slot %d is not a process of cluster.json", s.GetHolder(), role, s.GetIndex())
	case roleKronos, roleCoord:
		leader, err := t.raftLeader(ctx, role)
		if err != nil {
			return nil, "", 0, err
		}
		if n%2 == 0 {
			return leader, "leader", 0, nil
		}
		var followers []*member
		t.mu.Lock()
		for _, mm := range t.members {
			if mm.Role == role && mm != leader && t.alive(mm) {
				followers = append(followers, mm)
			}
		}
		t.mu.Unlock()
		if len(followers) == 0 {
			return leader, "leader (no follower runs)", 0, nil
		}
		return followers[t.rng.IntN(len(followers))], "follower", 0, nil
	}
	return nil, "", 0, fmt.Errorf("faults: no role %q to kill", role)
}

func (t *clusterTarget) byName(name string) *member {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// raftLeader names the leading replica of the Kronos or coordinator group
// (replica id i is the process of index i-1).
func (t *clusterTarget) raftLeader(ctx context.Context, role string) (*member, error) {
	var id uint64
	if role == roleCoord {
		st, err := t.leaderStatus(ctx)
		if err != nil {
			return nil, fmt.Errorf("faults: the coordinator leader: %w", err)
		}
		id = st.GetNodeId()
	} else {
		id = t.kronosLeader(ctx)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.members {
		if m.Role == role && uint64(m.Index+1) == id {
			return m, nil
		}
	}
	return nil, fmt.Errorf("faults: no %s leader (replica %d)", role, id)
}

// kronosLeader asks every Kronos replica for its stats and returns the
// leader's id (0: none).
func (t *clusterTarget) kronosLeader(ctx context.Context) uint64 {
	for _, a := range t.addrsOfLocked(roleKronos) {
		conn, err := t.kronosConn(a)
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		s, err := kronospb.NewKronosClient(conn).Stats(cctx, &kronospb.StatsRequest{})
		cancel()
		if err == nil && s.GetIsLeader() {
			return s.GetNodeId()
		}
	}
	return 0
}

func (t *clusterTarget) addrsOfLocked(role string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addrsOf(role)
}

func (t *clusterTarget) kronosConn(addr string) (*grpc.ClientConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.kronos[addr]; ok {
		return c, nil
	}
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	t.kronos[addr] = c
	return c, nil
}

// configRecovered says why the cluster has not recovered from the kill of
// a process of role ("" once it has): the coordinator serves, its latest
// configuration is active with every slot held, a killed slot holder holds
// no slot any more, and the Kronos group has a leader.
func (t *clusterTarget) configRecovered(ctx context.Context, role string, holder uint64) string {
	st, err := t.leaderStatus(ctx)
	if err != nil {
		return fmt.Sprintf("coordinator: %v", err)
	}
	conf := st.GetConfig()
	if conf.GetActiveEpoch() != conf.GetEpoch() {
		return fmt.Sprintf("epoch %d not active (active %d)", conf.GetEpoch(), conf.GetActiveEpoch())
	}
	t.mu.Lock()
	need := t.needEpoch
	t.mu.Unlock()
	if need != 0 && conf.GetEpoch() <= need {
		return fmt.Sprintf("no epoch after %d yet (nobody replaced)", need)
	}
	for _, e := range append(slices.Clone(conf.GetGatekeepers()), conf.GetShards()...) {
		if e.GetMember() == 0 {
			return fmt.Sprintf("a slot (%d) is vacant", e.GetSlot())
		}
		if holder != 0 && e.GetMember() == holder {
			return fmt.Sprintf("the killed member %d still holds slot %d", holder, e.GetSlot())
		}
	}
	if role == roleKronos && t.kronosLeader(ctx) == 0 {
		return "no Kronos leader"
	}
	return ""
}

// waitWhole waits until every process runs (reviving any that exited),
// the configuration has recovered, every running gatekeeper and shard is a
// live member, and the Kronos group leads.
func (t *clusterTarget) waitWhole(ctx context.Context, j *journal) error {
	ctx, cancel := context.WithTimeout(ctx, t.cc.recoveryTimeout())
	defer cancel()
	why := ""
	for {
		if err := t.revive(j, nil); err != nil {
			return err
		}
		if why = t.whole(ctx); why == "" {
			return nil
		}
		if !sleep(ctx, clusterPollEvery) {
			return fmt.Errorf("faults: the cluster did not become whole within %v: %s", t.cc.recoveryTimeout(), why)
		}
	}
}

func (t *clusterTarget) whole(ctx context.Context) string {
	t.mu.Lock()
	var members []string
	for _, m := range t.members {
		if !t.alive(m) {
			t.mu.Unlock()
			return m.Name + " is down"
		}
		if m.Role == roleGatekeeper || m.Role == roleShard {
			members = append(members, m.Name)
		}
	}
	t.mu.Unlock()
	if why := t.configRecovered(ctx, roleKronos, 0); why != "" {
		return why
	}
	st, err := t.leaderStatus(ctx)
	if err != nil {
		return err.Error()
	}
	for _, name := range members {
		if !slices.ContainsFunc(st.GetMembers(), func(m *coordpb.Member) bool { return m.GetName() == name && m.GetLive() }) {
			return name + " is not a live member yet"
		}
	}
	return ""
}

// pause stops m's process group with SIGSTOP.
func (t *clusterTarget) pause(m *member) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.p != nil {
		return m.p.Pause()
	}
	if err := launch.Signal(m.Pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("faults: pause %s: %w", m.Name, err)
	}
	return nil
}

// resume continues m's process group with SIGCONT. A gatekeeper or shard
// may find it was fenced while it was stopped and exit: that exit is
// allowed until settle.
func (t *clusterTarget) resume(m *member, j *journal) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	j.note("resume", m.Name)
	if m.Role == roleGatekeeper || m.Role == roleShard {
		m.mayExit = true
	}
	if m.p != nil {
		if m.mayExit {
			m.p.ExpectExit(true)
		}
		return m.p.Resume()
	}
	if err := launch.Signal(m.Pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("faults: resume %s: %w", m.Name, err)
	}
	return nil
}

// settle waits, after a gatekeeper or shard resumed from a pause, until it
// is still the live member holder (not fenced), or fenced and registered
// again as a new member, or has exited (it is restarted, as after a kill);
// then its exits are unexpected again.
func (t *clusterTarget) settle(ctx context.Context, m *member, holder uint64, j *journal) error {
	if m.Role != roleGatekeeper && m.Role != roleShard {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.cc.recoveryTimeout())
	defer cancel()
	for {
		t.mu.Lock()
		alive := t.alive(m)
		t.mu.Unlock()
		if !alive {
			j.note("exited", m.Name+" exited after it resumed (fenced while paused): restarting it")
			return t.restart(m, j)
		}
		// Still the live holder (not fenced), or fenced and registered
		// again under its name as a new member (a backup).
		if st, err := t.leaderStatus(ctx); err == nil && slices.ContainsFunc(st.GetMembers(),
			func(mm *coordpb.Member) bool {
				return mm.GetLive() && (mm.GetId() == holder || (mm.GetId() > holder && mm.GetName() == m.Name))
			}) {
			t.mu.Lock()
			m.mayExit = false
			if m.p != nil {
				m.p.ExpectExit(false)
			}
			t.mu.Unlock()
			return nil
		}
		if !sleep(ctx, clusterPollEvery) {
			return fmt.Errorf("faults: %s, fenced while paused, neither exited nor came back within %v", m.Name, t.cc.recoveryTimeout())
		}
	}
}

// kill sends SIGKILL to m's process group and waits until it is gone.
func (t *clusterTarget) kill(m *member) error {
	t.mu.Lock()
	m.down = true
	p, lp := m.p, *m.Proc
	t.mu.Unlock()
	if p != nil {
		return p.Kill()
	}
	if err := launch.Kill(&lp); err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	return nil
}

// restart starts m again with its recorded command line and records its
// new pid in cluster.json, so that `weft cluster down` stops it too.
func (t *clusterTarget) restart(m *member, j *journal) error {
	p, err := launch.NewChild(launch.ChildSpec{Name: m.Name, Path: t.bin, Args: m.Args, LogPath: m.Log,
		Ready: " serving on ", ReadyTimeout: t.h.cfg.ReadyTimeout})
	if err != nil {
		return fmt.Errorf("faults: restarting %s: %w", m.Name, err)
	}
	start := time.Now()
	err = p.Start()
	t.mu.Lock()
	if old := m.p; old != nil {
		t.unexpected = append(t.unexpected, old.UnexpectedExits()...)
	} else if !m.down && !m.mayExit && !m.exitNoted {
		t.unexpected = append(t.unexpected, fmt.Sprintf("%s (pid %d) exited; log tail:\n%s", m.Name, m.Pid, launch.LogTail(m.Log, 30)))
	}
	m.p, m.down, m.exitNoted, m.mayExit = p, false, false, false
	m.Pid = p.Pid()
	t.restarts++
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("faults: restarting %s: %w", m.Name, err)
	}
	j.note("start", fmt.Sprintf("%s (pid %d) ready after %v", m.Name, m.Pid, time.Since(start).Round(time.Millisecond)))
	return launch.SetPid(t.dir, m.Name, m.Pid)
}

// stop ends the cluster: `weft cluster down` (SIGTERM, SIGKILL after 10s),
// then a check that no process of it survived (any that did is killed and
// reported).
func (t *clusterTarget) stop() error {
	t.stopOnce.Do(func() {
		if t.px != nil { // the last refusal counts, while the coordinator still serves
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			t.noteRefusals(ctx)
			cancel()
		}
		close(t.stopWatch)
		t.watchWG.Wait()
		t.mu.Lock()
		var mine []*launch.Child
		for _, m := range t.members {
			if m.p != nil {
				mine = append(mine, m.p)
				m.p.ExpectExit(true) // its exit is asked for: down ends it
			}
		}
		t.mu.Unlock()
		t.stopErr = t.down()
		for _, p := range mine {
			if err := p.Stop(stopTimeout); err != nil {
				t.stopErr = errors.Join(t.stopErr, err)
			}
		}
		t.stopErr = errors.Join(t.stopErr, t.strays())
		t.px.close()
		if t.coord != nil {
			_ = t.coord.Close()
		}
		t.mu.Lock()
		for _, c := range t.kronos {
			_ = c.Close()
		}
		t.mu.Unlock()
	})
	return t.stopErr
}

// down runs `weft cluster down`.
func (t *clusterTarget) down() error {
	out, err := exec.Command(t.bin, "cluster", "down", "--dir", t.dir, "--timeout", "10s").CombinedOutput()
	t.h.log.Info("weft cluster down", "dir", t.dir, "err", err, "output", string(out))
	if err != nil && !strings.Contains(string(out), "no cluster in") {
		return fmt.Errorf("faults: weft cluster down: %w\n%s", err, out)
	}
	return nil
}

// strays kills any process of cluster.json that survived down.
func (t *clusterTarget) strays() error {
	members, err := loadMembers(t.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, m := range members {
		if m.Alive() {
			_ = launch.Signal(m.Pid, syscall.SIGKILL)
			errs = append(errs, fmt.Errorf("faults: %s (pid %d) survived weft cluster down: killed", m.Name, m.Pid))
		}
	}
	return errors.Join(errs...)
}

func (t *clusterTarget) describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	up := 0
	for _, m := range t.members {
		if t.alive(m) {
			up++
		}
	}
	return fmt.Sprintf("procs=%d/%d epoch=%d active=%d kills=%d", up, len(t.members), t.epoch, t.active, len(t.recs))
}

func (t *clusterTarget) starts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.restarts
}

func (t *clusterTarget) unexpectedExits() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.unexpected)
	for _, m := range t.members {
		if m.p != nil {
			out = append(out, m.p.UnexpectedExits()...)
		}
	}
	return out
}

func (t *clusterTarget) recoveries() []Recovery {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.recs)
}

// dataDirs are the processes' data directories (the logs stay).
func (t *clusterTarget) dataDirs() []string {
	var out []string
	for _, m := range t.members {
		if m.DataDir != "" {
			out = append(out, m.DataDir)
		}
	}
	return out
}
