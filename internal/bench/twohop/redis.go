package twohop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weft-db/weft/internal/launch"
)

// The Redis peer (--peers redis): Debian's redis-server on loopback, the
// graph as one set of out-neighbours per vertex, and the two-hop count as
// a Lua script run by the server — what a user comparing databases would
// write with Redis (redis-server, go-redis). Measured in the same rounds as
// Weft's interfaces, so the ratio is measured, not quoted.

// twoHopLua counts the distinct c with v→b→c; KEYS[1] is v's set.
const twoHopLua = `local seen, n = {}, 0
for _, b in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  for _, c in ipairs(redis.call('SMEMBERS', 'n:' .. b)) do
    if not seen[c] then seen[c] = true; n = n + 1 end
  end
end
return n`

// redisPeer is a running redis-server with the graph loaded.
type redisPeer struct {
	child  *launch.Child
	addr   string
	client *redis.Client
	sha    string
}

// startRedis starts redis-server (no persistence) on a free loopback port
// with its log in dir, and loads g: SADD n:<v> <its out-neighbours> for each
// vertex, pipelined.
func startRedis(ctx context.Context, dir string, g *Graph) (*redisPeer, LoadStats, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, LoadStats{}, errors.New("bench: --peers redis needs redis-server (Debian: apt-get install redis-server)")
	}
	addrs, err := launch.FreeAddrs(1, nil)
	if err != nil {
		return nil, LoadStats{}, err
	}
	_, port, err := net.SplitHostPort(addrs[0])
	if err != nil {
		return nil, LoadStats{}, err
	}
	c, err := launch.NewChild(launch.ChildSpec{Name: "redis-server", Path: bin,
		Args:  []string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", dir},
		Ready: "Ready to accept connections", ReadyTimeout: 30 * time.Second, LogPath: filepath.Join(dir, "redis.log")})
	if err != nil {
		return nil, LoadStats{}, err
	}
	if err := c.Start(); err != nil {
		return nil, LoadStats{}, fmt.Errorf("bench: starting redis-server: %w", err)
	}
	p := &redisPeer{child: c, addr: addrs[0], client: redis.NewClient(&redis.Options{Addr: addrs[0], PoolSize: 64})}
	start := time.Now()
	st := LoadStats{Vertices: g.Vertices(), Edges: g.Edges()}
	pipe := p.client.Pipeline()
	for v := range g.Vertices() {
		out := g.Out(v)
		if len(out) > 0 {
			members := make([]any, len(out))
			for i, d := range out {
				members[i] = strconv.Itoa(int(d))
			}
			pipe.SAdd(ctx, "n:"+strconv.Itoa(v), members...)
		}
		if pipe.Len() >= 1000 || v == g.Vertices()-1 {
			if _, err := pipe.Exec(ctx); err != nil {
				p.close()
				return nil, st, fmt.Errorf("bench: loading redis: %w", err)
			}
			st.Transactions++
		}
	}
	if p.sha, err = p.client.ScriptLoad(ctx, twoHopLua).Result(); err != nil {
		p.close()
		return nil, st, fmt.Errorf("bench: loading the Lua script: %w", err)
	}
	st.Seconds = time.Since(start).Seconds()
	st.OpsPerSec = float64(st.Vertices+st.Edges) / st.Seconds
	return p, st, nil
}

// cpu is redis-server's CPU time so far.
func (p *redisPeer) cpu() time.Duration { return processCPU(p.child.Pid()) }

func (p *redisPeer) close() {
	if p.client != nil {
		p.client.Close()
	}
	_ = p.child.Stop(5 * time.Second)
}

// iface is the Lua script through go-redis, one pooled client shared by
// the goroutines.
func (p *redisPeer) iface() iface {
	return iface{name: "redis-lua", count: true, cpu: p.cpu, run: func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error) {
		keys := make([]string, len(srcs))
		for i, v := range srcs {
			keys[i] = "n:" + strconv.Itoa(v)
		}
		return closedLoop(ctx, srcs, clients, ready, func(ctx context.Context, i int) (int, error) {
			n, err := p.client.EvalSha(ctx, p.sha, []string{keys[i]}).Int()
			return n, err
		})
	}}
}
