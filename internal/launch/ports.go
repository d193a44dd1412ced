package launch

// Loopback ports for launched processes. A launcher plans a process's
// address, closes its probe listener and passes the address on a command
// line; the process binds it a moment later. Two things can take the port
// in between. The kernel hands ports of its ephemeral range
// (ip_local_port_range) to every outgoing connection and to every listener
// on port 0, so a port chosen from that range is taken often on a busy
// machine (a test suite's clients and servers). And another launcher,
// planning at the same moment, can pick the same port. FreeAddrs therefore
// picks ports below the ephemeral range, where only an explicit bind lands,
// and reserves each one for ReserveFor in a file under the temporary
// directory, created exclusively, that other launchers honour.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ReserveFor is how long a port stays reserved for the launcher that
// picked it: long enough for its process to start and bind it.
const ReserveFor = 2 * time.Minute

// lowestPort is the bottom of the range ports are picked from (below it sit
// well-known services people run on loopback).
const lowestPort = 12000

// FreeAddrs returns n distinct loopback addresses ("127.0.0.1:port") whose
// ports were free a moment ago, lie outside the kernel's ephemeral range
// where it can, are not in used (when used is not nil, every address
// returned is added to it), and are reserved against other launchers for
// ReserveFor.
func FreeAddrs(n int, used map[string]bool) ([]string, error) {
	lo, hi := pickRange()
	addrs := make([]string, 0, n)
	seen := map[string]bool{}
	for tries := 0; len(addrs) < n; tries++ {
		if tries > 200*n+1000 {
			return nil, fmt.Errorf("launch: no free loopback port in [%d, %d) after %d tries", lo, hi, tries)
		}
		var a string
		if hi > lo {
			a = net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))
		} else {
			var err error
			if a, err = kernelPort(); err != nil {
				return nil, err
			}
		}
		if seen[a] || used[a] {
			continue
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			continue // taken
		}
		l.Close()
		if !reserve(a) {
			continue
		}
		seen[a] = true
		if used != nil {
			used[a] = true
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// FreeAddr is FreeAddrs for one address.
func FreeAddr() (string, error) {
	a, err := FreeAddrs(1, nil)
	if err != nil {
		return "", err
	}
	return a[0], nil
}

// FreePort is FreeAddr's port.
func FreePort() (int, error) {
	a, err := FreeAddr()
	if err != nil {
		return 0, err
	}
	_, p, _ := net.SplitHostPort(a)
	return strconv.Atoi(p)
}

// pickRange is [lo, hi): from lowestPort to the start of the ephemeral
// range. An empty range (an unusual ip_local_port_range) means asking the
// kernel for any port.
func pickRange() (lo, hi int) {
	hi = 32768 // Linux's default start of the ephemeral range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	if hi-lowestPort < 1000 {
		return 0, 0
	}
	return lowestPort, hi
}

func kernelPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// reserveDir holds one file per reserved port, shared by every launcher of
// this user on the machine.
func reserveDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("weft-ports-%d", os.Getuid()))
}

// reserve claims addr's port for ReserveFor, or reports that another
// launcher holds it. A claim older than ReserveFor has lapsed and is taken
// over. Without a usable directory the port is not reserved (the pick
// from outside the ephemeral range still protects it from the kernel).
func reserve(addr string) bool {
	dir := reserveDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return true
	}
	_, port, _ := net.SplitHostPort(addr)
	path := filepath.Join(dir, port)
	for range 2 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			if rand.IntN(64) == 0 {
				sweep(dir)
			}
			return true
		}
		if !errors.Is(err, os.ErrExist) {
			return true
		}
		st, err := os.Stat(path)
		if err != nil || time.Since(st.ModTime()) < ReserveFor {
			return false
		}
		_ = os.Remove(path) // lapsed; two launchers may race here, O_EXCL decides
	}
	return false
}

// sweep removes lapsed claims, so the directory stays small.
func sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > ReserveFor {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
