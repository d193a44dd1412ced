package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/launch"
)

const (
	// finalTimeout bounds one attempt at a workload's final read.
	finalTimeout = 30 * time.Second
	// finalAttemptsMax bounds the attempts at a final read.
	finalAttemptsMax = 5
	// setupTimeout bounds a workload's setup, retries included.
	setupTimeout = 60 * time.Second
	// stopTimeout bounds the server's clean exit at the end.
	stopTimeout = 15 * time.Second
)

// harness is one run's shared state.
type harness struct {
	cfg   Config
	log   *slog.Logger
	began time.Time // Run was called
	// start is the clock of the histories and the journal: the clients'
	// start, once the target serves and every workload is set up.
	start     time.Time
	healed    atomic.Bool  // every fault is undone; set at the healed phase's start
	ops       atomic.Int64 // operations completed
	stopCh    chan struct{}
	clients   int                          // workload clients (workers), numbered from 0
	mark      atomic.Pointer[recoveryMark] // the kill being measured, if any
	finalKill bool                         // the target's final fault ran
	mover     *mover                       // the cluster's mover, while it runs (nil: none)
	moves     *MoveStats                   // the mover's final counts (nil: no mover ran)
}

func (h *harness) now() int64 { return time.Since(h.start).Nanoseconds() }

func (h *harness) stopping() bool {
	select {
	case <-h.stopCh:
		return true
	default:
		return false
	}
}

// recoveryMark watches for each workload client's first ok operation
// invoked after a kill.
type recoveryMark struct {
	at    int64          // h.now() at the kill
	first []atomic.Int64 // by client: h.now() at that operation's completion; 0: none yet
}

// markKill starts watching for every client's next ok operation.
func (h *harness) markKill() *recoveryMark {
	m := &recoveryMark{at: h.now(), first: make([]atomic.Int64, h.clients)}
	h.mark.Store(m)
	return m
}

// sawOK notes client's ok operation invoked at inv and completed at done.
func (h *harness) sawOK(client int, inv, done int64) {
	m := h.mark.Load()
	if m == nil || client < 0 || client >= len(m.first) || inv < m.at {
		return
	}
	m.first[client].CompareAndSwap(0, done)
}

// recovered reports when the last client completed its first ok operation
// after the kill (nanoseconds since the kill), once every client has.
func (m *recoveryMark) recovered() (time.Duration, bool) {
	last := m.at
	for i := range m.first {
		t := m.first[i].Load()
		if t == 0 {
			return 0, false
		}
		last = max(last, t)
	}
	return time.Duration(last - m.at), true
}

// addrBook holds the addresses clients spread over and fail over between:
// one for a server, the gatekeepers' API addresses for a cluster (updated
// from the coordinator's configuration). Safe for concurrent use.
type addrBook struct {
	mu   sync.Mutex
	list []string
}

func newAddrBook(addrs ...string) *addrBook { return &addrBook{list: slices.Clone(addrs)} }

// get returns the i-th address, modulo their number.
func (b *addrBook) get(i int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.list[i%len(b.list)]
}

// next returns the address after cur (the first when cur is not listed).
func (b *addrBook) next(cur string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.list, cur)
	return b.list[(i+1)%len(b.list)]
}

// set replaces the addresses; an empty list is ignored (a client must have
// somewhere to go).
func (b *addrBook) set(addrs []string) {
	if len(addrs) == 0 {
		return
	}
	b.mu.Lock()
	b.list = slices.Clone(addrs)
	b.mu.Unlock()
}

// has reports whether addr is in the book.
func (b *addrBook) has(addr string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.list, addr)
}

func (b *addrBook) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.list)
}

// client is one workload client with the stats of its goroutines.
type clientRun struct {
	wl      workload
	workers []*worker
	final   *worker
}

