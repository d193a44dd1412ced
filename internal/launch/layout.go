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

// addrField is one address of a process with the label up's table gives it.
type addrField struct {
	label string
	addr  *string
}

// addrFields are p's addresses (those its role has), labelled as up prints
// them: the main address first.
func addrFields(p *Proc) []addrField {
	main := map[string]string{"kronos": "grpc+raft", "coord": "grpc+raft", "postgres": "postgres",
		"shard": "cluster", "gatekeeper": "grpc"}[p.Role]
	if main == "" {
		main = "addr"
	}
	var out []addrField
	for _, a := range []addrField{{main, &p.Addr}, {"http", &p.HTTPAddr}, {"cluster", &p.PeerAddr},
		{"dgraph-http", &p.DgraphHTTPAddr}, {"dgraph-grpc", &p.DgraphGRPCAddr}} {
		if *a.addr != "" {
			out = append(out, a)
		}
	}
	return out
}

// addrLabels are p's addresses, each with what it serves.
func addrLabels(p *Proc) string {
	var parts []string
	for _, a := range addrFields(p) {
		parts = append(parts, a.label+" "+*a.addr)
	}
	return strings.Join(parts, "  ")
}

// labelMatches reports whether a --port label names the address labelled
// have ("grpc" and "raft" both name "grpc+raft").
func labelMatches(have, want string) bool {
	return have == want || (have == "grpc+raft" && (want == "grpc" || want == "raft"))
}

// setPorts gives the addresses named in ports ("NAME.LABEL" → port, as
// `weft cluster up --port gatekeeper-1.grpc=7500`) those loopback ports,
// after the others were planned (FreeAddrs or layOut) around them. A
// process restarted from prev keeps its addresses; a port given twice or
// in use is refused.
func setPorts(planned, prev *State, ports map[string]int) error {
	given := map[int]string{}
	for key, port := range ports {
		name, label, ok := strings.Cut(key, ".")
		if !ok || name == "" || label == "" {
			return fmt.Errorf("--port %s=%d: want NAME.LABEL=PORT, as gatekeeper-1.grpc=7500 (names and labels as up lists them)", key, port)
		}
		if port < 1 || port > 65535 {
			return fmt.Errorf("--port %s=%d: a port is in [1, 65535]", key, port)
		}
		if other, dup := given[port]; dup {
			return fmt.Errorf("--port: port %d is given to both %s and %s", port, other, key)
		}
		given[port] = key
		p := planned.Proc(name)
		if p == nil {
			var names []string
			for _, q := range planned.Procs {
				names = append(names, q.Name)
			}
			return fmt.Errorf("--port %s=%d: no process %q in this cluster (it has %s)", key, port, name, strings.Join(names, ", "))
		}
		var field *addrField
		var labels []string
		for _, a := range addrFields(p) {
			labels = append(labels, a.label)
			if labelMatches(a.label, label) {
				field = &a
			}
		}
		if field == nil {
			return fmt.Errorf("--port %s=%d: %s has no %q address (it has %s)", key, port, name, label, strings.Join(labels, ", "))
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if prev != nil && prev.Proc(name) != nil {
			if *field.addr != addr {
				return fmt.Errorf("--port %s=%d: %s restarts with its address %s (a restarted cluster keeps its addresses; remove its directory to lay it out anew)",
					key, port, name, *field.addr)
			}
			continue
		}
		for _, q := range planned.Procs {
			for _, a := range addrFields(q) {
				if *a.addr == addr && a.addr != field.addr {
					return fmt.Errorf("--port %s=%d: %s's %s address is already %s", key, port, q.Name, a.label, addr)
				}
			}
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("--port %s=%d: port %d is in use: stop what holds it or choose another", key, port, port)
		}
		l.Close()
		*field.addr = addr
	}
	return nil
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
