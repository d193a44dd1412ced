package console

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDistUpToDate rebuilds web/console from source (npm ci && npm run
// build, in a copy) and fails when the committed dist/ differs, so the
// embedded console cannot go stale. It needs node and npm on PATH and the
// npm registry (or a warm npm cache); -short skips it.
func TestDistUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not rebuilding the console")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("no npm on PATH: install node and npm (node 20) to check the console's dist")
	}
	src := filepath.Join("..", "..", "..", "web", "console")
	work := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "build.mjs", "src"} {
		copyTree(t, filepath.Join(src, name), filepath.Join(work, name))
	}
	out := filepath.Join(work, "dist")
	for _, args := range [][]string{{"ci", "--no-audit", "--no-fund", "--loglevel=error"}, {"run", "build"}} {
		cmd := exec.Command("npm", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "WEFT_CONSOLE_OUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, b)
		}
	}
	want := readTree(t, out)
	got := readTree(t, "dist")
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("dist/%s differs from a fresh build: run `make console` and commit internal/api/console/dist", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("dist/%s is not in a fresh build: run `make console` and commit internal/api/console/dist", name)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
