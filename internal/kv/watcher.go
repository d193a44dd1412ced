package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// WatcherConfig configures the monitor process (`weft monitor`): it fetches
// every kv server's candidates, runs a monitor.Set over them, reports
// violations and, optionally, rolls the store back (§IV).
type WatcherConfig struct {
	// Servers are the kv servers' addresses; Servers[i] is server i of the
	// spec. Required.
	Servers []string
	// Spec is the monitored predicates (the servers' spec). Required.
	Spec *monitor.Spec
	// Monitor configures the monitors; Monitor.Epsilon must equal the
	// servers' ε. Default monitor.DefaultConfig().
	Monitor monitor.Config
	// PollWait is how long one candidate fetch waits on the server for new
	// candidates (a long poll). Default 1 s.
	PollWait time.Duration
	// PageMax is the candidates fetched per request. Default 1024.
	PageMax int
	// BatchesMax is the fetched pages per server waiting for the monitor
	// loop; a fetcher blocks when its server's are all waiting. Default 4.
	BatchesMax int
	// ViolationsKept is how many recent violations (and rollbacks) the
	// watcher lists; older ones are only counted. Default 1024.
	ViolationsKept int
	// LatenciesMax bounds the detection latencies kept for Stats. Default
	// 1<<20.
	LatenciesMax int
	// Rollback makes each violation trigger a rollback of every server to
	// the cut before the violation's Since (Replica.Restore).
	Rollback bool
	// RollbackTimeout bounds each admin call of a rollback; the servers'
	// pause is bounded by four times it. Default 5 s.
	RollbackTimeout time.Duration
	// AdviseAfter, if positive, makes the watcher advise every server's
	// clients to use Advice once AdviseAfter violations happened within
	// AdviseWindow (default 1 min): violations are frequent, so switch to
	// sequential consistency (§IV).
	AdviseAfter  int
	AdviseWindow time.Duration
	// Advice is the quorum advised; W = 0 means each server's N.
	Advice kvcore.Advice
	// Now is the physical clock used to measure detection latency, in the
	// HVCs' unit (ns). Default WallClock: latencies are exact only when the
	// servers run on the same machine (or clocks are synchronised).
	Now func() uint64
	// HTTPClient is used for every call. Default: a pooled client.
	HTTPClient *http.Client
	// DataDir, if set, holds the watcher's state (watcher_state.go): the
	// violations reported, so that a restarted watcher, which replays the
	// candidates the servers retain, reports none of them twice. Empty:
	// nothing is stored and a restarted watcher reports again every
	// violation it finds in the retained candidates.
	DataDir string
}

// DefaultWatcherConfig returns the defaults documented on WatcherConfig.
func DefaultWatcherConfig() WatcherConfig {
	return WatcherConfig{
		Monitor: monitor.DefaultConfig(), PollWait: time.Second, PageMax: 1024, BatchesMax: 4,
		ViolationsKept: 1024, LatenciesMax: 1 << 20, RollbackTimeout: 5 * time.Second, AdviseWindow: time.Minute,
	}
}

// Validate reports the first bad field.
func (c WatcherConfig) Validate() error {
	switch {
	case len(c.Servers) == 0:
		return fmt.Errorf("kv: watcher: no servers")
	case c.Spec == nil:
		return fmt.Errorf("kv: watcher: no predicate spec")
	case c.PageMax < 1 || c.PageMax > candidatesPageMax:
		return fmt.Errorf("kv: watcher: PageMax %d not in [1, %d]", c.PageMax, candidatesPageMax)
	case c.BatchesMax < 1 || c.ViolationsKept < 1 || c.LatenciesMax < 1:
		return fmt.Errorf("kv: watcher: BatchesMax, ViolationsKept and LatenciesMax must be positive")
	case c.PollWait <= 0 || c.RollbackTimeout <= 0:
		return fmt.Errorf("kv: watcher: PollWait and RollbackTimeout must be positive")
	}
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	if c.Spec.Servers != len(c.Servers) {
		return fmt.Errorf("kv: watcher: the spec names %d servers, %d addresses given", c.Spec.Servers, len(c.Servers))
	}
	return c.Monitor.Validate()
}

