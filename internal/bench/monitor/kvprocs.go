package monitor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/launch"
)

// KVProcs is a ring of `weft kv serve` processes on loopback, each with its
// own data directory: the servers of `weft bench monitor` and of the
// process-level kv tests.
type KVProcs struct {
	// Addrs are the servers' advertised addresses (--peers): their
	// fault proxies' when started with StartKVProcsProxied, else where
	// they listen.
	Addrs []string
	// Listen are where the servers listen.
	Listen []string
	// Proxies, if set, stand in front of each server (Addrs[i] is
	// Proxies[i].Addr()).
	Proxies []*faultproxy.Proxy
	bin     string
	dir     string
	extra   []string
	procs   []*launch.Child
}

// StartKVProcs starts n servers of bin (the weft binary) under dir, each
// with `kv serve --id i --peers <all> --data-dir dir/kv<i>` plus extra
// flags, and waits until every one answers /healthz.
func StartKVProcs(bin, dir string, n int, extra ...string) (*KVProcs, error) {
	return startKVProcs(bin, dir, n, false, extra)
}

// StartKVProcsProxied is StartKVProcs with a faultproxy in front of every
// server: the ring (--peers) names the proxies, so every client call goes
// through them and the test can partition a server.
func StartKVProcsProxied(bin, dir string, n int, extra ...string) (*KVProcs, error) {
	return startKVProcs(bin, dir, n, true, extra)
}

func startKVProcs(bin, dir string, n int, proxied bool, extra []string) (*KVProcs, error) {
	p := &KVProcs{bin: bin, dir: dir, extra: extra, procs: make([]*launch.Child, n)}
	listen, err := launch.FreeAddrs(n, nil)
	if err != nil {
		return nil, err
	}
	p.Listen = listen
	p.Addrs = p.Listen
	if proxied {
		p.Addrs = nil
		for _, target := range p.Listen {
			cfg := faultproxy.DefaultConfig()
			cfg.Target = target
			px, err := faultproxy.New(cfg, nil)
			if err != nil {
				p.Stop()
				return nil, err
			}
			p.Proxies = append(p.Proxies, px)
			p.Addrs = append(p.Addrs, px.Addr())
		}
	}
	for i := range n {
		if err := p.Start(i); err != nil {
			p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// Start (re)starts server i with its original flags and waits for it.
func (p *KVProcs) Start(i int) error {
	if p.procs[i] == nil {
		args := append([]string{"kv", "serve", "--log-level", "warn", "--id", fmt.Sprint(i), "--peers", strings.Join(p.Addrs, ","),
			"--addr", p.Listen[i], "--data-dir", filepath.Join(p.dir, fmt.Sprintf("kv%d", i))}, p.extra...)
		c, err := launch.NewChild(launch.ChildSpec{Name: fmt.Sprintf("kv%d", i), Path: p.bin, Args: args,
			LogPath: p.logPath(i)})
		if err != nil {
			return err
		}
		p.procs[i] = c
	}
	if err := p.procs[i].Start(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return waitHealthy(p.Listen[i], 20*time.Second)
}

// Kill sends SIGKILL to server i (kill -9) and reaps it.
func (p *KVProcs) Kill(i int) {
	if c := p.procs[i]; c != nil && c.Running() {
		_ = c.Kill()
	}
}

// Stop sends SIGTERM to every server, waits up to 5 s each, then kills;
// and closes the proxies.
func (p *KVProcs) Stop() {
	defer func() {
		for _, px := range p.Proxies {
			px.Close()
		}
	}()
	for _, c := range p.procs {
		if c != nil && c.Running() {
			_ = c.Stop(5 * time.Second)
		}
	}
}

func (p *KVProcs) logPath(i int) string { return filepath.Join(p.dir, fmt.Sprintf("kv%d.log", i)) }

// Log returns server i's output so far (for failure messages).
func (p *KVProcs) Log(i int) string {
	b, _ := os.ReadFile(p.logPath(i))
	return string(b)
}

func waitHealthy(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: kv server %s not healthy after %s", addr, timeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
