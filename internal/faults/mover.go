package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/txn"
)

// Online moves during a cluster run (ClusterConfig.MoveEvery): a mover
// goroutine asks a gatekeeper's HTTP API for the placement (GET
// /v1/placement) and moves one placement unit to a shard that may take it
// (POST /v1/move), preferring the units of the vertices the workloads
// write, while the nemesis kills and pauses processes. The checkers then
// validate histories whose keys moved between shards. A move that fails is
// expected (its gatekeeper or a shard is down, the cluster is between
// epochs, the move raced a transaction): it is counted, never a problem.

// moveTimeout bounds each of the mover's HTTP requests.
const moveTimeout = 2 * time.Second

// moveTriesMax bounds the units pickMove tries of each kind (the keys'
// units, then random slots) before it gives up on a placement answer.
const moveTriesMax = 8

// MoveStats counts the mover's attempts: Moves committed (200), Refusals
// (a 4xx answer: ABORTED after racing a transaction, INVALID_ARGUMENT when
// the target still holds the unit's old copy, 429 between epochs), and
// Failures (a transport error, a timeout, a 5xx answer, or no placement
// answer to choose from). KeyMoves counts the committed moves of a unit
// holding a workload's vertex. Errors counts the refusals and failures by
// error code ("placement: …" when the GET failed). The fields are
// reported flat in report.json.
type MoveStats struct {
	Every    string         `json:"move_every"`
	Moves    int            `json:"moves"`
	KeyMoves int            `json:"key_unit_moves"`
	Refusals int            `json:"move_refusals"`
	Failures int            `json:"move_failures"`
	Errors   map[string]int `json:"move_errors,omitempty"`
}

// summary is the report's line (not String: Report embeds MoveStats and
// has its own).
func (s *MoveStats) summary() string {
	return fmt.Sprintf("moves (every %s): %d committed (%d of a workload key's unit), %d refused, %d failed; errors %s",
		s.Every, s.Moves, s.KeyMoves, s.Refusals, s.Failures, countsString(s.Errors))
}

// placementAnswer is the part of GET /v1/placement the mover uses.
type placementAnswer struct {
	Base   uint32 `json:"base"`
	Shards uint32 `json:"shards"`
	Moved  []struct {
		Unit  string   `json:"unit"`
		Shard uint32   `json:"shard"`
		Held  []uint32 `json:"held"`
	} `json:"moved"`
}

// moveChoice is one move to request.
type moveChoice struct {
	Unit string
	To   uint32
	Key  string // the workload vertex whose unit it is; "": a random slot
}

// pickMove chooses a unit and a shard it may move to under p: a shard not
// in the unit's held list (from p.Moved, or its base shard when it never
// moved). It tries up to moveTriesMax units of keys (vertex handles the
// workloads write), then up to moveTriesMax random slots; false when none
// can move (or p has fewer than two shards). Pure: the choice depends only
// on rng's state and the arguments.
func pickMove(rng *rand.Rand, p placementAnswer, keys []string) (moveChoice, bool) {
	if p.Base == 0 || p.Shards < 2 || p.Shards < p.Base {
		return moveChoice{}, false
	}
	held := make(map[string][]uint32, len(p.Moved))
	for _, m := range p.Moved {
		held[m.Unit] = m.Held
	}
	target := func(u txn.Unit) (uint32, bool) {
		h, ok := held[u.String()]
		if !ok {
			h = []uint32{u.BaseShard(p.Base)}
		}
		var to []uint32
		for s := range p.Shards {
			if !slices.Contains(h, s) {
				to = append(to, s)
			}
		}
		if len(to) == 0 {
			return 0, false
		}
		return to[rng.IntN(len(to))], true
	}
	for range min(moveTriesMax, len(keys)) {
		k := keys[rng.IntN(len(keys))]
		u := txn.UnitOf(k, p.Base)
		if to, ok := target(u); ok {
			return moveChoice{Unit: u.String(), To: to, Key: k}, true
		}
	}
	for range moveTriesMax {
		u := txn.Unit{Slot: uint32(rng.Uint64N(uint64(txn.SlotsPerShard) * uint64(p.Base)))}
		if to, ok := target(u); ok {
			return moveChoice{Unit: u.String(), To: to}, true
		}
	}
	return moveChoice{}, false
}

// moveJitter is the wait before the next attempt: uniform in
// [every/2, 3·every/2).
func moveJitter(rng *rand.Rand, every time.Duration) time.Duration {
	return every/2 + time.Duration(rng.Int64N(int64(every)))
}

// moveOutcome is one attempt's classification.
type moveOutcome int

const (
	moveCommitted moveOutcome = iota
	moveRefused
	moveFailed
	moveCut // cut short by the mover's stop: not counted
)

// classifyMove sorts a request's result into an outcome and an error code
// ("" for a committed move). body is the answer's body (an error's JSON).
func classifyMove(status int, body []byte, err error) (moveOutcome, string) {
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return moveFailed, "timeout"
		}
		return moveFailed, "transport"
	}
	code := fmt.Sprintf("HTTP %d", status)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		code = e.Error.Code
	}
	switch {
	case status == http.StatusOK:
		return moveCommitted, ""
	case status >= 400 && status < 500:
		return moveRefused, code
	}
	return moveFailed, code
}

