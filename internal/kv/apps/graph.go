package apps

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// Graph is an undirected graph whose vertices are divided among clients.
type Graph struct {
	Adj   [][]int // sorted neighbour lists
	Owner []int   // Owner[v] is the client that updates v
}

// RandomGraph returns a graph of v vertices with about v·degree/2 random
// edges (no loops or duplicates), vertices dealt to clients in contiguous
// blocks (so, as in a partitioned graph, most edges stay inside a client
// and the rest cross). Deterministic in rng.
func RandomGraph(rng *rand.Rand, v, degree, clients int) (*Graph, error) {
	if v < 2 || degree < 1 || clients < 1 || clients > v {
		return nil, fmt.Errorf("apps: graph of %d vertices, degree %d, %d clients: want v ≥ 2, degree ≥ 1, 1 ≤ clients ≤ v", v, degree, clients)
	}
	g := &Graph{Adj: make([][]int, v), Owner: make([]int, v)}
	for i := range v {
		g.Owner[i] = i * clients / v
	}
	edges := v * degree / 2
	for added, tries := 0, 0; added < edges && tries < 20*edges; tries++ {
		a, b := rng.IntN(v), rng.IntN(v)
		if a == b || slices.Contains(g.Adj[a], b) {
			continue
		}
		g.Adj[a] = append(g.Adj[a], b)
		g.Adj[b] = append(g.Adj[b], a)
		added++
	}
	for i := range g.Adj {
		slices.Sort(g.Adj[i])
	}
	return g, nil
}

// IntentKey is vertex v's announcement flag (Dekker's "I want to enter"),
// FlagKey its "being worked on" flag h_v, the monitored variable, and
// ValueKey its state.
func IntentKey(v int) string { return "f/" + strconv.Itoa(v) }
func FlagKey(v int) string   { return "h/" + strconv.Itoa(v) }
func ValueKey(v int) string  { return "x/" + strconv.Itoa(v) }

// CrossEdges lists the edges (u < v) whose ends belong to different clients.
func (g *Graph) CrossEdges() [][2]int {
	var out [][2]int
	for u, ns := range g.Adj {
		for _, v := range ns {
			if u < v && g.Owner[u] != g.Owner[v] {
				out = append(out, [2]int{u, v})
			}
		}
	}
	return out
}

// Spec is the graph's ¬P as one semilinear predicate "local-mutex": a clause
// h_u = 1 ∧ h_v = 1 per cross edge, each flag watched on the first replica
// of its key on ring.
func (g *Graph) Spec(ring *kvcore.Ring) *monitor.Spec {
	home := func(v int) int { return ring.Replicas(nil, FlagKey(v), 1)[0] }
	p := monitor.Predicate{Name: "local-mutex", Type: monitor.Semilinear}
	for _, e := range g.CrossEdges() {
		p.Clauses = append(p.Clauses, monitor.Clause{ID: fmt.Sprintf("%d-%d", e[0], e[1]), Literals: []monitor.Literal{
			{Server: home(e[0]), Key: FlagKey(e[0]), Op: monitor.Eq, Value: "1"},
			{Server: home(e[1]), Key: FlagKey(e[1]), Op: monitor.Eq, Value: "1"},
		}})
	}
	return &monitor.Spec{Servers: ring.Servers(), Predicates: []monitor.Predicate{p}}
}

// GraphConfig configures one client of the graph computation.
type GraphConfig struct {
	Graph  *Graph
	Client int
	// Updates is how many vertex updates to make (0: until ctx ends).
	Updates int
	// Backoff is the longest random wait after finding a neighbour busy
	// or the store paused. Default 2 ms.
	Backoff time.Duration
	// Hold is how long the client stays in the critical section (the
	// "work" on the vertex), making conflicts likelier. Default 0.
	Hold time.Duration
	Rand *rand.Rand
}

// GraphStats counts one client's work.
type GraphStats struct {
	Updates  uint64 `json:"updates"`  // vertices updated (critical sections completed)
	Backoffs uint64 `json:"backoffs"` // a neighbour was busy
	Redone   uint64 `json:"redone"`   // a rollback (new generation) or pause interrupted an update
	Gets     uint64 `json:"gets"`
	Puts     uint64 `json:"puts"`
	Errors   uint64 `json:"errors"` // other failed requests (retried)
}