// Run runs the fault test cfg describes and reports what the checkers
// found. The error is for a run that could not be carried out (the server
// or the cluster did not start, a directory could not be written);
// anomalies, lost writes and liveness failures are in the Report, which is
// then not Valid. Every process it starts is stopped before it returns, on
// errors and when ctx ends too.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, log: cfg.Logger, began: time.Now(), stopCh: make(chan struct{})}
	h.start = h.began
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.RemoveAll(filepath.Join(cfg.OutDir, WorkloadSetFull)); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	var t target
	var err error
	if cfg.Cluster != nil {
		t, err = startCluster(ctx, h)
	} else {
		t, err = startServerTarget(h)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = t.stop() }()
	runs, err := h.prepare(ctx, t.addrs())
	if err != nil {
		return nil, err
	}
	defer closeClients(runs)
	h.start = time.Now()
	j := &journal{start: h.start, log: h.log}
	nem := &nemesis{t: t, journal: j, counts: map[FaultKind]int{}}
	problems := h.exercise(ctx, runs, nem)
	problems = append(problems, h.finish(runs, nem)...)
	if err := t.stop(); err != nil {
		problems = append(problems, fmt.Sprintf("stopping: %v", err))
	}
	if ctx.Err() != nil {
		problems = append(problems, fmt.Sprintf("the run was cut short (%v): the fault plan and the healed phase did not run to their end", context.Cause(ctx)))
	}
	rep, err := h.report(runs, nem, j, problems)
	if err != nil {
		return nil, err
	}
	if rep.Valid && !cfg.KeepData {
		for _, d := range dataDirs(t) {
			_ = os.RemoveAll(d)
		}
	}
	return rep, nil
}

// startServerTarget starts `weft serve` on a fresh data directory behind the
// fault proxy.
func startServerTarget(h *harness) (*serverTarget, error) {
	dataDir := filepath.Join(h.cfg.OutDir, "data")
	if err := os.RemoveAll(dataDir); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	srv, err := launch.NewChild(launch.ChildSpec{Name: "weft serve", Path: h.cfg.Bin,
		// Four shards and two gatekeepers, whatever the machine's default:
		// transactions across shards and gatekeepers are what faults test.
		Args:    []string{"serve", "--data-dir", dataDir, "--grpc-addr", addr, "--http-addr", "", "--shards", "4", "--gatekeepers", "2"},
		LogPath: filepath.Join(h.cfg.OutDir, "serve.log"), Ready: "weft serving", ReadyTimeout: h.cfg.ReadyTimeout})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	proxy, err := faultproxy.New(faultproxy.Config{Listen: "127.0.0.1:0", Target: addr, Seed: h.cfg.Seed,
		HoldBytesMax: 1 << 20, ReadBytesMax: 32 << 10, ConnsMax: 1024, DialTimeout: 5 * time.Second}, h.log)
	if err != nil {
		_ = srv.Kill()
		return nil, err
	}
	return &serverTarget{srv: srv, proxy: proxy, book: newAddrBook(proxy.Addr()), dataDir: dataDir}, nil
}

// dataDirs are the directories a valid run removes (unless KeepData).
func dataDirs(t target) []string {
	switch t := t.(type) {
	case *serverTarget:
		return []string{t.dataDir}
	case *clusterTarget:
		return t.dataDirs()
	}
	return nil
}

// prepare sets up every workload and dials its clients.
func (h *harness) prepare(ctx context.Context, book *addrBook) ([]*clientRun, error) {
	var runs []*clientRun
	for wi, name := range h.cfg.Workloads {
		wl, err := newWorkload(name, h)
		if err != nil {
			return nil, err
		}
		run := &clientRun{wl: wl}
		runs = append(runs, run)
		n := h.cfg.Clients * wl.workers()
		for slot := range n + 1 {
			client := -1 // the final reader is not a recovery-measured client
			if slot < n {
				client, h.clients = h.clients, h.clients+1
			}
			addr := book.get(max(client, 0))
			c, err := weft.Dial(addr, weft.Options{CallTimeout: h.cfg.OpTimeout, Attempts: 1})
			if err != nil {
				closeClients(runs)
				return nil, err
			}
			w := &worker{h: h, stats: &clientStats{}, c: c, proc: slot, stride: n + 1, timeout: h.cfg.OpTimeout,
				rng:  rand.New(rand.NewPCG(h.cfg.Seed, uint64(wi)<<32|uint64(slot))),
				book: book, addr: addr, client: client}
			if slot == n {
				w.timeout, run.final = finalTimeout, w
			} else {
				run.workers = append(run.workers, w)
			}
		}
		if err := h.setup(ctx, wl, run.final.c); err != nil {
			closeClients(runs)
			return nil, err
		}
	}
	return runs, nil
}

// setup runs a workload's setup until it succeeds or setupTimeout passes.
func (h *harness) setup(ctx context.Context, wl workload, c *weft.Client) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	for {
		err := wl.setup(ctx, c)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("faults: setting up %s: %w", wl.name(), err)
		}
		h.log.Warn("setup failed; retrying", "workload", wl.name(), "err", err)
		sleep(ctx, 200*time.Millisecond)
	}
}

func closeClients(runs []*clientRun) {
	for _, r := range runs {
		for _, w := range append(slices.Clone(r.workers), r.final) {
			if w != nil {
				_ = w.c.Close()
			}
		}
	}
}

