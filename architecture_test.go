package weft_test

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is this module's path.
const module = "github.com/weft-db/weft"

// pkgInfo is what the import rules look at of one package of the module:
// the packages its non-test code imports.
type pkgInfo struct {
	imports []string
}

// loadModule reads every package of the module below the current directory
// (the module root), skipping testdata and hidden folders.
func loadModule(t *testing.T) map[string]pkgInfo {
	t.Helper()
	pkgs := map[string]pkgInfo{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || name == "clients" || name == "docs") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		ip := module
		if path != "." {
			ip += "/" + filepath.ToSlash(path)
		}
		pkgs[ip] = pkgInfo{imports: p.Imports}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("read %d packages of the module; run from the module root", len(pkgs))
	}
	return pkgs
}

// deps returns every package path reaches through non-test imports (the
// module's packages and the others), each with a package importing it.
func deps(pkgs map[string]pkgInfo, path string) map[string]string {
	out := map[string]string{}
	todo := []string{path}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, imp := range pkgs[p].imports {
			if _, seen := out[imp]; seen {
				continue
			}
			out[imp] = p
			if _, ours := pkgs[imp]; ours {
				todo = append(todo, imp)
			}
		}
	}
	return out
}

// under reports whether pkg is prefix or a package below it.
func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func in(m string) string { return module + "/" + m }

