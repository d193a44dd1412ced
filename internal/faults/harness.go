package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	weft "github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/check"
	"github.com/weft-db/weft/internal/faultproxy"
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
	cfg    Config
	log    *slog.Logger
	start  time.Time
	healed atomic.Bool  // every fault is undone; set at the healed phase's start
	ops    atomic.Int64 // operations completed
	stopCh chan struct{}
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

// client is one workload client with the stats of its goroutines.
type clientRun struct {
	wl      workload
	workers []*worker
	final   *worker
}

// Run runs the fault test cfg describes and reports what the checkers
// found. The error is for a run that could not be carried out (the server
// did not start, a directory could not be written); anomalies, lost writes
// and liveness failures are in the Report, which is then not Valid.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, log: cfg.Logger, start: time.Now(), stopCh: make(chan struct{})}
	if h.log == nil {
		h.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dataDir := filepath.Join(cfg.OutDir, "data")
	for _, stale := range []string{dataDir, filepath.Join(cfg.OutDir, WorkloadSetFull)} {
		if err := os.RemoveAll(stale); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	srv := &proc{bin: cfg.Bin, logPath: filepath.Join(cfg.OutDir, "serve.log"), ready: "weft serving",
		readyTimeout: cfg.ReadyTimeout,
		args:         []string{"serve", "--data-dir", dataDir, "--grpc-addr", addr, "--http-addr", ""}}
	if err := srv.start(); err != nil {
		return nil, err
	}
	defer func() { _ = srv.kill() }()
	proxy, err := faultproxy.New(faultproxy.Config{Listen: "127.0.0.1:0", Target: addr, Seed: cfg.Seed,
		HoldBytesMax: 1 << 20, ReadBytesMax: 32 << 10, ConnsMax: 1024, DialTimeout: 5 * time.Second}, h.log)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	j := &journal{start: h.start, log: h.log}
	nem := &nemesis{srv: srv, proxy: proxy, journal: j, counts: map[FaultKind]int{}}
	runs, err := h.prepare(ctx, proxy.Addr())
	if err != nil {
		return nil, err
	}
	defer closeClients(runs)
	problems := h.exercise(ctx, runs, nem)
	problems = append(problems, h.finish(runs, nem)...)
	if err := srv.stop(stopTimeout); err != nil {
		problems = append(problems, fmt.Sprintf("stopping the server: %v", err))
	}
	rep, err := h.report(runs, nem, srv, j, problems)
	if err != nil {
		return nil, err
	}
	if rep.Valid && !cfg.KeepData {
		_ = os.RemoveAll(dataDir)
	}
	return rep, nil
}

// prepare sets up every workload and dials its clients.
func (h *harness) prepare(ctx context.Context, addr string) ([]*clientRun, error) {
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
			c, err := weft.Dial(addr, weft.Options{CallTimeout: h.cfg.OpTimeout, Attempts: 1})
			if err != nil {
				closeClients(runs)
				return nil, err
			}
			w := &worker{h: h, stats: &clientStats{}, c: c, proc: slot, stride: n + 1, timeout: h.cfg.OpTimeout,
				rng: rand.New(rand.NewPCG(h.cfg.Seed, uint64(wi)<<32|uint64(slot)))}
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
	sleep(ctx, time.Until(h.start.Add(h.cfg.Duration)))
	close(h.stopCh)
	wg.Wait()
	progress()
	nem.journal.note("clients-stopped", fmt.Sprintf("%d operations", h.ops.Load()))
	return problems
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
				running, paused := nem.srv.state()
				state := map[bool]string{true: "up", false: "down"}[running]
				if paused {
					state = "paused"
				}
				fmt.Fprintf(h.cfg.Progress, "faults: %5.0fs ops=%d server=%s healed=%v\n",
					time.Since(h.start).Seconds(), h.ops.Load(), state, h.healed.Load())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// finish kills and restarts the server once more (when kill is a nemesis),
// then runs every workload's final read.
func (h *harness) finish(runs []*clientRun, nem *nemesis) []string {
	var problems []string
	if slices.Contains(h.cfg.Nemeses, FaultKill) {
		nem.journal.note("kill", "final kill -9 before the final reads")
		if err := nem.srv.kill(); err != nil {
			return append(problems, fmt.Sprintf("final kill: %v", err))
		}
		if err := nem.restart(); err != nil {
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

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

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
