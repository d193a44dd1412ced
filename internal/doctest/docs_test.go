package doctest_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weft-db/weft/internal/doctest"
	"github.com/weft-db/weft/internal/testproc"
)

// docOnly limits TestDocs to the files whose path (from the repository root)
// contains it: go test ./internal/doctest -run TestDocs -doc README.md
var docOnly = flag.String("doc", "", "run only the docs whose path contains this")

// root is the repository root, relative to this package.
const root = "../.."

// docFiles are the documents whose marked blocks run: the README, every
// docs/*.md and the Python client's README.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "clients", "python", "README.md")}, files...)
}

// TestDocs runs every document's runnable blocks against a fresh `weft
// serve --demo` per file and prints how many ran and passed. The README runs
// twice against its server: its tour must work again where it already ran.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and starts servers")
	}
	h := newHarness(t)
	var run, passed int
	var summary strings.Builder
	for _, path := range docFiles(t) {
		rel, _ := filepath.Rel(root, path)
		if !strings.Contains(rel, *docOnly) {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := doctest.Parse(src)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if len(blocks) == 0 {
			continue
		}
		times := 1
		if rel == "README.md" {
			times = 2
		}
		env := h.serve(t, rel, true, src)
		if slices.ContainsFunc(blocks, func(b doctest.Block) bool { return b.Lang == doctest.Python }) {
			env.Python = h.pythonFor(t)
		}
		for range times {
			rep, err := doctest.RunBlocks(context.Background(), blocks, env)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			for _, f := range rep.Failures() {
				t.Errorf("%s: %v\n--- code\n%s--- want\n%s--- got\n%s--- stderr\n%s", rel, f.Err, f.Code, f.Want, f.Got, f.Stderr)
			}
			run, passed = run+rep.Run, passed+rep.Passed
			fmt.Fprintf(&summary, "  %-32s %3d run %3d passed\n", rel, rep.Run, rep.Passed)
		}
	}
	t.Logf("doc examples:\n%s  %-32s %3d run %3d passed", summary.String(), "total", run, passed)
	if run == 0 {
		t.Fatal("no runnable blocks found: the marker or the file list is wrong")
	}
}

// plantedDoc is a doc whose expected output is the demo graph's.
const plantedDoc = "```sh doctest\nweft run --addr $WEFT_GRPC read_node_props '{\"node\": \"person/alice\", \"keys\": [\"name\", \"age\"]}'\n```\n\n" +
	"```output\n{\n  \"node\": \"person/alice\",\n  \"props\": {\n    \"age\": %d,\n    \"name\": \"Alice\"\n  }\n}\n```\n"

// TestDocsPlantedFailure checks that the harness fails when the graph or
// the expected output is not the doc's: the same doc passes against the
// demo graph, and fails against a server without it and with a wrong age.
func TestDocsPlantedFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and starts servers")
	}
	h := newHarness(t)
	for _, c := range []struct {
		name string
		demo bool
		age  int
		pass bool
	}{
		{"demo graph", true, 23, true},
		{"no demo graph", false, 23, false},
		{"wrong expected output", true, 24, false},
	} {
		env := h.serve(t, "planted-"+strings.ReplaceAll(c.name, " ", "-"), c.demo, nil)
		rep, err := doctest.RunFile(context.Background(), fmt.Appendf(nil, plantedDoc, c.age), env)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Run != 1 || (rep.Passed == 1) != c.pass {
			t.Errorf("%s: %d run, %d passed, want pass=%v: %+v", c.name, rep.Run, rep.Passed, c.pass, rep.Results)
		}
	}
}

// TestDocsPlantedGraphChange runs docs/programs-reference.md against a demo
// graph with one property changed (Alice one year older) and checks that the
// harness reports exactly the examples that show it.
func TestDocsPlantedGraphChange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and starts servers")
	}
	h := newHarness(t)
	env := h.serve(t, "planted-graph", true, nil)
	src, err := os.ReadFile(filepath.Join(root, "docs", "programs-reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	plant := "```sh doctest\nweft tx --addr $WEFT_GRPC 'set_vertex_prop person/alice age 24' > /dev/null\n```\n\n"
	rep, err := doctest.RunFile(context.Background(), append([]byte(plant), src...), env)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range rep.Failures() {
		failed = append(failed, strings.Fields(f.Code)[4])
	}
	if !slices.Equal(failed, []string{"read_node_props"}) || rep.Run < 10 {
		t.Fatalf("%d run, %d passed; failed %v, want only read_node_props (the example showing Alice's age)", rep.Run, rep.Passed, failed)
	}
	t.Logf("with Alice's age changed: %d run, %d passed, failed %v", rep.Run, rep.Passed, failed)
}

// harness builds weft once and starts servers for the docs.
type harness struct {
	bin    string
	python string
	once   sync.Once
}

func newHarness(t *testing.T) *harness {
	return &harness{bin: testproc.Build(t, "github.com/weft-db/weft/cmd/weft")}
}

// serve starts `weft serve` (with the demo graph when demo, and the flags of
// doc's serve directive) on free loopback ports for one file and returns the
// file's environment.
func (h *harness) serve(t *testing.T, name string, demo bool, doc []byte) doctest.Env {
	t.Helper()
	addrs, err := testproc.FreeAddrs(8)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), strings.ReplaceAll(name, "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := doctest.Env{BinDir: filepath.Dir(h.bin), HTTP: addrs[0], GRPC: addrs[1], Kronos: addrs[2],
		DgraphHTTP: addrs[3], DgraphGRPC: addrs[4], KVPeers: strings.Join(addrs[5:8], ","), Dir: dir}
	args := []string{"serve", "--in-memory", "--http-addr", addrs[0], "--grpc-addr", addrs[1]}
	if demo {
		args = append(args, "--demo")
	}
	args = append(args, doctest.ServeArgs(doc, func(v string) string { return env.Vars()[v] })...)
	testproc.Start(t, testproc.Spec{Name: "serve " + name, Path: h.bin, Args: args, Ready: "weft serving",
		LogPath: filepath.Join(dir, "serve.log")})
	return env
}

// pythonFor returns the interpreter of the Python client's venv with the
// kronos extra the Kronos examples need (testproc.Python): the Python
// examples are never skipped.
func (h *harness) pythonFor(t *testing.T) string {
	t.Helper()
	h.once.Do(func() { h.python = testproc.Python(t, "kronos") })
	return h.python
}
