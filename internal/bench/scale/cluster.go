package scale

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/bench"
	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/wire/kronospb"
)

// scaleCluster is one cluster of real processes started by `weft cluster
// up` (the same binary) in a directory of its own.
type scaleCluster struct {
	bin, dir string
	procs    []*launch.Proc
	// seen are the processes of the cluster's trees at the CPU samples
	// (PostgreSQL's server processes are children of `weft postgres`),
	// pid → start time: none may be left after down.
	seen map[int]int64
}

// startScaleCluster runs `bin cluster up` in dir and reads the processes it
// started. Whatever happens, the caller calls down: a failed up leaves the
// processes it started recorded in dir's cluster.json.
func startScaleCluster(ctx context.Context, bin, dir string, gatekeepers, shards, kronos, coord int,
	readyTimeout time.Duration) (*scaleCluster, error) {
	c := &scaleCluster{bin: bin, dir: dir, seen: map[int]int64{}}
	out, err := c.weft(ctx, "up", "--gatekeepers", fmt.Sprint(gatekeepers), "--shards", fmt.Sprint(shards),
		"--kronos-replicas", fmt.Sprint(kronos), "--coord-replicas", fmt.Sprint(coord), "--ready-timeout", readyTimeout.String())
	if err != nil {
		return c, fmt.Errorf("bench: weft cluster up: %w\n%s%s", err, tail(out, 20), c.logTails(10))
	}
	if c.procs, err = loadProcs(dir); err != nil {
		return c, err
	}
	for _, role := range []string{roleGatekeeper, roleShard, roleKronos} {
		if len(c.addrs(role)) == 0 {
			return c, fmt.Errorf("bench: cluster.json in %s lists no %s", dir, role)
		}
	}
	return c, nil
}

// weft runs `bin cluster <args> --dir dir`, its output also in dir/launcher.log.
func (c *scaleCluster) weft(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"cluster", "--dir", c.dir}, args...)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if f, ferr := os.OpenFile(filepath.Join(c.dir, "launcher.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); ferr == nil {
		fmt.Fprintf(f, "=== weft cluster %s: %v\n%s", strings.Join(args, " "), err, buf.Bytes())
		f.Close()
	}
	return buf.Bytes(), err
}

// down runs `weft cluster down` (with its own deadline: it runs after an
// interrupt too) and checks that no process of the cluster is left.
func (c *scaleCluster) down() error {
	if _, err := os.Stat(filepath.Join(c.dir, launch.StateFile)); errors.Is(err, os.ErrNotExist) {
		return nil // up started nothing
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.weft(ctx, "down", "--timeout", "10s")
	if err != nil {
		err = fmt.Errorf("bench: weft cluster down: %w\n%s", err, tail(out, 10))
	}
	if procs, rerr := loadProcs(c.dir); rerr == nil {
		c.procs = procs // up may have failed after starting some
	}
	return errors.Join(err, c.checkStopped())
}

// checkStopped reports any process of cluster.json, or any member of their
// trees seen while measuring, that is still alive.
func (c *scaleCluster) checkStopped() error {
	var alive []string
	for _, p := range c.procs {
		if p.Alive() {
			alive = append(alive, fmt.Sprintf("%s (pid %d)", p.Name, p.Pid))
		}
	}
	for pid, start := range c.seen {
		if st, ok := launch.ReadStat(pid); ok && st.Start == start && !st.Zombie() {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			alive = append(alive, fmt.Sprintf("%s (pid %d, of the cluster's process trees)", strings.TrimSpace(string(comm)), pid))
		}
	}
	if len(alive) > 0 {
		return fmt.Errorf("bench: still running after weft cluster down: %s", strings.Join(alive, ", "))
	}
	return nil
}

// loadProcs reads the processes of the cluster's state file in dir.
func loadProcs(dir string) ([]*launch.Proc, error) {
	st, err := launch.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("bench: the cluster's state: %w", err)
	}
	return st.Procs, nil
}

func (c *scaleCluster) addrs(role string) []string {
	var out []string
	for _, p := range c.procs {
		if p.Role == role {
			out = append(out, p.Addr)
		}
	}
	return out
}

// logTails returns the end of every process log of the cluster (for errors).
func (c *scaleCluster) logTails(n int) string {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "logs", "*.log"))
	var b strings.Builder
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s:\n%s", l, tail(data, n))
	}
	return b.String()
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// cpuSample is the CPU time of every role of the cluster, and of this
// process (the clients), at one moment.
type cpuSample struct {
	at     time.Time
	byProc map[string]time.Duration // process name → its tree's CPU
	self   time.Duration
}

// sampleCPU reads the CPU time of every cluster process's tree and this
// process's, and remembers the trees' members for checkStopped.
func (c *scaleCluster) sampleCPU() (cpuSample, error) {
	s := cpuSample{byProc: map[string]time.Duration{}}
	t, err := readProcTable()
	if err != nil {
		return s, err
	}
	s.at, s.self = time.Now(), bench.ProcessCPU()
	for _, p := range c.procs {
		if !p.Alive() {
			return s, fmt.Errorf("bench: %s (pid %d) is not running%s", p.Name, p.Pid, c.logTails(10))
		}
		s.byProc[p.Name] = t.treeCPU(p.Pid)
		for _, pid := range t.tree(p.Pid) {
			c.seen[pid] = t[pid].Start
		}
	}
	return s, nil
}

// cpuByRole returns the CPU seconds of each role between two samples, and of
// each process.
func (c *scaleCluster) cpuByRole(a, b cpuSample) (roles, procs map[string]float64) {
	roles, procs = map[string]float64{}, map[string]float64{}
	for _, p := range c.procs {
		d := (b.byProc[p.Name] - a.byProc[p.Name]).Seconds()
		procs[p.Name] = bench.Round(d, 3)
		roles[p.Role] += d
	}
	roles[roleClient] = (b.self - a.self).Seconds()
	for r, v := range roles {
		roles[r] = bench.Round(v, 3)
	}
	return roles, procs
}

// gkCounters are the gatekeepers' Status counters, summed.
type gkCounters struct {
	commits, aborts, programs, kronosCalls uint64
	vertices, edges                        int64
}

// gatekeeperCounters asks every gatekeeper for its Status and sums the
// counters (each gatekeeper counts its own); the graph's size is the first
// gatekeeper's view (each sums the shards').
func gatekeeperCounters(ctx context.Context, gks []*weft.Client) (gkCounters, error) {
	var c gkCounters
	for i, g := range gks {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := g.Status(sctx)
		cancel()
		if err != nil {
			return c, fmt.Errorf("bench: status of gatekeeper %d: %w", i+1, err)
		}
		c.commits += s.Commits
		c.aborts += s.Aborts
		c.programs += s.Programs
		c.kronosCalls += s.KronosCalls
		if i == 0 {
			c.vertices, c.edges = s.Vertices, s.Edges
		}
	}
	return c, nil
}

// kronosStats returns the Stats of the Kronos leader (the replica that
// orders): events created and raft log entries applied.
func kronosStats(ctx context.Context, addrs []string) (*kronospb.StatsResponse, error) {
	var first *kronospb.StatsResponse
	var errs []error
	for _, a := range addrs {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s, err := kronospb.NewKronosClient(conn).Stats(sctx, &kronospb.StatsRequest{})
		cancel()
		conn.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("kronos %s: %w", a, err))
			continue
		}
		if s.GetIsLeader() {
			return s, nil
		}
		if first == nil {
			first = s
		}
	}
	if first != nil {
		return first, nil
	}
	return nil, fmt.Errorf("bench: Kronos stats: %w", errors.Join(errs...))
}