// ViolationReport is one detected violation as the watcher reports it.
type ViolationReport struct {
	ID        uint64                 `json:"id"`
	Predicate string                 `json:"predicate"`
	Clause    int                    `json:"clause"`
	Cut       []kvcore.CandidateJSON `json:"cut"`
	// Since is the earliest time (ns) the violation could have begun
	// (monitor.Violation.Since); a rollback restores the cut before it.
	Since uint64 `json:"since"`
	// Completed is when the PUT that completed the violation happened:
	// the latest start in the cut (ns, that server's clock).
	Completed uint64 `json:"completed"`
	// DetectedAt is the watcher's clock at detection; LatencyNs is
	// DetectedAt − Completed (0 if the clocks disagree).
	DetectedAt uint64 `json:"detected_at"`
	LatencyNs  uint64 `json:"latency_ns"`
	// Rollback is the generation of the rollback it triggered (0: none).
	Rollback uint64 `json:"rollback,omitempty"`
}

// RollbackReport is one rollback attempt.
type RollbackReport struct {
	Gen       uint64 `json:"gen"`
	Violation uint64 `json:"violation"`
	// Since is the violation's; Before the cut restored: Since, or earlier
	// when a write that straddles Since had taken effect before it.
	Since  uint64 `json:"since"`
	Before uint64 `json:"before"`
	Undone []int  `json:"undone"` // per server
	// Retries counts the rounds of restores redone for servers whose
	// restore failed (lost request or answer, restart).
	Retries int    `json:"retries,omitempty"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	TookNs  int64  `json:"took_ns"`
}

// WatcherStats counts the watcher's work.
type WatcherStats struct {
	Candidates    []uint64 `json:"candidates"`     // per server, stepped into the monitors
	Missed        []uint64 `json:"missed"`         // per server, dropped by its buffer before we read them
	FetchErrors   []uint64 `json:"fetch_errors"`   // per server
	Restarts      []uint64 `json:"restarts"`       // per server incarnations seen after the first
	StepErrors    uint64   `json:"step_errors"`    // candidates refused as malformed or out of order
	Duplicates    uint64   `json:"duplicates"`     // violations found again by a restarted watcher's replay, not reported
	StateErrors   uint64   `json:"state_errors"`   // failed writes of the state file (DataDir)
	Stalls        uint64   `json:"stalls"`         // times a server's candidates waited on a full monitor queue
	Resets        uint64   `json:"resets"`         // monitor rebuilds (restarts, rollbacks)
	Violations    uint64   `json:"violations"`     // reported
	Rollbacks     uint64   `json:"rollbacks"`      // completed
	RollbackFails uint64   `json:"rollback_fails"` // attempted and failed
	Advised       bool     `json:"advised"`
	Gen           uint64   `json:"gen"`
}

// Watcher is the monitor process's shell: one fetcher goroutine per server
// (long-polling /v1/kv/candidates, at most BatchesMax pages waiting each)
// and one loop that owns the monitor.Set, reports violations and runs
// rollbacks. Safe for concurrent use; its read methods may be called while
// it runs.
type Watcher struct {
	cfg WatcherConfig
	log *slog.Logger
	hc  *http.Client
	ch  []chan fetched

	mu        sync.Mutex
	stats     WatcherStats
	viols     []ViolationReport // the last ViolationsKept
	rollbacks []RollbackReport  // the last ViolationsKept
	latencies []uint64          // the first LatenciesMax, ns
	hist      latencyHist
	recent    []time.Time // violation times within AdviseWindow
	advising  bool        // the advice has been (or is being) sent
	nextID    uint64
	// Stored state (watcher_state.go): the identities of the violations
	// reported, and the generation stored at the last run's end.
	reported      map[string]bool
	reportedOrder []string
	startGen      uint64

	stop   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// fetched is one page of one server's candidates.
type fetched struct {
	server int
	boot   uint64
	cands  []kvcore.CandidateJSON
	missed uint64
}

// NewWatcher returns a watcher of cfg (not yet started).
func NewWatcher(cfg WatcherConfig, log *slog.Logger) (*Watcher, error) {
	if cfg.Now == nil {
		cfg.Now = WallClock
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	w := &Watcher{cfg: cfg, log: log, hc: cfg.HTTPClient, stop: make(chan struct{}), nextID: 1}
	if w.hc == nil {
		w.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute}}
	}
	n := len(cfg.Servers)
	w.stats = WatcherStats{Candidates: make([]uint64, n), Missed: make([]uint64, n), FetchErrors: make([]uint64, n), Restarts: make([]uint64, n)}
	for range n {
		w.ch = append(w.ch, make(chan fetched, cfg.BatchesMax))
	}
	if err := w.loadState(); err != nil {
		return nil, err
	}
	return w, nil
}

// Start runs the fetchers and the monitor loop in the background.
func (w *Watcher) Start() error {
	set, err := monitor.NewSet(w.cfg.Monitor, w.cfg.Spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for i := range w.cfg.Servers {
		w.wg.Add(1)
		go w.fetch(ctx, i)
	}
	w.wg.Add(1)
	go w.loop(ctx, set)
	return nil
}

// Stop stops the watcher and waits for its goroutines.
func (w *Watcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		if w.cancel != nil {
			w.cancel()
		}
		w.wg.Wait()
	})
}

// fetch long-polls server i's candidates into w.ch[i], following its
// incarnations: a new boot restarts the index numbering, so the cursor
// goes back to 0. Errors back off up to a second.
func (w *Watcher) fetch(ctx context.Context, i int) {
	defer w.wg.Done()
	var after, boot uint64
	backoff := 10 * time.Millisecond
	for {
		var resp kvcore.CandidatesResponse
		path := fmt.Sprintf("/v1/kv/candidates?after=%d&max=%d&wait_ms=%d", after, w.cfg.PageMax, w.cfg.PollWait.Milliseconds())
		err := w.call(ctx, w.cfg.Servers[i], http.MethodGet, path, nil, &resp, w.cfg.PollWait+5*time.Second)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.mu.Lock()
			w.stats.FetchErrors[i]++
			w.mu.Unlock()
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 10 * time.Millisecond
		if boot != 0 && resp.Boot != boot && after > 0 {
			after = 0 // a new incarnation numbers its candidates from 1 again
			boot = resp.Boot
			continue
		}
		boot = resp.Boot
		if len(resp.Candidates) == 0 && resp.Missed == 0 {
			continue
		}
		if n := len(resp.Candidates); n > 0 {
			after = resp.Candidates[n-1].Index
		}
		select {
		case w.ch[i] <- fetched{server: i, boot: resp.Boot, cands: resp.Candidates, missed: resp.Missed}:
		case <-ctx.Done():
			return
		}
	}
}

// loopState is the monitor loop's per-server bookkeeping.
type loopState struct {
	boot    uint64
	stalled []monitor.Outbound // refused with ErrOverloaded; retried first
}

// loop owns the monitor.Set: it takes pages from servers that are not
// stalled, steps their candidates, and handles the violations found.
func (w *Watcher) loop(ctx context.Context, set *monitor.Set) {
	defer w.wg.Done()
	st := make([]loopState, len(w.cfg.Servers))
	gen := uint64(0)
	cases := make([]reflect.SelectCase, 0, len(st)+1)
	for {
		cases = cases[:0]
		idx := make([]int, 0, len(st))
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		for i := range st {
			if len(st[i].stalled) == 0 {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.ch[i])})
				idx = append(idx, i)
			}
		}
		chosen, v, _ := reflect.Select(cases)
		if chosen == 0 {
			return
		}
		f := v.Interface().(fetched)
		i := idx[chosen-1]
		if st[i].boot != 0 && st[i].boot != f.boot {
			// The server restarted: its detector numbers states from 0
			// again and lost the state it was in, so the monitors start
			// over (violations spanning the restart can be missed).
			w.log.Warn("monitor: server restarted; monitors reset", "role", "monitor", "node", i)
			w.count(func(s *WatcherStats) { s.Restarts[i]++ })
			set = w.reset(st)
		}
		st[i].boot = f.boot
		if f.missed > 0 {
			w.count(func(s *WatcherStats) { s.Missed[i] += f.missed })
		}
		for _, c := range f.cands {
			switch {
			case c.Gen < gen:
				continue // discarded by a rollback
			case c.Gen > gen:
				// A rollback we did not run (or whose reply we lost):
				// the servers' states start over in generation c.Gen.
				gen = c.Gen
				set = w.reset(st)
				w.count(func(s *WatcherStats) { s.Gen = gen })
			}
			st[i].stalled = append(st[i].stalled, FromCandidateJSON(c))
		}
		set, gen, _ = w.drain(set, st, gen)
		if allStalled(st) {
			// Every server waits on a full queue (possible with several
			// predicates waiting on each other): nothing can move, so the
			// monitors start over rather than deadlock. Violations among
			// the dropped candidates can be missed; it is counted.
			w.log.Error("monitor: every server's queue is full; monitors reset", "role", "monitor")
			set = w.reset(st)
		}
	}
}

func allStalled(st []loopState) bool {
	for i := range st {
		if len(st[i].stalled) == 0 {
			return false
		}
	}
	return true
}

// reset rebuilds the monitors and forgets every stalled candidate.
func (w *Watcher) reset(st []loopState) *monitor.Set {
	set, err := monitor.NewSet(w.cfg.Monitor, w.cfg.Spec)
	assert(err == nil, "a validated spec no longer builds: %v", err)
	for i := range st {
		st[i].stalled = nil
	}
	w.count(func(s *WatcherStats) { s.Resets++ })
	return set
}

// drain steps every server's waiting candidates until none can move,
// handling violations as they appear. A rollback resets the monitors.
func (w *Watcher) drain(set *monitor.Set, st []loopState, gen uint64) (*monitor.Set, uint64, bool) {
	for progress := true; progress; {
		progress = false
		for i := range st {
			n := 0
			for _, o := range st[i].stalled {
				err := set.Step(o)
				if errors.Is(err, monitor.ErrOverloaded) {
					w.count(func(s *WatcherStats) { s.Stalls++ })
					break
				}
				n++
				if err != nil {
					w.count(func(s *WatcherStats) { s.StepErrors++ })
					w.log.Warn("monitor: candidate refused", "role", "monitor", "node", i, "err", err)
					continue
				}
				w.count(func(s *WatcherStats) { s.Candidates[i]++ })
				if vs := set.Ready(); len(vs) > 0 {
					boots := make([]uint64, len(st))
					for j := range st {
						boots[j] = st[j].boot
					}
					g, rolled := w.handleViolations(vs, gen, boots)
					set.Advance()
					if rolled {
						return w.reset(st), g, true
					}
				}
			}
			if n > 0 {
				progress = true
				st[i].stalled = st[i].stalled[n:]
				if len(st[i].stalled) == 0 {
					st[i].stalled = nil
				}
			}
		}
	}
	return set, gen, false
}

// handleViolations records each violation and, if configured, rolls back (once
// for the batch: the earliest Since covers them all). It returns the
// generation now in force and whether a rollback happened.
//
// With a DataDir, a violation whose identity is stored (reported before
// the watcher restarted) is counted as a duplicate and skipped; a new one
// is stored durably before it is listed, logged or rolled back.
func (w *Watcher) handleViolations(vs []monitor.Violation, gen uint64, boots []uint64) (uint64, bool) {
	now := w.cfg.Now()
	before := uint64(0)
	ids := make([]uint64, 0, len(vs))
	for _, v := range vs {
		key := violationKey(v, gen, boots)
		w.mu.Lock()
		dup := w.reported[key]
		w.mu.Unlock()
		if dup {
			w.count(func(s *WatcherStats) { s.Duplicates++ })
			continue
		}
		r := ViolationReport{Predicate: v.Name, Clause: v.Clause, Since: v.Since, DetectedAt: now}
		for _, c := range v.Cut {
			r.Cut = append(r.Cut, kvcore.CandidateJSON{Server: c.Server, Seq: c.Seq, Start: kvcore.ToHVCJSON(c.Start), End: kvcore.ToHVCJSON(c.End),
				Values: c.Values, Keys: w.cfg.Spec.Keys(v.Predicate, c.Server), Predicate: v.Predicate, Name: v.Name, Gen: gen})
			r.Completed = max(r.Completed, c.Start.Own())
		}
		if now > r.Completed {
			r.LatencyNs = now - r.Completed
		}
		if len(ids) == 0 || v.Since < before {
			before = v.Since
		}
		ids = append(ids, w.record(r, key, gen))
		w.log.Warn("monitor: violation", "role", "monitor", "predicate", v.Name, "clause", v.Clause,
			"since", v.Since, "latency", time.Duration(r.LatencyNs), "cut", cutLabel(v.Cut))
	}
	if len(ids) == 0 {
		return gen, false
	}
	w.maybeAdvise(len(ids))
	if !w.cfg.Rollback || gen < w.startGen {
		return gen, false
	}
	rb := w.rollback(gen, before, ids[0])
	w.mu.Lock()
	w.rollbacks = appendKept(w.rollbacks, rb, w.cfg.ViolationsKept)
	if rb.OK {
		w.stats.Rollbacks++
		w.stats.Gen = rb.Gen
		if err := w.saveStateLocked(rb.Gen); err != nil {
			w.stats.StateErrors++
			w.log.Error("monitor: storing the generation failed", "role", "monitor", "err", err)
		}
		for k := range w.viols {
			for _, id := range ids {
				if w.viols[k].ID == id {
					w.viols[k].Rollback = rb.Gen
				}
			}
		}
	} else {
		w.stats.RollbackFails++
	}
	w.mu.Unlock()
	if !rb.OK {
		return gen, false
	}
	return rb.Gen, true
}

// cutLabel names a cut's states briefly (values omitted: a semilinear
// predicate may name hundreds of keys per server).
func cutLabel(cut []monitor.Candidate) string {
	var b []byte
	for i, c := range cut {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fmt.Appendf(b, "s%d#%d[%d,%d)", c.Server, c.Seq, c.Start.Own(), c.End.Own())
	}
	return string(b)
}

// record lists a new violation under the next id and, with a DataDir,
// stores it (with its identity key) before anyone sees it.
func (w *Watcher) record(r ViolationReport, key string, gen uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	r.ID = w.nextID
	w.nextID++
	w.viols = appendKept(w.viols, r, w.cfg.ViolationsKept)
	if len(w.latencies) < w.cfg.LatenciesMax {
		w.latencies = append(w.latencies, r.LatencyNs)
	}
	w.hist.add(r.LatencyNs)
	w.stats.Violations++
	if w.cfg.DataDir != "" {
		w.rememberLocked(key)
		if err := w.saveStateLocked(max(gen, w.stats.Gen)); err != nil {
			w.stats.StateErrors++
			w.log.Error("monitor: storing the violation failed; a restart may report it again", "role", "monitor", "err", err)
		}
	}
	return r.ID
}

func appendKept[T any](s []T, v T, keep int) []T {
	if len(s) >= keep {
		s = append(s[:0], s[len(s)-keep+1:]...)
	}
	return append(s, v)
}

// maybeAdvise tells the servers to advise cfg.Advice once violations are
// frequent (AdviseAfter within AdviseWindow). It advises once.
func (w *Watcher) maybeAdvise(n int) {
	if w.cfg.AdviseAfter <= 0 {
		return
	}
	now := time.Now()
	w.mu.Lock()
	for range n {
		w.recent = append(w.recent, now)
	}
	for len(w.recent) > 0 && now.Sub(w.recent[0]) > w.cfg.AdviseWindow {
		w.recent = w.recent[1:]
	}
	fire := !w.advising && len(w.recent) >= w.cfg.AdviseAfter
	w.advising = w.advising || fire
	w.mu.Unlock()
	if !fire {
		return
	}
	defer w.count(func(s *WatcherStats) { s.Advised = true })
	for i, addr := range w.cfg.Servers {
		adv := w.cfg.Advice
		if adv.W == 0 { // W = N: sequential with any R ≥ 1
			var m kvcore.Meta
			if err := w.call(context.Background(), addr, http.MethodGet, "/v1/kv/meta", nil, &m, w.cfg.RollbackTimeout); err == nil {
				adv.W = m.N
			}
		}
		var out kvcore.Advice
		if err := w.call(context.Background(), addr, http.MethodPost, "/v1/kv/admin/advice", adv, &out, w.cfg.RollbackTimeout); err != nil {
			w.log.Error("monitor: advice not delivered", "role", "monitor", "node", i, "err", err)
		}
	}
	w.log.Warn("monitor: violations are frequent; advised clients to switch quorum", "role", "monitor",
		"r", w.cfg.Advice.R, "w", w.cfg.Advice.W)
}

// rollback runs one rollback to C(before) as generation max(gen seen)+1:
// pause every server, check every window reaches back far enough, restore
// every server, resume every server. Any failure before the first restore
// resumes the servers and changes nothing; a failure during the restores
// leaves the servers that were restored restored (reported: the store is
// then not at one cut until the failed servers are restored by hand or by
// a later rollback).
func (w *Watcher) rollback(seen, since, violation uint64) RollbackReport {
	start := time.Now()
	rb := RollbackReport{Violation: violation, Since: since, Before: since, Undone: make([]int, len(w.cfg.Servers))}
	ctx := context.Background()
	gen := seen
	for _, addr := range w.cfg.Servers {
		var m kvcore.Meta
		if err := w.call(ctx, addr, http.MethodGet, "/v1/kv/meta", nil, &m, w.cfg.RollbackTimeout); err != nil {
			return w.failed(rb, start, fmt.Errorf("meta of %s: %w", addr, err))
		}
		gen = max(gen, m.Gen)
	}
	rb.Gen = gen + 1
	pause := kvcore.PauseRequest{Gen: rb.Gen, TimeoutMs: (4 * w.cfg.RollbackTimeout).Milliseconds()}
	resumeAll := func() {
		for i, addr := range w.cfg.Servers {
			var out kvcore.PauseResponse
			if err := w.call(ctx, addr, http.MethodPost, "/v1/kv/admin/resume", pause, &out, w.cfg.RollbackTimeout); err != nil {
				w.log.Error("monitor: resume failed (the pause expires by itself)", "role", "monitor", "node", i, "err", err)
			}
		}
	}
	for _, addr := range w.cfg.Servers {
		var out kvcore.PauseResponse
		if err := w.call(ctx, addr, http.MethodPost, "/v1/kv/admin/pause", pause, &out, w.cfg.RollbackTimeout); err != nil {
			resumeAll()
			return w.failed(rb, start, fmt.Errorf("pause %s: %w", addr, err))
		}
	}
	before, keep, err := w.cutAndKeep(ctx, since)
	if err != nil {
		resumeAll()
		return w.failed(rb, start, err)
	}
	rb.Before = before
	for _, addr := range w.cfg.Servers {
		var ss kvcore.ServerStats
		if err := w.call(ctx, addr, http.MethodGet, "/v1/kv/stats", nil, &ss, w.cfg.RollbackTimeout); err != nil {
			resumeAll()
			return w.failed(rb, start, fmt.Errorf("stats of %s: %w", addr, err))
		}
		if before <= ss.Window.Floor {
			resumeAll()
			return w.failed(rb, start, fmt.Errorf("%w: %s keeps records only after %d, the rollback needs %d", kvcore.ErrWindow, addr, ss.Window.Floor, before))
		}
	}
	// Restore every server; retry the ones that fail (a lost request or
	// answer, a server that restarted) while the pauses last, so a
	// transient failure does not leave some replicas restored and others
	// not.
	req := kvcore.RestoreRequest{Before: before, Gen: rb.Gen, Keep: keep}
	retryUntil := start.Add(3 * w.cfg.RollbackTimeout) // the pauses expire at 4×
	pending := make([]int, len(w.cfg.Servers))
	for i := range pending {
		pending[i] = i
	}
	var errs []error
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		errs = errs[:0]
		todo := pending
		if rb.Retries > 0 {
			// A server that restarted before its restore took requests
			// unpaused; a write it applied then that took effect before T
			// elsewhere straddles T now and must be kept there too.
			more, err := w.straddlersAt(ctx, before)
			if err != nil {
				errs, todo = append(errs, err), nil // unknown yet: retry later
			}
			req.Keep = unionVersions(req.Keep, more)
		}
		left := slices.Clone(pending[:len(pending)-len(todo)])
		for _, i := range todo {
			undone, err := w.restoreOne(ctx, w.cfg.Servers[i], pause, req, rb.Retries > 0)
			if err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", w.cfg.Servers[i], err))
				left = append(left, i)
				continue
			}
			rb.Undone[i] = undone
		}
		pending = left
		if len(pending) == 0 || time.Now().Add(wait).After(retryUntil) {
			break
		}
		w.log.Warn("monitor: restore failed; retrying", "role", "monitor", "gen", rb.Gen, "servers", fmt.Sprint(pending), "err", errors.Join(errs...))
		time.Sleep(wait)
		rb.Retries++
	}
	resumeAll()
	if len(errs) > 0 {
		return w.failed(rb, start, errors.Join(errs...))
	}
	rb.OK, rb.TookNs = true, time.Since(start).Nanoseconds()
	w.log.Warn("monitor: rolled back", "role", "monitor", "gen", rb.Gen, "since", since, "before", before, "kept", len(keep), "undone", fmt.Sprint(rb.Undone),
		"took", time.Since(start))
	return rb
}

// restoreOne restores one server to the cut. A retry first asks for the
// server's generation: at req.Gen it was restored already (the answer was
// lost; its count of undone writes is unknown, 0); below, it is paused
// again (a restarted server lost its pause) and restored.
func (w *Watcher) restoreOne(ctx context.Context, addr string, pause kvcore.PauseRequest, req kvcore.RestoreRequest, retry bool) (int, error) {
	if retry {
		var m kvcore.Meta
		if err := w.call(ctx, addr, http.MethodGet, "/v1/kv/meta", nil, &m, w.cfg.RollbackTimeout); err != nil {
			return 0, err
		}
		if m.Gen >= req.Gen {
			return 0, nil
		}
		var out kvcore.PauseResponse
		if err := w.call(ctx, addr, http.MethodPost, "/v1/kv/admin/pause", pause, &out, w.cfg.RollbackTimeout); err != nil {
			return 0, err
		}
	}
	var out kvcore.RestoreResponse
	if err := w.call(ctx, addr, http.MethodPost, "/v1/kv/admin/restore", req, &out, w.cfg.RollbackTimeout); err != nil {
		return 0, err
	}
	return out.Undone, nil
}

// straddlersAt lists the writes that straddle t now (see ChooseCut).
func (w *Watcher) straddlersAt(ctx context.Context, t uint64) ([]kvcore.Version, error) {
	keep, _, err := straddlers(w.cutSources(ctx), t)
	return keep, err
}

// unionVersions appends to a the versions of b it lacks.
func unionVersions(a, b []kvcore.Version) []kvcore.Version {
	have := make(map[string]bool, len(a))
	for _, v := range a {
		have[v.String()] = true
	}
	for _, v := range b {
		if !have[v.String()] {
			have[v.String()] = true
			a = append(a, v)
		}
	}
	return a
}

// cutAndKeep chooses the cut and the writes that straddle it (ChooseCut)
// by asking every server over HTTP.
func (w *Watcher) cutAndKeep(ctx context.Context, since uint64) (uint64, []kvcore.Version, error) {
	return ChooseCut(w.cutSources(ctx), since)
}

// cutSources asks every server over HTTP.
func (w *Watcher) cutSources(ctx context.Context) []CutSource {
	srcs := make([]CutSource, len(w.cfg.Servers))
	for i, addr := range w.cfg.Servers {
		srcs[i] = httpCutSource{w: w, ctx: ctx, addr: addr}
	}
	return srcs
}

// httpCutSource asks one kv server through its admin endpoints.
type httpCutSource struct {
	w    *Watcher
	ctx  context.Context
	addr string
}

func (h httpCutSource) LateVersions(before uint64) ([]kvcore.Version, error) {
	var out kvcore.VersionsResponse
	if err := h.w.call(h.ctx, h.addr, http.MethodPost, "/v1/kv/admin/late", kvcore.VersionsRequest{Before: before}, &out, h.w.cfg.RollbackTimeout); err != nil {
		return nil, fmt.Errorf("late writes of %s: %w", h.addr, err)
	}
	return out.Versions, nil
}

func (h httpCutSource) EarlyVersions(before uint64, versions []kvcore.Version) ([]kvcore.Version, []uint64, error) {
	var out kvcore.VersionsResponse
	// Ask in chunks, so a request stays well under the servers' body limit.
	const chunk = 256 // versions of up to VersionEntriesMax entries: < 1 MiB
	for lo := 0; lo < len(versions); lo += chunk {
		var part kvcore.VersionsResponse
		req := kvcore.VersionsRequest{Before: before, Versions: versions[lo:min(lo+chunk, len(versions))]}
		if err := h.w.call(h.ctx, h.addr, http.MethodPost, "/v1/kv/admin/early", req, &part, h.w.cfg.RollbackTimeout); err != nil {
			return nil, nil, fmt.Errorf("early writes of %s: %w", h.addr, err)
		}
		if len(part.CutTimes) != len(part.Versions) {
			return nil, nil, fmt.Errorf("%w: %s answered %d versions and %d times", kvcore.ErrUnavailable, h.addr, len(part.Versions), len(part.CutTimes))
		}
		out.Versions, out.CutTimes = append(out.Versions, part.Versions...), append(out.CutTimes, part.CutTimes...)
	}
	return out.Versions, out.CutTimes, nil
}

func (w *Watcher) failed(rb RollbackReport, start time.Time, err error) RollbackReport {
	rb.Error, rb.TookNs = err.Error(), time.Since(start).Nanoseconds()
	w.log.Error("monitor: rollback failed", "role", "monitor", "gen", rb.Gen, "err", err)
	return rb
}

func (w *Watcher) count(f func(*WatcherStats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// Stats returns a copy of the counters.
func (w *Watcher) Stats() WatcherStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Candidates = append([]uint64(nil), s.Candidates...)
	s.Missed = append([]uint64(nil), s.Missed...)
	s.FetchErrors = append([]uint64(nil), s.FetchErrors...)
	s.Restarts = append([]uint64(nil), s.Restarts...)
	return s
}

// Violations returns the recent violations, oldest first.
func (w *Watcher) Violations() []ViolationReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ViolationReport(nil), w.viols...)
}

// Rollbacks returns the recent rollbacks, oldest first.
func (w *Watcher) Rollbacks() []RollbackReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]RollbackReport(nil), w.rollbacks...)
}

// Latencies returns the detection latencies recorded (ns, in detection
// order; the first LatenciesMax).
func (w *Watcher) Latencies() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]uint64(nil), w.latencies...)
}

// call does one JSON exchange with a kv server.
func (w *Watcher) call(ctx context.Context, addr, method, path string, in, out any, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return exchangeJSON(ctx, w.hc, method, addr, path, in, out, 256<<20)
}

// exchangeJSON sends in (nil: no body) as JSON to http://addr+path and
// decodes a 200 answer of at most limit bytes into out; an error body in
// the server's shape is that error, anything else ErrUnavailable.
func exchangeJSON(ctx context.Context, hc *http.Client, method, addr, path string, in, out any, limit int64) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, body)
	if err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrInvalid, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", kvcore.ErrUnavailable, addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", kvcore.ErrUnavailable, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e kvcore.ErrorJSON
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return fmt.Errorf("%w: %s: HTTP %d", kvcore.ErrUnavailable, addr, resp.StatusCode)
		}
		return kvcore.ErrorOf(e.Error.Code, e.Error.Message)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s: bad answer: %v", kvcore.ErrUnavailable, addr, err)
	}
	return nil
}
