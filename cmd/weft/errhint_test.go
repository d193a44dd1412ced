package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-db/weft/internal/testproc"
)

// TestErrorNoServerHint: weft tx and weft placement against a closed port
// exit non-zero with one "weft: " prefix, the address, and what to do.
func TestErrorNoServerHint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(1) // free a moment ago: nothing listens
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"tx", "get_vertex a", "--timeout", "5s", "--addr", addrs[0]}, "--addr"},
		{[]string{"placement", "--http-addr", addrs[0]}, "--http-addr"},
	} {
		out, err := exec.Command(bin, tc.args...).CombinedOutput()
		if err == nil {
			t.Fatalf("weft %v succeeded with no server:\n%s", tc.args, out)
		}
		want := fmt.Sprintf(`weft: cannot reach a Weft server at %s (connection refused): is "weft serve" running? `+
			`Start one with "weft serve --demo" or pass %s.`, addrs[0], tc.flag)
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("weft %v:\n got %s\nwant %s", tc.args, got, want)
		}
	}
}

// TestErrorDataDirHeld: a second weft serve on the first's data directory
// names the first's pid instead of "resource temporarily unavailable".
func TestErrorDataDirHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	p := testproc.Start(t, testproc.Spec{
		Name: "serve", Path: bin, Ready: "weft serving",
		Args:    []string{"serve", "--data-dir", data, "--grpc-addr", addrs[0], "--http-addr", ""},
		LogPath: filepath.Join(dir, "serve.log"),
	})
	out, err := exec.Command(bin, "serve", "--data-dir", data, "--grpc-addr", addrs[1], "--http-addr", "").CombinedOutput()
	if err == nil {
		t.Fatalf("a second serve on a held data dir succeeded:\n%s", out)
	}
	want := fmt.Sprintf("data dir %s is in use by pid %d (weft serve --data-dir %s", data, p.Pid(), data)
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "stop it or choose another --data-dir") ||
		strings.Contains(string(out), "temporarily unavailable") {
		t.Fatalf("second serve:\n%s\nwant it to contain %q", out, want)
	}
}
