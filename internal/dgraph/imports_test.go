package dgraph

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is this module's path; moduleRoot is its directory seen from this
// package's.
const (
	module     = "github.com/weft-db/weft"
	moduleRoot = "../.."
)

// wing is the Dgraph wing: this package and its sub-packages.
var wing = []string{"", "schema", "dql", "index", "exec", "api"}

// TestWingReadsThroughEngineAPI checks the wing's edge to the engine: no
// package of the wing depends on the engine's implementation
// (internal/engine), directly or through another package — it reads and
// commits through the contract of package engineapi (the DQL packages
// through dgraph.Reader). Only non-test code counts: tests open a real
// engine. The parsers (schema, dql) and the tokenizers (index) reach
// nothing of the engine, not even the contract.
func TestWingReadsThroughEngineAPI(t *testing.T) {
	forbidden := map[string][]string{}
	for _, sub := range wing {
		forbidden[sub] = []string{module + "/internal/engine"}
	}
	for _, sub := range []string{"schema", "dql", "index"} {
		forbidden[sub] = append(forbidden[sub], module+"/internal/engineapi")
	}
	for _, sub := range wing {
		path := module + "/internal/dgraph"
		if sub != "" {
			path += "/" + sub
		}
		deps, err := moduleDeps(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range forbidden[sub] {
			if via, ok := deps[f]; ok {
				t.Errorf("%s depends on %s (imported by %s)", path, f, via)
			}
		}
	}
}

// moduleDeps returns the packages of this module that path depends on
// through its non-test code, each with a package importing it.
func moduleDeps(path string) (map[string]string, error) {
	deps := map[string]string{}
	todo := []string{path}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		pkg, err := build.ImportDir(filepath.Join(moduleRoot, strings.TrimPrefix(p, module+"/")), 0)
		if err != nil {
			return nil, err
		}
		for _, imp := range pkg.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if _, seen := deps[imp]; !seen {
				deps[imp] = p
				todo = append(todo, imp)
			}
		}
	}
	return deps, nil
}

// TestWingListed keeps wing in step with the sub-packages on disk.
func TestWingListed(t *testing.T) {
	dirs, err := filepath.Glob("*/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dirs {
		got = append(got, filepath.Dir(d))
	}
	want := slices.Clone(wing[1:])
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sub-packages with a doc.go %v, the test's wing %v", got, want)
	}
}
