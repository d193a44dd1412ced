package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	const rev = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	for _, tc := range []struct {
		name string
		v    buildVersion
		want string
	}{
		{"devel with vcs", buildVersion{Version: "(devel)", Revision: rev, Time: "2026-12-03T07:10:00Z", Modified: "false", Go: "go1.26.8", Platform: "linux/amd64"},
			"devel (revision 1a2b3c4d5e6f, 2026-12-03T07:10:00Z; go1.26.8 linux/amd64)"},
		{"modified", buildVersion{Version: "(devel)", Revision: rev, Time: "2026-12-03T07:10:00Z", Modified: "true", Go: "go1.26.8", Platform: "linux/amd64"},
			"devel (revision 1a2b3c4d5e6f, 2026-12-03T07:10:00Z, modified; go1.26.8 linux/amd64)"},
		{"git describe", buildVersion{Version: "1a2b3c4-dirty", Revision: rev, Modified: "true", Go: "go1.26.8", Platform: "linux/amd64"},
			"1a2b3c4-dirty (revision 1a2b3c4d5e6f, modified; go1.26.8 linux/amd64)"},
		{"module version", buildVersion{Version: "v0.3.0", Go: "go1.26.8", Platform: "linux/amd64"},
			"v0.3.0 (go1.26.8 linux/amd64)"},
		{"no vcs", buildVersion{Version: "(devel)", Go: "go1.26.8", Platform: "linux/amd64"},
			"devel (no VCS information: built outside a git checkout or with -buildvcs=false; go1.26.8 linux/amd64)"},
		{"no build info", buildVersion{Go: "go1.26.8", Platform: "linux/amd64"},
			"devel (no VCS information: built outside a git checkout or with -buildvcs=false; go1.26.8 linux/amd64)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestVersionBinary builds weft in this checkout and checks that `weft
// version` and `weft --version` print HEAD's revision and the Go version:
// once with plain `go build -buildvcs=true` (Go's own stamp; not made in a git
// worktree, whose .git is a file), once with `make build` (the Makefile's
// link-time values, which work in a worktree too).
func TestVersionBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weft binary twice; skipped in -short")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: there is no revision to stamp")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): there is no revision to stamp", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(string(top))
	t.Run("buildvcs", func(t *testing.T) {
		if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
			t.Skip("a git worktree (.git is a file): cmd/go stamps no VCS information here; the make subtest covers it")
		}
		bin := filepath.Join(t.TempDir(), "weft")
		build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		checkVersion(t, bin, `\S+`, string(head)) // devel, or the pseudo-version Go 1.24+ derives from the commit
	})
	t.Run("make", func(t *testing.T) {
		if _, err := exec.LookPath("make"); err != nil {
			t.Skip("make is not installed")
		}
		bin := filepath.Join(t.TempDir(), "weft")
		build := exec.Command("make", "-s", "-C", root, "build", "BIN="+bin)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("make build: %v\n%s", err, out)
		}
		checkVersion(t, bin, `[0-9a-z.-]+`, string(head))
	})
}

// checkVersion runs bin's version and --version and checks both lines.
func checkVersion(t *testing.T, bin, label, head string) {
	t.Helper()
	want := regexp.MustCompile(`^weft ` + label + ` \(revision ([0-9a-f]{12}), [0-9T:Z-]+(, modified)?; (go\S+) \S+/\S+\)\n$`)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			t.Fatalf("weft %s: %v", strings.Join(args, " "), err)
		}
		m := want.FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("weft %s printed %q; want it to match %s", strings.Join(args, " "), stdout.String(), want)
		}
		if !strings.HasPrefix(head, m[1]) {
			t.Errorf("weft %s: revision %s; HEAD is %s", strings.Join(args, " "), m[1], head)
		}
		if m[3] != runtime.Version() {
			t.Errorf("weft %s: %s; the toolchain is %s", strings.Join(args, " "), m[3], runtime.Version())
		}
	}
}

// TestHelpGroups: every top-level command is in a group of `weft --help`
// (cobra's help and completion and `version` stay under "Additional
// Commands"), and the groups are shown in order.
func TestHelpGroups(t *testing.T) {
	root := newRootCmd()
	ungrouped := map[string]bool{"help": true, "completion": true, "version": true}
	for _, c := range root.Commands() {
		if c.GroupID == "" && !ungrouped[c.Name()] {
			t.Errorf("command %q is in no group of commandGroups", c.Name())
		}
	}
	for _, g := range commandGroups {
		for _, n := range g.commands {
			if c, _, err := root.Find([]string{n}); err != nil || c.Name() != n {
				t.Errorf("group %s names %q, which is not a command", g.ID, n)
			}
		}
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	last := -1
	for _, g := range commandGroups {
		i := strings.Index(help, g.Title)
		if i < 0 || i < last {
			t.Fatalf("help lacks %q or shows it out of order:\n%s", g.Title, help)
		}
		last = i
	}
}
