package launch

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
)

// Config shapes a local cluster: the `weft cluster up` flags of the same
// names.
type Config struct {
	// Dir holds the processes' data directories, their logs (logs/) and the
	// state file. Required.
	Dir string
	// Binary is the weft binary the processes run. Default: this
	// executable.
	Binary string
	// Gatekeepers and Shards are the slots (both or neither). Default 2, 4.
	Gatekeepers, Shards int
	// Kronos and Coord are the replicas of each raft group: 1, 3, 5 or 7.
	// Default 3, 3.
	Kronos, Coord int
	// BackupGatekeepers and BackupShards are extra processes that register
	// and wait; the coordinator promotes one when a slot holder fails.
	// Default 0.
	BackupGatekeepers, BackupShards int
	// BasePort lays the processes' ports out from it (layout.go: role k
	// at BasePort+100k, instance i at +10i); 0 picks free ports. A
	// restarted cluster keeps its addresses.
	BasePort int
	// Ports gives single addresses their loopback ports, "NAME.LABEL" →
	// port with the names and labels up prints (gatekeeper-1.grpc,
	// gatekeeper-1.http, coord-1.http, ...), over the free or BasePort
	// ones. A restarted cluster keeps its addresses.
	Ports map[string]int
	// ReadyTimeout bounds each wait for the processes to serve. Default 60s
	// (a first start on a busy machine of two cores takes tens of seconds).
	ReadyTimeout time.Duration
	// PostgresURL is the store gatekeepers and shards share ("": Up starts
	// one, `weft postgres`, in Dir/postgres-1); PostgresSchema its schema
	// ("": the store's default).
	PostgresURL, PostgresSchema string
	// Dgraph gives every gatekeeper Dgraph's HTTP and gRPC APIs (weft
	// gatekeeper --dgraph-http/--dgraph-grpc) on addresses of their own;
	// DgraphPlacement is the Dgraph data's placement when first created.
	Dgraph          bool
	DgraphPlacement string

	// LogFormat is every process's --log-format ("": the processes'
	// default, text).
	LogFormat string

	// epoch is the configuration epoch base the gatekeepers and shards
	// are started in (larger on every up).
	epoch uint64
}

// DefaultConfig returns the documented defaults for a cluster in dir.
func DefaultConfig(dir string) Config {
	return Config{Dir: dir, Gatekeepers: 2, Shards: 4, Kronos: 3, Coord: 3, ReadyTimeout: 60 * time.Second}
}

// role is one row of the launcher's table: adding a role is adding a row.
type role struct {
	name  string
	count func(c *Config) int
	// args builds instance i's command line; group holds every instance of
	// the role (addresses assigned), st every process planned.
	args func(c *Config, i int, group []*Proc, st *State) []string
	// http reports whether the role serves health and metrics on its own port.
	http bool
	// peer reports whether the role also has a cluster-protocol address.
	peer bool
}

// roles in start order: the replicated services first, then the store,
// then the roles that register with the coordinator.
var roles = []role{
	{name: "kronos", count: func(c *Config) int { return c.Kronos }, http: true,
		args: func(c *Config, i int, g []*Proc, st *State) []string {
			return []string{"kronos", "--id", fmt.Sprint(i + 1), "--addr", g[i].Addr, "--peers", peerList(g),
				"--data-dir", g[i].DataDir, "--coord", strings.Join(st.Addrs("coord"), ","), "--http-addr", g[i].HTTPAddr}
		}},
	{name: "coord", count: func(c *Config) int { return c.Coord }, http: true,
		args: func(c *Config, i int, g []*Proc, _ *State) []string {
			return []string{"coord", "--id", fmt.Sprint(i + 1), "--addr", g[i].Addr, "--http-addr", g[i].HTTPAddr,
				"--peers", peerList(g), "--data-dir", g[i].DataDir,
				"--gatekeepers", fmt.Sprint(c.Gatekeepers), "--shards", fmt.Sprint(c.Shards)}
		}},
	// The store gatekeepers and shards share, when no PostgresURL names one.
	{name: "postgres", count: func(c *Config) int {
		if c.PostgresURL == "" && c.Gatekeepers+c.Shards > 0 {
			return 1
		}
		return 0
	},
		args: func(c *Config, i int, g []*Proc, _ *State) []string {
			_, port, _ := net.SplitHostPort(g[i].Addr)
			return []string{"postgres", "--dir", g[i].DataDir, "--port", port}
		}},
	// Shards before gatekeepers: a gatekeeper opens its FIFO streams to
	// every shard when it starts. Gatekeepers and shards register with the
	// coordinator, which gives them their slots (the first to register;
	// the rest wait as backups).
	{name: "shard", count: func(c *Config) int { return c.Shards + c.BackupShards }, http: true,
		args: func(c *Config, i int, g []*Proc, st *State) []string {
			return append([]string{"shard", "--name", g[i].Name, "--listen", g[i].Addr, "--http-addr", g[i].HTTPAddr},
				memberArgs(c, st)...)
		}},
	{name: "gatekeeper", count: func(c *Config) int { return c.Gatekeepers + c.BackupGatekeepers }, http: true, peer: true,
		args: func(c *Config, i int, g []*Proc, st *State) []string {
			args := []string{"gatekeeper", "--name", g[i].Name, "--listen", g[i].PeerAddr,
				"--grpc-addr", g[i].Addr, "--http-addr", g[i].HTTPAddr}
			if c.Dgraph {
				args = append(args, "--dgraph-http", g[i].DgraphHTTPAddr, "--dgraph-grpc", g[i].DgraphGRPCAddr)
				if c.DgraphPlacement != "" {
					args = append(args, "--dgraph-placement", c.DgraphPlacement)
				}
			}
			return append(args, memberArgs(c, st)...)
		}},
}

