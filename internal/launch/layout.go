package launch

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Port layout from Config.BasePort B: role k of the roles table (kronos 0,
// coord 1, postgres 2, shard 3, gatekeeper 4) has the block B+100k, its
// instance i (0-based) the ten ports B+100k+10i+j, j the address:
//
//	0 main (a replica's API and raft, a shard's cluster protocol, a
//	  gatekeeper's Weft gRPC API, PostgreSQL)
//	1 HTTP (health and metrics; a gatekeeper's Weft HTTP/JSON API)
//	2 a gatekeeper's cluster protocol
//	3, 4 a gatekeeper's Dgraph HTTP and gRPC APIs (--dgraph)
//
// So B=20000 puts kronos-1 on 20000 (HTTP 20001), coord-1 on 20100
// (20101), PostgreSQL on 20200, shard-1 on 20300, gatekeeper-1's gRPC on
// 20400 and its HTTP on 20401. docs/operations.md has the table.
const (
	// portsPerRole is a role's block; portsPerProc an instance's.
	portsPerRole, portsPerProc = 100, 10
)

// layOut gives every process of planned not restarted from prev its
// addresses from base, refusing a port in use or beyond the block.
func layOut(planned, prev *State, base int) error {
	if base < 1024 || base+len(roles)*portsPerRole > 65536 {
		return fmt.Errorf("--base-port %d: the layout takes ports %d to %d; choose a base in [1024, %d]",
			base, base, base+len(roles)*portsPerRole-1, 65536-len(roles)*portsPerRole)
	}
	for k, r := range roles {
		for _, p := range planned.Of(r.name) {
			if prev != nil && prev.Proc(p.Name) != nil {
				continue // a restart keeps its addresses
			}
			if p.Index >= portsPerRole/portsPerProc {
				return fmt.Errorf("--base-port: at most %d processes per role, %s is one more", portsPerRole/portsPerProc, p.Name)
			}
			for j, a := range []struct {
				addr *string
				what string
			}{{&p.Addr, "main"}, {&p.HTTPAddr, "HTTP"}, {&p.PeerAddr, "cluster-protocol"},
				{&p.DgraphHTTPAddr, "Dgraph HTTP"}, {&p.DgraphGRPCAddr, "Dgraph gRPC"}} {
				if *a.addr == "" {
					continue // the role has no such address
				}
				port := base + k*portsPerRole + p.Index*portsPerProc + j
				addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
				l, err := net.Listen("tcp", addr)
				if err != nil {
					return fmt.Errorf("--base-port %d: port %d (%s's %s address) is in use: stop what holds it or choose another --base-port",
						base, port, p.Name, a.what)
				}
				l.Close()
				*a.addr = addr
			}
		}
	}
	return nil
}

// addrLabels are p's addresses, each with what it serves.
func addrLabels(p *Proc) string {
	main := map[string]string{"kronos": "grpc+raft", "coord": "grpc+raft", "postgres": "postgres",
		"shard": "cluster", "gatekeeper": "grpc"}[p.Role]
	if main == "" {
		main = "addr"
	}
	parts := []string{main + " " + p.Addr}
	for _, a := range []struct{ label, addr string }{{"http", p.HTTPAddr}, {"cluster", p.PeerAddr},
		{"dgraph-http", p.DgraphHTTPAddr}, {"dgraph-grpc", p.DgraphGRPCAddr}} {
		if a.addr != "" {
			parts = append(parts, a.label+" "+a.addr)
		}
	}
	return strings.Join(parts, "  ")
}

// printProcs writes the table of procs: role, name, pid, labelled
// addresses, log.
func printProcs(out io.Writer, procs []*Proc) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  ROLE\tNAME\tPID\tADDRESSES\tLOG")
	for _, p := range procs {
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\t%s\n", p.Role, p.Name, p.Pid, addrLabels(p), p.Log)
	}
	w.Flush()
}