// graphClient is one client's state: the last version it wrote of each of
// its keys (only it writes them, so that is the context a PUT supersedes).
type graphClient struct {
	c     *kvclient.Client
	cfg   GraphConfig
	mine  []int
	last  map[string]kvclient.Version
	stats GraphStats
}

// RunGraph runs client cfg.Client's loop over its vertices, round robin:
// raise v's intent f_v, read the intents of the neighbours other clients
// own, and back off (lowering f_v) if one is raised; else enter: h_v = 1,
// read the neighbours' values, write v's, h_v = 0, f_v = 0. With W = N and
// R = 1 (or any W + R > N, W > N/2) two neighbours' critical sections never
// overlap; with W + R ≤ N they can, which the monitors catch.
func RunGraph(ctx context.Context, c *kvclient.Client, cfg GraphConfig) (GraphStats, error) {
	if cfg.Backoff <= 0 {
		cfg.Backoff = 2 * time.Millisecond
	}
	if cfg.Rand == nil {
		return GraphStats{}, errors.New("apps: GraphConfig.Rand is required")
	}
	g := &graphClient{c: c, cfg: cfg, last: map[string]kvclient.Version{}}
	for v, o := range cfg.Graph.Owner {
		if o == cfg.Client {
			g.mine = append(g.mine, v)
		}
	}
	if len(g.mine) == 0 {
		return g.stats, nil
	}
	for i := 0; cfg.Updates == 0 || int(g.stats.Updates) < cfg.Updates; i++ {
		if ctx.Err() != nil {
			return g.stats, nil
		}
		v := g.mine[i%len(g.mine)]
		gen := c.Generation()
		done, err := g.update(ctx, v)
		switch {
		case ctx.Err() != nil:
			return g.stats, nil
		case err != nil || c.Generation() != gen:
			if errors.Is(err, kvclient.ErrPaused) || c.Generation() != gen {
				g.stats.Redone++
			} else if err != nil {
				g.stats.Errors++
			}
			g.sleep(ctx)
			continue
		case !done:
			g.stats.Backoffs++
			g.sleep(ctx)
		default:
			g.stats.Updates++
		}
	}
	return g.stats, nil
}

func (g *graphClient) sleep(ctx context.Context) {
	t := time.NewTimer(time.Duration(g.cfg.Rand.Int64N(int64(g.cfg.Backoff)) + 1))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// update tries one vertex; done is false if a neighbour was busy.
func (g *graphClient) update(ctx context.Context, v int) (done bool, err error) {
	if err := g.put(ctx, IntentKey(v), "1"); err != nil {
		return false, err
	}
	defer func() {
		if err2 := g.put(ctx, IntentKey(v), "0"); err == nil && err2 != nil {
			err = err2
		}
	}()
	adj := g.cfg.Graph.Adj[v]
	for _, u := range adj {
		if g.cfg.Graph.Owner[u] == g.cfg.Client {
			continue
		}
		busy, err := g.get(ctx, IntentKey(u))
		if err != nil {
			return false, err
		}
		if busy == "1" {
			return false, nil
		}
	}
	if err := g.put(ctx, FlagKey(v), "1"); err != nil {
		return false, err
	}
	defer func() {
		if err2 := g.put(ctx, FlagKey(v), "0"); err == nil && err2 != nil {
			err = err2
		}
	}()
	sum := 0
	for _, u := range append([]int{v}, adj...) {
		x, err := g.get(ctx, ValueKey(u))
		if err != nil {
			return false, err
		}
		n, _ := strconv.Atoi(x)
		sum += n
	}
	if g.cfg.Hold > 0 {
		time.Sleep(g.cfg.Hold)
	}
	return true, g.put(ctx, ValueKey(v), strconv.Itoa((sum+1)%1_000_003))
}

func (g *graphClient) get(ctx context.Context, key string) (string, error) {
	g.stats.Gets++
	r, err := g.c.Get(ctx, key)
	if err != nil || len(r.Siblings) == 0 {
		return "", err
	}
	return string(r.Siblings[len(r.Siblings)-1].Value), nil
}

func (g *graphClient) put(ctx context.Context, key, val string) error {
	g.stats.Puts++
	var context []kvclient.Version
	if v, ok := g.last[key]; ok {
		context = []kvclient.Version{v}
	}
	ver, err := g.c.Put(ctx, key, []byte(val), context)
	if err != nil {
		return err
	}
	g.last[key] = ver
	return nil
}
