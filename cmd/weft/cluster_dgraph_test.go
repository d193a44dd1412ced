package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/testproc"
)

// TestClusterUpDgraph: `weft cluster up --dgraph` gives every gatekeeper
// (registered with the coordinator: the --coord member path, behind an
// engine.Switch) Dgraph's HTTP API; the schema and data go in through one
// gatekeeper and a 2-hop query answers the same through each.
func TestClusterUpDgraph(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	dir := filepath.Join(t.TempDir(), "c")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--dir", dir)...).CombinedOutput()
		if err != nil {
			t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		if st, err := launch.Load(dir); err == nil {
			for _, p := range st.Procs {
				if p.Alive() {
					_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
				}
			}
		}
	})
	out := run("cluster", "up", "--gatekeepers", "2", "--shards", "2", "--kronos-replicas", "1", "--coord-replicas", "1",
		"--dgraph", "--dgraph-placement", "predicate")
	st, err := launch.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	gks := st.Of("gatekeeper")
	if !st.Dgraph || st.DgraphPlacement != "predicate" || len(gks) != 2 {
		t.Fatalf("state: dgraph %v placement %q, %d gatekeepers", st.Dgraph, st.DgraphPlacement, len(gks))
	}
	for _, p := range gks {
		if p.DgraphHTTPAddr == "" || p.DgraphGRPCAddr == "" || !strings.Contains(out, "Dgraph HTTP http://"+p.DgraphHTTPAddr) {
			t.Fatalf("%s: Dgraph addresses %q %q not planned or not listed:\n%s", p.Name, p.DgraphHTTPAddr, p.DgraphGRPCAddr, out)
		}
	}
	post := func(addr, path, ctype, body string) map[string]any {
		t.Helper()
		resp, err := http.Post("http://"+addr+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env map[string]any
		if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != 200 || env["errors"] != nil {
			t.Fatalf("POST %s%s: %d %s", addr, path, resp.StatusCode, b)
		}
		return env
	}
	post(gks[0].DgraphHTTPAddr, "/alter", "application/dql", "name: string @index(exact) .\ndirected_by: [uid] @reverse .")
	post(gks[1].DgraphHTTPAddr, "/mutate?commitNow=true", "application/rdf", `{ set {
		_:r <name> "Ridley Scott" .
		_:a <name> "Alien" .
		_:a <directed_by> _:r .
		_:b <name> "Blade Runner" .
		_:b <directed_by> _:r .
	} }`)
	const q = `{ q(func: eq(name, "Alien")) { name directed_by { name ~directed_by (orderasc: name) { name } } } }`
	const want = `{"q":[{"directed_by":[{"name":"Ridley Scott","~directed_by":[{"name":"Alien"},{"name":"Blade Runner"}]}],"name":"Alien"}]}`
	for _, p := range gks {
		env := post(p.DgraphHTTPAddr, "/query", "application/dql", q)
		got, _ := json.Marshal(env["data"])
		if string(got) != want {
			t.Errorf("%s answers %s, want %s", p.Name, got, want)
		}
	}
	// Each gatekeeper serves the web console, whose DQL editor reaches
	// that gatekeeper's Dgraph face.
	for _, p := range gks {
		resp, err := http.Get("http://" + p.HTTPAddr + "/")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "<html") {
			t.Fatalf("%s: GET / = %d %q, not the console", p.Name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		env := post(p.HTTPAddr, "/console/dgraph/query", "application/dql", q)
		if got, _ := json.Marshal(env["data"]); string(got) != want {
			t.Errorf("%s: the console's DQL answers %s, want %s", p.Name, got, want)
		}
	}
	checkConsoleClusterView(t, gks, st.Of("shard"))
	// Dgraph's /moveTablet moves a predicate between the shard processes
	// online; both gatekeepers answer the same afterwards, and a mutation
	// through the other gatekeeper (whose directory is stale) lands.
	for _, tablet := range []string{"name", "directed_by"} {
		moved := false
		for group := 1; group <= 2 && !moved; group++ {
			resp, err := http.Get(fmt.Sprintf("http://%s/moveTablet?tablet=%s&group=%d", gks[0].DgraphHTTPAddr, tablet, group))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == 200 && strings.Contains(string(b), "moved from group"):
				moved = true
			case resp.StatusCode == 200 && strings.Contains(string(b), "is already in group"):
			default:
				t.Fatalf("/moveTablet %s to group %d: %d %s", tablet, group, resp.StatusCode, b)
			}
		}
		if !moved {
			t.Fatalf("%s did not move", tablet)
		}
	}
	post(gks[1].DgraphHTTPAddr, "/mutate?commitNow=true", "application/rdf", `{ set {
		_:c <name> "Cabaret" .
		_:c <directed_by> _:f .
		_:f <name> "Bob Fosse" .
	} }`)
	for _, p := range gks {
		env := post(p.DgraphHTTPAddr, "/query", "application/dql", q)
		got, _ := json.Marshal(env["data"])
		if string(got) != want {
			t.Errorf("%s answers %s after the moves, want %s", p.Name, got, want)
		}
		env = post(p.DgraphHTTPAddr, "/query", "application/dql", `{ q(func: eq(name, "Cabaret")) { directed_by { name } } }`)
		if got, _ := json.Marshal(env["data"]); string(got) != `{"q":[{"directed_by":[{"name":"Bob Fosse"}]}]}` {
			t.Errorf("%s answers %s for the mutation after the moves", p.Name, got)
		}
	}
	status := run("cluster", "status")
	for _, p := range gks {
		if !strings.Contains(status, "Dgraph HTTP http://"+p.DgraphHTTPAddr) {
			t.Errorf("status does not list %s's Dgraph address:\n%s", p.Name, status)
		}
	}
	run("cluster", "down")
}
