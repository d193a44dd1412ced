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