// exercise runs the clients through the fault phase and the healed phase
// and stops them.
func (h *harness) exercise(ctx context.Context, runs []*clientRun, nem *nemesis) []string {
	var wg sync.WaitGroup
	for _, r := range runs {
		for slot, w := range r.workers {
			wg.Go(func() { r.wl.run(w, slot) })
		}
	}
	stopMover := h.startMover(ctx, runs, nem) // before progress, which reads h.mover
	progress := h.progress(nem)
	var problems []string
	faultEnd := h.start.Add(h.cfg.Duration - h.cfg.healed())
	plan := PlanFaults(rand.New(rand.NewPCG(h.cfg.Seed, 0x6e656d6573697300)), h.cfg.Nemeses, time.Until(faultEnd), h.cfg.Timing)
	if err := nem.run(ctx, plan, faultEnd); err != nil {
		problems = append(problems, fmt.Sprintf("nemesis: %v", err))
	}
	sleep(ctx, time.Until(faultEnd))
	if err := nem.healAll(); err != nil {
		problems = append(problems, fmt.Sprintf("healing: %v", err))
	}
	h.healed.Store(true)
	// The healed phase starts once every fault is undone, and lasts its
	// whole length even when the last fault's recovery (a cluster's) or the
	// healing ran past the fault phase's end.
	sleep(ctx, h.cfg.healed())
	close(h.stopCh)
	h.moves = stopMover()
	wg.Wait()
	progress()
	nem.journal.note("clients-stopped", fmt.Sprintf("%d operations", h.ops.Load()))
	return problems
}

// startMover starts the cluster's mover when MoveEvery is set (mover.go);
// the returned function stops it, waits for it and returns its counts (nil
// when none ran).
func (h *harness) startMover(ctx context.Context, runs []*clientRun, nem *nemesis) func() *MoveStats {
	ct, ok := nem.t.(*clusterTarget)
	if !ok || h.cfg.Cluster == nil || h.cfg.Cluster.MoveEvery <= 0 {
		return func() *MoveStats { return nil }
	}
	m := newMover(h.cfg.Cluster.MoveEvery, h.cfg.Seed, ct.moveAddrs, func() []string { return workloadKeys(runs) },
		nem.journal, h.log)
	h.mover = m
	return m.start(ctx)
}

// progress prints a status line every ProgressEvery until the returned
// function is called.
func (h *harness) progress(nem *nemesis) func() {
	if h.cfg.Progress == nil || h.cfg.ProgressEvery <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(h.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				moves := ""
				if h.mover != nil {
					s := h.mover.snapshot()
					moves = fmt.Sprintf(" moves=%d refused=%d failed=%d", s.Moves, s.Refusals, s.Failures)
				}
				fmt.Fprintf(h.cfg.Progress, "faults: %5.0fs ops=%d %s%s healed=%v\n",
					time.Since(h.start).Seconds(), h.ops.Load(), nem.t.describe(), moves, h.healed.Load())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// finish runs the target's final fault (the server's kill -9 and restart,
// when kill is a nemesis), then every workload's final read against the
// healed target.
func (h *harness) finish(runs []*clientRun, nem *nemesis) []string {
	var problems []string
	if slices.Contains(h.cfg.Nemeses, FaultKill) {
		ran, err := nem.t.finalFault(nem.journal)
		h.finalKill = ran
		if err != nil {
			return append(problems, err.Error())
		}
	}
	for _, r := range runs {
		ok := false
		for range finalAttemptsMax {
			if ok = r.wl.final(r.final) == check.OK; ok {
				break
			}
			time.Sleep(time.Second)
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: the final read did not succeed in %d attempts (last error: %s)",
				r.wl.name(), finalAttemptsMax, r.final.stats.lastError))
		}
	}
	return problems
}

// freeAddr returns a loopback address for a process to bind.
func freeAddr() (string, error) { return launch.FreeAddr() }

// writeHistories saves every history under the output directory.
func (h *harness) writeHistories(runs []*clientRun) ([]string, error) {
	var files []string
	for _, r := range runs {
		for _, nh := range r.wl.histories() {
			path := filepath.Join(h.cfg.OutDir, nh.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			f, err := os.Create(path)
			if err != nil {
				return nil, err
			}
			err = check.WriteHistory(f, nh.h)
			if err = errors.Join(err, f.Close()); err != nil {
				return nil, fmt.Errorf("faults: writing %s: %w", path, err)
			}
			files = append(files, nh.file)
		}
	}
	return files, nil
}