// argsOf is instance i's command line: the role's, then the flags every
// process of the cluster shares.
func (r *role) argsOf(c *Config, i int, group []*Proc, st *State) []string {
	args := r.args(c, i, group, st)
	if c.LogFormat != "" {
		args = append(args, "--log-format", c.LogFormat)
	}
	return args
}

// roleNamed returns the row of name (nil: none).
func roleNamed(name string) *role {
	for i := range roles {
		if roles[i].name == name {
			return &roles[i]
		}
	}
	return nil
}

// memberArgs are the flags every gatekeeper and shard process of the
// cluster shares; st holds every process planned (addresses assigned).
func memberArgs(c *Config, st *State) []string {
	url := c.PostgresURL
	if pg := st.Of("postgres"); url == "" && len(pg) == 1 {
		url = fmt.Sprintf("postgres://weft@%s/postgres?sslmode=disable", pg[0].Addr)
	}
	args := []string{"--epoch", fmt.Sprint(c.epoch), "--coord", strings.Join(st.Addrs("coord"), ","),
		"--kronos", strings.Join(st.Addrs("kronos"), ","), "--postgres-url", url}
	if c.PostgresSchema != "" {
		args = append(args, "--postgres-schema", c.PostgresSchema)
	}
	return args
}

func peerList(g []*Proc) string {
	var ps []string
	for i, p := range g {
		ps = append(ps, fmt.Sprintf("%d=%s", i+1, p.Addr))
	}
	return strings.Join(ps, ",")
}

// planGroup assigns each of n instances of r its name, addresses and
// directories, reusing those of a stopped cluster in the same directory.
func planGroup(dir string, r *role, n int, prev *State, used map[string]bool) ([]*Proc, error) {
	group := make([]*Proc, n)
	for i := range group {
		name := fmt.Sprintf("%s-%d", r.name, i+1)
		p := &Proc{Name: name, Role: r.name, Index: i, DataDir: filepath.Join(dir, name),
			Log: filepath.Join(dir, "logs", name+".log")}
		if prev != nil {
			if q := prev.Proc(name); q != nil {
				p.Addr, p.HTTPAddr, p.PeerAddr = q.Addr, q.HTTPAddr, q.PeerAddr
			}
		}
		for _, a := range []struct {
			addr *string
			want bool
		}{{&p.Addr, true}, {&p.PeerAddr, r.peer}, {&p.HTTPAddr, r.http}} {
			if !a.want || *a.addr != "" {
				continue
			}
			var err error
			if *a.addr, err = freeAddrNot(used); err != nil {
				return nil, err
			}
		}
		group[i] = p
	}
	return group, nil
}

// planDgraph gives each gatekeeper of group its Dgraph HTTP and gRPC
// addresses, reusing those of a stopped cluster in the same directory.
func planDgraph(group []*Proc, prev *State, used map[string]bool) error {
	for _, p := range group {
		if prev != nil {
			if q := prev.Proc(p.Name); q != nil {
				p.DgraphHTTPAddr, p.DgraphGRPCAddr = q.DgraphHTTPAddr, q.DgraphGRPCAddr
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

// freeAddrNot returns a loopback address for a process to bind, not in
// used (the addresses planned so far), and adds it to used.
func freeAddrNot(used map[string]bool) (string, error) {
	a, err := FreeAddrs(1, used)
	if err != nil {
		return "", err
	}
	return a[0], nil
}
