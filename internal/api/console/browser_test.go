package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-db/weft/internal/testproc"
	"github.com/weft-db/weft/internal/testproc/browser"
)

// TestConsoleInBrowser starts `weft serve --demo`, opens the console in
// headless Chromium (installed with apt-get when missing and root), runs
// get_edges from the program form, checks the table against the API's own
// answer, switches to the graph view, expands a vertex with a click, opens
// the cluster view (under weft serve: this one process, its request rate
// from its own /metrics) and saves a screenshot of each view in
// browser.OutDir ($WEFT_TEST_OUT/console, default out/console at the repository root).
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts weft serve and a browser")
	}
	chromium := browser.Chromium(t)
	out := browser.OutDir(t, "console")
	os.Remove(filepath.Join(out, "failure.png")) // a past run's
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testproc.Start(t, testproc.Spec{
		Name: "serve", Path: bin, Ready: "weft serving",
		Args:    []string{"serve", "--demo", "--data-dir", filepath.Join(dir, "data"), "--grpc-addr", addrs[0], "--http-addr", addrs[1], "--dgraph-http", addrs[2]},
		LogPath: filepath.Join(dir, "serve.log"),
	})
	base := "http://" + addrs[1]
	// A schema and two nodes in the Dgraph face's data, for the DQL editor
	// and the schema view.
	resp, err := http.Post("http://"+addrs[2]+"/alter", "application/dql",
		strings.NewReader("name: string @index(exact, term) .\nknows: [uid] @reverse .\ntype Person { name knows }"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || !strings.Contains(string(b), "Success") {
		t.Fatalf("Dgraph alter: %d %s", resp.StatusCode, b)
	}
	resp.Body.Close()
	resp, err = http.Post("http://"+addrs[2]+"/mutate?commitNow=true", "application/json",
		strings.NewReader(`{"set": [{"name": "Ada", "knows": {"name": "Grace"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || !strings.Contains(string(b), "Success") {
		t.Fatalf("Dgraph mutate: %d %s", resp.StatusCode, b)
	}
	resp.Body.Close()

	// The API's own answers, to compare the console's with.
	const start = "person/alice"
	want := edgesOf(t, base, start)
	if len(want) == 0 {
		t.Fatalf("the demo's %s has no edges", start)
	}
	wantNodes := map[string]bool{start: true}
	for _, e := range want {
		wantNodes[e.Dst] = true
	}
	// The neighbour to expand: the first whose out-edges bring new vertices.
	var nbr string
	afterExpand := map[string]bool{}
	for _, e := range want {
		next := map[string]bool{}
		for n := range wantNodes {
			next[n] = true
		}
		for _, f := range edgesOf(t, base, e.Dst) {
			next[f.Dst] = true
		}
		if len(next) > len(wantNodes) {
			nbr, afterExpand = e.Dst, next
			break
		}
	}
	if nbr == "" {
		t.Fatalf("no neighbour of %s has out-edges to new vertices in the demo", start)
	}

	ctx := browser.New(t, chromium, 90*time.Second)
	began := time.Now()
	shot := func(name string) chromedp.Action { return browser.Shot(out, name) }
	waitJS := browser.Wait
	var rows []string
	var drawn, expanded int
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/"),
		waitJS(`window.weftConsole && window.weftConsole.ready === true`),
		chromedp.SetValue("#program", "get_edges", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("program").dispatchEvent(new Event("change"))`, nil),
		chromedp.WaitVisible("#param-node", chromedp.ByQuery),
		chromedp.SendKeys("#param-node", start, chromedp.ByQuery),
		chromedp.Click("#run", chromedp.ByQuery),
		waitJS(`window.weftConsole.runs === 1`),
		chromedp.Evaluate(`(() => {
			const ths = [...document.querySelectorAll("#rows thead th")].map((th) => th.textContent);
			const i = ths.indexOf("dst");
			return [...document.querySelectorAll("#rows tbody tr")].map((tr) => tr.cells[i].textContent);
		})()`, &rows),
		shot("query.png"),
		chromedp.Click("#show-graph", chromedp.ByQuery),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(`window.weftConsole.cy.nodes().length`, &drawn),
	)
	if err != nil {
		t.Fatalf("console: %v (server log %s)", err, filepath.Join(dir, "serve.log"))
	}
	var gotDst []string
	for _, e := range want {
		gotDst = append(gotDst, e.Dst)
	}
	if !slices.Equal(rows, gotDst) {
		t.Fatalf("the table's dst column %v, the API's get_edges answer %v", rows, gotDst)
	}
	if drawn != len(wantNodes) {
		t.Fatalf("graph view drew %d vertices, want %d (%s and its neighbours)", drawn, len(wantNodes), start)
	}

	// Click the neighbour's vertex on the canvas: its out-neighbours join.
	// The click is the browser's own mouse input at the vertex's on-screen
	// position, so Cytoscape maps it to the vertex as it would a user's.
	var at struct{ X, Y float64 }
	var member string
	err = chromedp.Run(ctx,
		// Scroll first: Cytoscape re-reads its canvas's offset on the
		// scroll event, which comes asynchronously.
		chromedp.Evaluate(`document.getElementById("cy").scrollIntoView({block: "center"})`, nil),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(fmt.Sprintf(`(() => {
			const box = document.getElementById("cy");
			const p = window.weftConsole.cy.getElementById(%q).renderedPosition();
			const r = box.getBoundingClientRect();
			const x = r.left + p.x, y = r.top + p.y;
			const target = document.elementFromPoint(x, y);
			if (!target || !box.contains(target)) throw new Error("the vertex at " + x + "," + y + " is not on screen");
			return {X: x, Y: y};
		})()`, nbr), &at),
		chromedp.ActionFunc(func(ctx context.Context) error { return chromedp.MouseClickXY(at.X, at.Y).Do(ctx) }),
		waitJS(fmt.Sprintf(`window.weftConsole.cy.getElementById(%q).hasClass("expanded")`, nbr)),
		chromedp.Evaluate(`window.weftConsole.cy.nodes().length`, &expanded),
		chromedp.Sleep(300*time.Millisecond),
		shot("graph.png"),
		chromedp.Click("#nav-cluster", chromedp.ByQuery),
		waitJS(`document.querySelectorAll("#status-table tr").length > 5 && window.weftConsole.samples >= 4 &&
			document.querySelectorAll("#members tbody tr").length === 1 &&
			window.weftConsole.cluster && window.weftConsole.cluster.requests > 0`),
		chromedp.Text("#members tbody", &member, chromedp.ByQuery),
		shot("cluster.png"),
	)
	if err != nil {
		var status, dbg string
		chromedp.Run(ctx, chromedp.Text("#result-status", &status, chromedp.ByQuery), shot("failure.png"),
			chromedp.Evaluate(`JSON.stringify({taps: window.weftConsole.taps, expanded: [...window.weftConsole.expanded]})`, &dbg))
		t.Logf("vertex taps seen by the console: %s", dbg)
		t.Fatalf("console: %v (status line %q, clicked at %+v; failure.png in %s)", err, status, at, out)
	}
	if !strings.Contains(member, "this server") || !strings.Contains(member, "server") {
		t.Fatalf("cluster view's member row %q, want this server", member)
	}
	if expanded != len(afterExpand) {
		t.Fatalf("after expanding %s the graph has %d vertices, want %d", nbr, expanded, len(afterExpand))
	}

	// DQL through the Dgraph face, then both queries are in the history.
	var dqlNames []string
	var dqlNodes, history int
	err = chromedp.Run(ctx,
		chromedp.Click("#nav-query", chromedp.ByQuery),
		chromedp.SetValue("#mode", "dql", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("mode").dispatchEvent(new Event("change"))`, nil),
		chromedp.SetValue("#dql", `{ q(func: has(knows)) { uid name knows { uid name } } }`, chromedp.ByQuery),
		chromedp.Click("#run", chromedp.ByQuery),
		waitJS(`window.weftConsole.runs === 2`),
		chromedp.Evaluate(`(() => {
			const ths = [...document.querySelectorAll("#rows thead th")].map((th) => th.textContent);
			const i = ths.indexOf("name");
			return [...document.querySelectorAll("#rows tbody tr")].map((tr) => tr.cells[i].textContent);
		})()`, &dqlNames),
		chromedp.Evaluate(`window.weftConsole.cy.nodes().length`, &dqlNodes),
		chromedp.Evaluate(`JSON.parse(localStorage.getItem("weft.console.history")).length`, &history),
	)
	if err != nil {
		t.Fatalf("console, DQL: %v", err)
	}
	if !slices.Equal(dqlNames, []string{"Ada"}) || dqlNodes != 2 || history != 2 {
		t.Fatalf("DQL: table names %v (want [Ada]), %d vertices drawn (want 2), %d history entries (want 2)", dqlNames, dqlNodes, history)
	}
	// The schema view: the native graph's size and programs, the Dgraph
	// face's predicates (with their indexes) and types; counting nodes per
	// predicate; a click on a predicate queries its nodes.
	var summary, programs string
	var preds, types [][]string
	var progRows, queried int
	err = chromedp.Run(ctx,
		chromedp.Click("#nav-schema", chromedp.ByQuery),
		waitJS(`window.weftConsole.schemaLoaded && document.querySelectorAll("#schema-predicates tbody tr").length > 0`),
		chromedp.Text("#native-summary", &summary, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#schema-programs tbody tr").length`, &progRows),
		chromedp.Evaluate(`JSON.stringify(window.weftConsole.programs.map((p) => p.name))`, &programs),
		chromedp.Click("#schema-count", chromedp.ByQuery),
		waitJS(`window.weftConsole.schema.counts !== null`),
		chromedp.Evaluate(`[...document.querySelectorAll("#schema-predicates tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent))`, &preds),
		chromedp.Evaluate(`[...document.querySelectorAll("#schema-types tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent))`, &types),
		chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
		shot("schema.png"),
		chromedp.Evaluate(`[...document.querySelectorAll("#schema-predicates tbody tr")].find((tr) => tr.cells[0].textContent === "name").click()`, nil),
		waitJS(`window.weftConsole.runs === 3`),
		chromedp.Evaluate(`document.querySelectorAll("#rows tbody tr").length`, &queried),
	)
	if err != nil {
		t.Fatalf("console, schema: %v", err)
	}
	var st struct{ Vertices, Edges int64 }
	getJSON(t, base+"/v1/status", &st)
	if want := fmt.Sprintf("%d vertices, %d edges", st.Vertices, st.Edges); !strings.HasPrefix(summary, want) {
		t.Fatalf("schema view's native summary %q, want it to begin %q", summary, want)
	}
	var listed struct {
		Programs []struct{ Name string } `json:"programs"`
	}
	getJSON(t, base+"/v1/programs", &listed)
	if progRows != len(listed.Programs) || progRows == 0 {
		t.Fatalf("schema view lists %d programs (%s), the API %d", progRows, programs, len(listed.Programs))
	}
	row := map[string][]string{}
	for _, r := range preds {
		row[r[0]] = r
	}
	if r := row["name"]; len(r) != 5 || r[1] != "string" || r[2] != "exact, term" || r[4] != "2" {
		t.Fatalf("schema view's name row %q, want string, exact, term, 2 nodes (all rows %q)", r, preds)
	}
	if r := row["knows"]; len(r) != 5 || r[1] != "[uid]" || r[3] != "@reverse" || r[4] != "1" {
		t.Fatalf("schema view's knows row %q, want [uid], @reverse, 1 node (all rows %q)", r, preds)
	}
	if !slices.ContainsFunc(types, func(r []string) bool { return len(r) == 2 && r[0] == "Person" && r[1] == "name, knows" }) {
		t.Fatalf("schema view's types %q, want Person: name, knows", types)
	}
	if queried != 2 {
		t.Fatalf("clicking the name predicate queried %d nodes, want 2 (Ada, Grace)", queried)
	}
	t.Logf("browser run %v: %d rows, %d vertices, %d after expanding %s; screenshots in %s",
		time.Since(began).Round(time.Millisecond), len(rows), drawn, expanded, nbr, out)
}

type edge struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// edgesOf is the API's get_edges answer for node.
func edgesOf(t *testing.T, base, node string) []edge {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"node": node, "limit": 100})
	resp, err := http.Post(base+"/v1/run/get_edges", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ans struct {
		Result struct {
			Edges []edge `json:"edges"`
		} `json:"result"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &ans) != nil {
		t.Fatalf("get_edges %s: %d %s", node, resp.StatusCode, b)
	}
	return ans.Result.Edges
}

// getJSON GETs url and decodes its JSON answer into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, v) != nil {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
}
