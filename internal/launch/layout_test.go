package launch

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestLayOut: --base-port's documented layout, and a port in use refused
// with the process and address it was for.
func TestLayOut(t *testing.T) {
	c := DefaultConfig(t.TempDir())
	c.Kronos, c.Coord, c.Gatekeepers, c.Shards, c.Dgraph = 3, 1, 2, 2, true
	p, err := FreePort() // in [12000, 32768): a base below it has its 500 ports
	if err != nil {
		t.Fatal(err)
	}
	base := p - p%1000
	c.BasePort = base
	st, err := plan(c.Dir, &c, nil)
	if err != nil {
		t.Skipf("a port of the layout from %d is in use: %v", base, err)
	}
	want := map[string][]int{ // name: main, http, peer, dgraph http, dgraph grpc (-1: none)
		"kronos-1":     {0, 1, -1, -1, -1},
		"kronos-3":     {20, 21, -1, -1, -1},
		"coord-1":      {100, 101, -1, -1, -1},
		"postgres-1":   {200, -1, -1, -1, -1},
		"shard-2":      {310, 311, -1, -1, -1},
		"gatekeeper-1": {400, 401, 402, 403, 404},
		"gatekeeper-2": {410, 411, 412, 413, 414},
	}
	for name, offs := range want {
		p := st.Proc(name)
		if p == nil {
			t.Fatalf("no %s planned", name)
		}
		for j, a := range []string{p.Addr, p.HTTPAddr, p.PeerAddr, p.DgraphHTTPAddr, p.DgraphGRPCAddr} {
			w := ""
			if offs[j] >= 0 {
				w = net.JoinHostPort("127.0.0.1", itoa(base+offs[j]))
			}
			if a != w {
				t.Errorf("%s address %d: %q, want %q", name, j, a, w)
			}
		}
	}
	var out bytes.Buffer
	printProcs(&out, st.Procs)
	for _, w := range []string{"ROLE", "gatekeeper-1", "grpc 127.0.0.1:" + itoa(base+400), "http 127.0.0.1:" + itoa(base+401),
		"cluster 127.0.0.1:" + itoa(base+402), "grpc+raft 127.0.0.1:" + itoa(base+100), "logs/coord-1.log"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, out.String())
		}
	}

	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(base+101)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = plan(c.Dir, &c, nil)
	if err == nil || !strings.Contains(err.Error(), "port "+itoa(base+101)+" (coord-1's HTTP address) is in use") {
		t.Fatalf("plan with coord-1's HTTP port taken: %v", err)
	}
	c.BasePort = 65100
	if _, err := plan(c.Dir, &c, nil); err == nil || !strings.Contains(err.Error(), "choose a base in") {
		t.Fatalf("base port too high: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSetPorts: --port gives one address its port, over free ports and over
// --base-port's layout, and refuses each bad request with what was wrong.
func TestSetPorts(t *testing.T) {
	c := DefaultConfig(t.TempDir())
	c.Kronos, c.Coord, c.Gatekeepers, c.Shards, c.Dgraph = 1, 1, 2, 1, true
	var free []int
	for len(free) < 3 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		free = append(free, p)
	}
	addr := func(p int) string { return net.JoinHostPort("127.0.0.1", itoa(p)) }

	c.Ports = map[string]int{"gatekeeper-1.grpc": free[0], "gatekeeper-1.http": free[1], "kronos-1.raft": free[2]}
	st, err := plan(c.Dir, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, k := st.Proc("gatekeeper-1"), st.Proc("kronos-1")
	if g.Addr != addr(free[0]) || g.HTTPAddr != addr(free[1]) || k.Addr != addr(free[2]) {
		t.Fatalf("given ports not used: gatekeeper-1 %s %s, kronos-1 %s; want %v", g.Addr, g.HTTPAddr, k.Addr, free)
	}
	seen := map[string]string{}
	for _, p := range st.Procs {
		for _, a := range addrFields(p) {
			if other, dup := seen[*a.addr]; dup {
				t.Errorf("%s is both %s and %s.%s", *a.addr, other, p.Name, a.label)
			}
			seen[*a.addr] = p.Name + "." + a.label
		}
	}

	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := p - p%1000
	c.BasePort = base
	c.Ports = map[string]int{"gatekeeper-2.dgraph-http": free[0]}
	st, err = plan(c.Dir, &c, nil)
	if err != nil {
		t.Skipf("a port of the layout from %d is in use: %v", base, err)
	}
	if g := st.Proc("gatekeeper-2"); g.DgraphHTTPAddr != addr(free[0]) || g.Addr != addr(base+410) {
		t.Fatalf("over --base-port: gatekeeper-2 dgraph-http %s grpc %s, want %s and %s", g.DgraphHTTPAddr, g.Addr, addr(free[0]), addr(base+410))
	}
	c.BasePort = 0

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		ports map[string]int
		want  string
	}{
		{map[string]int{"gatekeeper-1": free[0]}, "want NAME.LABEL=PORT"},
		{map[string]int{"gatekeeper-1.grpc": 70000}, "a port is in [1, 65535]"},
		{map[string]int{"gatekeeper-1.grpc": free[0], "gatekeeper-2.grpc": free[0]}, "is given to both"},
		{map[string]int{"gatekeeper-9.grpc": free[0]}, `no process "gatekeeper-9" in this cluster (it has kronos-1, coord-1`},
		{map[string]int{"postgres-1.http": free[0]}, `postgres-1 has no "http" address (it has postgres)`},
		{map[string]int{"shard-1.cluster": held}, "port " + itoa(held) + " is in use"},
	} {
		c.Ports = tc.ports
		if _, err := plan(c.Dir, &c, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--port %v: %v, want an error with %q", tc.ports, err, tc.want)
		}
	}

	// A restarted cluster keeps its addresses: the same port is accepted, another refused.
	c.Ports = map[string]int{"gatekeeper-1.grpc": free[0]}
	prev, err := plan(c.Dir, &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan(c.Dir, &c, prev); err != nil {
		t.Fatalf("restart with the same --port: %v", err)
	}
	c.Ports = map[string]int{"gatekeeper-1.grpc": free[1]}
	if _, err := plan(c.Dir, &c, prev); err == nil || !strings.Contains(err.Error(), "restarts with its address "+addr(free[0])) {
		t.Fatalf("restart with another --port: %v", err)
	}
}
