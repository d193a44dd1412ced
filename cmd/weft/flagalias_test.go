package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/testproc"
)

// TestDeprecatedFlagAliases: the old spellings still set their flag, with a
// one-line notice naming the new one; cluster up refuses an even replica
// count before it starts anything.
func TestDeprecatedFlagAliases(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "c")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// --http still names the address: the error names it.
		{[]string{"placement", "--http", addrs[0]},
			[]string{"Flag --http has been deprecated, use --http-addr", "cannot reach a Weft server at " + addrs[0]}},
		{[]string{"cluster", "up", "--dir", dir, "--kronos", "2"},
			[]string{"Flag --kronos has been deprecated, use --kronos-replicas", "weft: --kronos-replicas 2: a raft group has 1, 3, 5 or 7 replicas"}},
		{[]string{"cluster", "up", "--dir", dir, "--coord-replicas", "4"},
			[]string{"weft: --coord-replicas 4: a raft group has 1, 3, 5 or 7 replicas"}},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		if err == nil {
			t.Errorf("weft %v succeeded:\n%s", tc.args, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("weft %v:\n%s\nwant it to contain %q", tc.args, out, w)
			}
		}
	}
}

// TestClusterReadyTimeoutDefaults: up's and add's --ready-timeout each
// show the default they use (they once shared a variable, and add's
// default silently became up's).
func TestClusterReadyTimeoutDefaults(t *testing.T) {
	root := newRootCmd()
	for _, path := range []string{"up", "add"} {
		c, _, err := root.Find([]string{"cluster", path})
		if err != nil {
			t.Fatal(err)
		}
		f := c.Flags().Lookup("ready-timeout")
		if f.DefValue != f.Value.String() {
			t.Errorf("cluster %s --ready-timeout: help says %s, the value is %s", path, f.DefValue, f.Value)
		}
	}
}
