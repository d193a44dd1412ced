package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// servingLine is what every process of the cluster logs once it serves.
const servingLine = " serving on "

// dgraphReady is the line a gatekeeper logs once its Dgraph face serves
// (internal/roles, DgraphServer.Describe).
const dgraphReady = "Dgraph HTTP API on"

// Validate refuses a configuration Up cannot start.
func (c *Config) Validate() error {
	for _, g := range []struct {
		flag string
		n    int
	}{{"--kronos-replicas", c.Kronos}, {"--coord-replicas", c.Coord}} {
		if g.n < 1 || g.n > 7 || g.n%2 == 0 {
			return fmt.Errorf("%s %d: a raft group has 1, 3, 5 or 7 replicas (an even count tolerates no more failures than one fewer)", g.flag, g.n)
		}
	}
	switch {
	case c.Dir == "":
		return errors.New("launch: Config.Dir is empty")
	case c.Gatekeepers < 0 || c.Shards < 0 || c.BackupGatekeepers < 0 || c.BackupShards < 0:
		return errors.New("slot and backup counts must not be negative")
	case (c.Gatekeepers == 0) != (c.Shards == 0):
		return errors.New("a cluster has both gatekeepers and shards, or neither")
	case c.DgraphPlacement != "" && !c.Dgraph:
		return errors.New("--dgraph-placement needs --dgraph")
	}
	return nil
}

// Up starts a local cluster in c.Dir (restarting a stopped one there on
// its data, with the same addresses), group by group, each serving before
// the next starts; then it waits for the raft groups' leaders, for an
// active configuration with every slot held and, with Dgraph, for the
// gatekeepers' Dgraph faces. Every process started is in the state file
// as soon as it starts, so that Down stops it even after a failed Up. It
// prints the processes to out.
func Up(ctx context.Context, out io.Writer, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	unlock, err := LockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	prev, err := previous(dir, c)
	if err != nil {
		return err
	}
	if c.Binary == "" {
		if c.Binary, err = os.Executable(); err != nil {
			return err
		}
	}
	c.epoch = uint64(time.Now().Unix()) // larger on every up: stamps of a new run follow the old
	st := &State{Binary: c.Binary, Started: time.Now().UTC(), Epoch: c.epoch, Dgraph: c.Dgraph, DgraphPlacement: c.DgraphPlacement,
		LogFormat: c.LogFormat}
	planned, err := plan(dir, &c, prev)
	if err != nil {
		return err
	}
	stopHint := func(err error) error {
		return fmt.Errorf("%w (the processes started are in %s; `weft cluster down --dir %s` stops them)", err, filepath.Join(dir, StateFile), c.Dir)
	}
	for _, r := range roles {
		group := planned.Of(r.name)
		for i, p := range group {
			p.Args = r.argsOf(&c, i, group, planned)
			if err := Start(c.Binary, p); err != nil {
				_ = st.Save(dir)
				return err
			}
			st.Procs = append(st.Procs, p)
			if err := st.Save(dir); err != nil {
				return err
			}
		}
		// A group serves before the next starts: shards need the store,
		// gatekeepers the shards.
		for _, p := range group {
			if err := WaitLog(p, servingLine, c.ReadyTimeout); err != nil {
				return stopHint(err)
			}
		}
	}
	for _, p := range st.Procs {
		if err := WaitLog(p, servingLine, c.ReadyTimeout); err != nil {
			return stopHint(err)
		}
	}
	if err := waitLeaders(ctx, st, c.ReadyTimeout); err != nil {
		return err
	}
	if c.Gatekeepers > 0 {
		if err := waitActive(ctx, st, 0, c.ReadyTimeout); err != nil {
			return stopHint(err)
		}
	}
	if c.Dgraph && c.Gatekeepers > 0 {
		if err := waitDgraph(st.Of("gatekeeper"), c.Gatekeepers, c.ReadyTimeout); err != nil {
			return stopHint(err)
		}
	}
	printUp(out, dir, st)
	return nil
}