// mover moves units every ~every until its context ends.
type mover struct {
	every  time.Duration
	addrs  func() []string // gatekeeper HTTP addresses
	keys   func() []string // vertex handles the workloads write now
	pick   *rand.Rand      // the choices (mover goroutine only)
	jitter *rand.Rand      // the waits, apart so that they depend on the seed only
	client *http.Client
	j      *journal
	log    *slog.Logger

	mu    sync.Mutex
	stats MoveStats
}

func newMover(every time.Duration, seed uint64, addrs, keys func() []string, j *journal, log *slog.Logger) *mover {
	return &mover{every: every, addrs: addrs, keys: keys, j: j, log: log,
		pick:   rand.New(rand.NewPCG(seed, 0x6d6f7665)),       // "move"
		jitter: rand.New(rand.NewPCG(seed, 0x6d6f76656a6974)), // "movejit"
		client: &http.Client{Timeout: moveTimeout},
		stats:  MoveStats{Every: every.String(), Errors: map[string]int{}}}
}

// start runs the mover until the returned function is called; that
// function stops it, waits for it and returns its counts.
func (m *mover) start(ctx context.Context) func() *MoveStats {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for sleep(ctx, moveJitter(m.jitter, m.every)) {
			m.once(ctx)
		}
	})
	return func() *MoveStats {
		cancel()
		wg.Wait()
		m.client.CloseIdleConnections()
		return m.snapshot()
	}
}

// snapshot returns a copy of the counts so far.
func (m *mover) snapshot() *MoveStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Errors = maps.Clone(m.stats.Errors)
	return &s
}

// once makes one attempt: a placement answer, a choice, a move.
func (m *mover) once(ctx context.Context) {
	addrs := m.addrs()
	if len(addrs) == 0 {
		m.count(ctx, moveFailed, "no gatekeeper HTTP address")
		return
	}
	addr := addrs[m.pick.IntN(len(addrs))]
	var p placementAnswer
	status, body, err := m.do(ctx, http.MethodGet, addr, "/v1/placement", nil)
	if out, code := classifyMove(status, body, err); out != moveCommitted {
		m.count(ctx, moveFailed, "placement: "+code)
		return
	}
	if err := json.Unmarshal(body, &p); err != nil {
		m.count(ctx, moveFailed, "placement: bad answer")
		return
	}
	c, ok := pickMove(m.pick, p, m.keys())
	if !ok {
		m.log.Info("mover: no unit can move now", "gatekeeper", addr, "moved", len(p.Moved))
		return
	}
	req, _ := json.Marshal(map[string]any{"unit": c.Unit, "shard": c.To})
	status, body, err = m.do(ctx, http.MethodPost, addr, "/v1/move", req)
	out, code := classifyMove(status, body, err)
	what := fmt.Sprintf("%s to shard %d via %s", c.Unit, c.To, addr)
	if c.Key != "" {
		what += " (unit of " + c.Key + ")"
	}
	switch {
	case out == moveCommitted:
		m.j.note("move", what)
	case ctx.Err() == nil:
		m.j.note("move-error", what+": "+code)
	}
	m.count(ctx, out, code)
	if out == moveCommitted && c.Key != "" {
		m.mu.Lock()
		m.stats.KeyMoves++
		m.mu.Unlock()
	}
}

// do sends one request and reads the answer (at most 1 MiB of it).
func (m *mover) do(ctx context.Context, method, addr, path string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, moveTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// count records an outcome; an attempt cut short by the stop is not
// counted (nor is its outcome known).
func (m *mover) count(ctx context.Context, out moveOutcome, code string) {
	if ctx.Err() != nil && out != moveCommitted {
		out = moveCut
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch out {
	case moveCommitted:
		m.stats.Moves++
	case moveRefused:
		m.stats.Refusals++
		m.stats.Errors[code]++
	case moveFailed:
		m.stats.Failures++
		m.stats.Errors[code]++
	}
}

// keyed is a workload that names the vertices it writes now (the mover
// prefers their units).
type keyed interface {
	keys() []string
}

// workloadKeys is every keyed workload's current vertex handles.
func workloadKeys(runs []*clientRun) []string {
	var out []string
	for _, r := range runs {
		if k, ok := r.wl.(keyed); ok {
			out = append(out, k.keys()...)
		}
	}
	return out
}

// moveAddrs are the HTTP addresses of the gatekeepers whose API address
// the clients use (the slot holders); all gatekeepers' when none matches.
func (t *clusterTarget) moveAddrs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var holders, all []string
	for _, m := range t.members {
		if m.Role != roleGatekeeper || m.HTTPAddr == "" || m.down {
			continue
		}
		all = append(all, m.HTTPAddr)
		if t.book.has(m.Addr) {
			holders = append(holders, m.HTTPAddr)
		}
	}
	if len(holders) > 0 {
		return holders
	}
	return all
}
