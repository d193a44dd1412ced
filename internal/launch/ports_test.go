package launch

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestFreeAddrsOutsideEphemeralAndReserved(t *testing.T) {
	lo, hi := pickRange()
	used := map[string]bool{}
	first, err := FreeAddrs(40, used)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 40 || len(used) != 40 {
		t.Fatalf("got %d addresses, %d used; want 40", len(first), len(used))
	}
	seen := map[string]bool{}
	for _, a := range first {
		if seen[a] {
			t.Fatalf("%s returned twice", a)
		}
		seen[a] = true
		_, ps, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(ps)
		if hi > lo && (p < lo || p >= hi) {
			t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
		}
		if _, err := os.Stat(filepath.Join(reserveDir(), ps)); err != nil {
			t.Fatalf("port %d not reserved: %v", p, err)
		}
	}
	// Another launcher (a second call, used not shared) never gets a
	// reserved port.
	second, err := FreeAddrs(40, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range second {
		if seen[a] {
			t.Fatalf("%s reserved by the first call, returned again", a)
		}
	}
}

func TestReserveTakesOverLapsedClaim(t *testing.T) {
	a, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if reserve(a) {
		t.Fatalf("%s reserved twice", a)
	}
	_, ps, _ := net.SplitHostPort(a)
	old := filepath.Join(reserveDir(), ps)
	past := mustOld(t)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if !reserve(a) {
		t.Fatalf("lapsed claim on %s not taken over", a)
	}
}

func mustOld(t *testing.T) (past time.Time) {
	t.Helper()
	return time.Now().Add(-2 * ReserveFor)
}