// previous returns the state of a stopped cluster in dir (nil: none),
// refusing a running one, and data of another replica count: a replica
// group remembers its members, so restarting its data with another count
// would leave it without a quorum.
func previous(dir string, c Config) (*State, error) {
	var prev *State
	if old, err := Load(dir); err == nil {
		for _, p := range old.Procs {
			if p.Alive() {
				return nil, fmt.Errorf("a cluster is already running in %s (%s pid %d): run `weft cluster down --dir %s` first", dir, p.Name, p.Pid, c.Dir)
			}
		}
		prev = old // restart on the same data, with the same addresses
	}
	for _, r := range roles {
		n := 0
		for fileExists(filepath.Join(dir, fmt.Sprintf("%s-%d", r.name, n+1))) {
			n++
		}
		if n > 0 && n != r.count(&c) {
			return nil, fmt.Errorf("%s holds the data of %d %s replicas (their raft group remembers them): "+
				"restart with --%s %d, or use a new --dir", dir, n, r.name, countFlag(r.name), n)
		}
	}
	return prev, nil
}

// plan assigns every process of the cluster its name, directories and
// addresses (in start order) before any starts: shards are told the
// gatekeepers' addresses before those start.
func plan(dir string, c *Config, prev *State) (*State, error) {
	used := map[string]bool{} // every address planned, so no two processes get one port
	if prev != nil {
		used = prev.used()
	}
	for _, port := range c.Ports {
		used[net.JoinHostPort("127.0.0.1", strconv.Itoa(port))] = true // given: no free pick takes it
	}
	planned := &State{}
	for i := range roles {
		n := roles[i].count(c)
		if n == 0 {
			continue
		}
		group, err := planGroup(dir, &roles[i], n, prev, used)
		if err != nil {
			return nil, err
		}
		if c.Dgraph && roles[i].name == "gatekeeper" {
			if err := planDgraph(group, prev, used); err != nil {
				return nil, err
			}
		}
		planned.Procs = append(planned.Procs, group...)
	}
	if c.BasePort != 0 {
		if err := layOut(planned, prev, c.BasePort); err != nil {
			return nil, err
		}
	}
	if err := setPorts(planned, prev, c.Ports); err != nil {
		return nil, err
	}
	return planned, nil
}

func printUp(out io.Writer, dir string, st *State) {
	fmt.Fprintf(out, "cluster up in %s\n", dir)
	printProcs(out, st.Procs)
	if gk := st.Of("gatekeeper"); len(gk) > 0 {
		fmt.Fprintf(out, "clients: weft tx --addr %s; weft placement --http-addr %s; weft cluster status --dir %s\n",
			gk[0].Addr, gk[0].HTTPAddr, dir)
	}
	for _, p := range st.Procs {
		if p.DgraphHTTPAddr != "" {
			fmt.Fprintf(out, "  %-8s Dgraph HTTP http://%s  Dgraph gRPC %s\n", p.Name, p.DgraphHTTPAddr, p.DgraphGRPCAddr)
		}
	}
	for _, s := range st.NotStarted {
		fmt.Fprintf(out, "  not started: %s\n", s)
	}
}

// countFlag is the `weft cluster up` flag that sets the count of role.
func countFlag(role string) string {
	switch role {
	case "kronos", "coord":
		return role + "-replicas"
	}
	return role + "s"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Down stops the cluster in dir (Stop: SIGTERM, SIGKILL after timeout)
// and marks its state file stopped; the data stays, and Up restarts it.
func Down(out io.Writer, dir string, timeout time.Duration) error {
	st, err := Load(dir)
	if err != nil {
		return fmt.Errorf("no cluster in %s: %w", dir, err)
	}
	if err := Stop(st.Procs, timeout, out); err != nil {
		return err
	}
	st.Stopped = true
	if err := st.Save(dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster in %s stopped (%d processes); data kept: `weft cluster up --dir %s` restarts it\n", dir, len(st.Procs), dir)
	return nil
}