// selectPkgs returns the module's packages under any of prefixes, sorted.
func selectPkgs(pkgs map[string]pkgInfo, prefixes ...string) []string {
	var out []string
	for p := range pkgs {
		for _, pre := range prefixes {
			if under(p, in(pre)) {
				out = append(out, p)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// rule is one line of docs/architecture.md's "What may import what".
type rule struct {
	name string
	// who are the packages the rule binds (prefixes below the module).
	who []string
	// except are packages of who the rule does not bind.
	except []string
	// direct: only the packages' own imports count, not what those import.
	direct bool
	// forbidden are import paths (a module package as "internal/x", or any
	// other path as written) that may not be reached; a prefix forbids the
	// packages below it too.
	forbidden []string
	// allowedOnly, when set, lists the only module packages (prefixes) that
	// may be reached.
	allowedOnly []string
}

var rules = []rule{
	{
		name:        "clients speak the wire and values only",
		who:         []string{"client"},
		allowedOnly: []string{"client", "internal/wire", "internal/value", "internal/vclock", "internal/kv/kvcore", "internal/invariants"},
	},
	{
		name:        "the wire layer (generated messages, codes, the coordinator's client) reaches only wire and values",
		who:         []string{"internal/wire"},
		allowedOnly: []string{"internal/wire", "internal/value"},
	},
	{
		name: "pure values, data structures and parsers reach no transport and no role",
		who: []string{"internal/value", "internal/vclock", "internal/invariants", "internal/graph", "internal/txn",
			"internal/nodeprog", "internal/monitor", "internal/check", "internal/rdf", "internal/engineapi",
			"internal/dgraph/schema", "internal/dgraph/dql", "internal/dgraph/index", "internal/kv/kvcore"},
		except:    []string{"internal/nodeprog/progtest"},
		forbidden: []string{"net", "net/http", "google.golang.org/grpc", "internal/wire", "internal/store", "internal/kronos", "internal/gatekeeper", "internal/shard", "internal/engine"},
	},
	{
		name:      "role cores and their shells import no transport (the seam is the caller's)",
		who:       []string{"internal/gatekeeper", "internal/shard"},
		direct:    true,
		forbidden: []string{"net", "net/http", "google.golang.org/grpc", "internal/wire"},
	},
	{
		name:      "role cores and their shells never reach the wiring, the faces or the tools",
		who:       []string{"internal/gatekeeper", "internal/shard", "internal/kronos", "internal/order", "internal/coord", "internal/store"},
		except:    []string{"internal/store/storetest", "internal/store/postgres/pgtest", "internal/store/postgres/pgserver"},
		forbidden: []string{"internal/engine", "internal/roles", "internal/launch", "internal/api", "internal/dgraph", "internal/kv", "internal/sim", "internal/faults", "internal/bench"},
	},
	{
		name:      "the engine wires roles and knows no face",
		who:       []string{"internal/engine", "internal/bulk"},
		forbidden: []string{"internal/api", "internal/dgraph", "internal/kv", "internal/roles", "internal/launch"},
	},
	{
		name:      "the Dgraph wing reads and commits through the engine's contract (engineapi), never the engine",
		who:       []string{"internal/dgraph"},
		forbidden: []string{"internal/engine"},
	},
	{
		name:      "the DQL and schema parsers and the tokenizers reach not even the contract",
		who:       []string{"internal/dgraph/schema", "internal/dgraph/dql", "internal/dgraph/index"},
		forbidden: []string{"internal/engineapi", "internal/engine"},
	},
	{
		name: "only tools and tests reach the test harnesses and the simulation",
		who:  []string{"internal", "client"},
		except: []string{"internal/sim", "internal/faults", "internal/faultproxy", "internal/bench", "internal/clustertest",
			"internal/testproc", "internal/api/apitest", "internal/nodeprog/progtest", "internal/store/storetest", "internal/store/postgres/pgtest"},
		forbidden: []string{"internal/sim", "internal/faults", "internal/bench", "internal/clustertest", "internal/testproc",
			"internal/api/apitest", "internal/nodeprog/progtest", "internal/store/storetest", "internal/store/postgres/pgtest"},
	},
}

// forbiddenPath expands a rule's path: a module package or a plain import path.
func forbiddenPath(f string) string {
	if strings.HasPrefix(f, "internal/") || strings.HasPrefix(f, "client/") || strings.HasPrefix(f, "cmd/") {
		return in(f)
	}
	return f
}

// binds reports whether rule r binds package p.
func (r rule) binds(p string) bool {
	return slices.ContainsFunc(r.who, func(w string) bool { return under(p, in(w)) }) &&
		!slices.ContainsFunc(r.except, func(e string) bool { return under(p, in(e)) })
}

// violations lists what package p reaches against rule r, one line each.
func (r rule) violations(pkgs map[string]pkgInfo, p string) []string {
	reached := deps(pkgs, p)
	if r.direct {
		reached = map[string]string{}
		for _, imp := range pkgs[p].imports {
			reached[imp] = p
		}
	}
	var out []string
	for dep, via := range reached {
		bad := r.allowedOnly != nil && under(dep, module) &&
			!slices.ContainsFunc(r.allowedOnly, func(a string) bool { return under(dep, in(a)) })
		for _, f := range r.forbidden {
			bad = bad || under(dep, forbiddenPath(f))
		}
		if bad {
			out = append(out, strings.TrimPrefix(p, module+"/")+" reaches "+dep+" (imported by "+strings.TrimPrefix(via, module+"/")+")")
		}
	}
	slices.Sort(out)
	return out
}

// known are violations not yet mended, each with what mends it
// (docs/architecture.md lists them too). The test fails when one of them
// is gone, so that it leaves this list with its mend.
var known = map[string]string{}

// TestImportRules checks the rules of docs/architecture.md ("What may
// import what") on the non-test code of every package.
func TestImportRules(t *testing.T) {
	pkgs := loadModule(t)
	seen := map[string]bool{}
	for _, r := range rules {
		bound := 0
		for _, p := range selectPkgs(pkgs, r.who...) {
			if !r.binds(p) {
				continue
			}
			bound++
			for _, v := range r.violations(pkgs, p) {
				if _, ok := known[v]; ok {
					seen[v] = true
					continue
				}
				t.Errorf("%s: %s", r.name, v)
			}
		}
		if bound == 0 {
			t.Errorf("rule %q binds no package", r.name)
		}
	}
	for v, mend := range known {
		if !seen[v] {
			t.Errorf("known violation %q (%s) is gone: take it off the list", v, mend)
		}
	}
}

// TestImportRulesCatch plants forbidden imports in a copy of the package
// graph and checks that some rule reports each, so the rules above cannot
// pass by matching nothing.
func TestImportRulesCatch(t *testing.T) {
	pkgs := loadModule(t)
	cases := []struct{ from, to string }{
		{"client/weft", in("internal/engine")},
		{"client/weft", in("internal/coord")},
		{"client/kv", in("internal/kv")},
		{"internal/wire/apicode", in("internal/engine")},
		{"internal/graph", "net/http"},
		{"internal/gatekeeper", "google.golang.org/grpc"},
		{"internal/dgraph/exec", in("internal/engine")},
		{"internal/dgraph/dql", in("internal/engineapi")},
		{"internal/engine", in("internal/api")},
		{"internal/kronos", in("internal/dgraph")},
		{"internal/api", in("internal/sim")},
	}
	for _, c := range cases {
		g := make(map[string]pkgInfo, len(pkgs))
		for k, v := range pkgs {
			g[k] = v
		}
		from := in(c.from)
		g[from] = pkgInfo{imports: append(slices.Clone(pkgs[from].imports), c.to)}
		caught := false
		for _, r := range rules {
			if r.binds(from) && len(r.violations(g, from)) > len(r.violations(pkgs, from)) {
				caught = true
			}
		}
		if !caught {
			t.Errorf("no rule catches %s importing %s", c.from, c.to)
		}
	}
}

// TestEveryPackageHasALine checks that docs/architecture.md names every
// package of the module: by its path in backticks, or on the line of an
// ancestor that also names the rest of the path (`pebble/` on the store's
// line, `weftpb` on the wire's), so a new package cannot land unexplained.
func TestEveryPackageHasALine(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	for p := range loadModule(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" || documented(lines, rel) {
			continue
		}
		t.Errorf("docs/architecture.md does not name package %s", rel)
	}
}

// documented reports whether some line names rel itself, or an ancestor of
// rel (as `a/b`, `a/b/` or `a/b/*…`) together with the rest of rel's path
// or its last element (as `rest`, `rest/`).
func documented(lines []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, l := range lines {
		if strings.Contains(l, "`"+rel+"`") || strings.Contains(l, "`"+rel+"/`") {
			return true
		}
		for i := len(parts) - 1; i >= 1; i-- {
			anc := strings.Join(parts[:i], "/")
			if !strings.Contains(l, "`"+anc+"`") && !strings.Contains(l, "`"+anc+"/") {
				continue
			}
			rest, last := strings.Join(parts[i:], "/"), parts[len(parts)-1]
			for _, name := range []string{rest, last} {
				if strings.Contains(l, "`"+name+"`") || strings.Contains(l, "`"+name+"/`") {
					return true
				}
			}
		}
	}
	return false
}

// TestDocumentedCatches checks documented on made-up packages, so the test
// above cannot pass by matching everything.
func TestDocumentedCatches(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	for rel, want := range map[string]bool{
		"internal/store/pebble": true, "internal/wire/weftpb": true, "internal/dgraph/exec": true,
		"internal/store/nosuch": false, "internal/nosuch": false, "examples/nosuch": false, "internal/wire/nosuchpb": false,
	} {
		if got := documented(lines, rel); got != want {
			t.Errorf("documented(%s) = %v, want %v", rel, got, want)
		}
	}
}
