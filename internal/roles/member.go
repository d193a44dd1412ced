package roles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// epochEngine is what one epoch runs: built once the epoch is active, stopped
// when the next one comes.
type epochEngine struct {
	// install makes the engine serve (called under the member's lock, so
	// it never races a stop).
	install func()
	// stop takes it out of service, drains what must finish before the
	// next epoch may be acknowledged, and closes it. An error means the
	// drain failed: the process must exit rather than acknowledge.
	stop func() error
	// load, if set, reports the engine's gauges for the heartbeat.
	load func() map[string]float64
	// err, if set, reports the error that stopped the engine (nil while
	// it serves).
	err func() error
	// stalls, if set, reports since when the engine has failed to reach
	// each peer it needs, by member id (a gatekeeper: its shards); zero
	// time: reached (lease.go).
	stalls func() map[uint64]time.Time
}

// buildFunc builds the engine of an active configuration for slot (not yet
// serving). epoch is the vector-clock epoch (base + coordinator epoch);
// lease is the member's lease, which the engine asks before serving.
type buildFunc func(ctx context.Context, conf *pb.Config, slot int, epoch uint64, lease *coord.LeaseState) (*epochEngine, error)

// member keeps a process's engine in step with the coordinator's
// configuration: on a new epoch (or a change of slot) it stops the old
// engine before acknowledging; once the epoch is active — every live member
// has stopped its old engine, so no commit of an older epoch can still reach
// the store — and the member holds a slot, it builds the new one.
type member struct {
	base  uint64
	build buildFunc
	log   *slog.Logger
	// grace is how long an engine that stopped on an error may wait for a
	// new epoch (which rebuilds it) before the member registers again.
	grace time.Duration
	// rejoin is called once the member must register again.
	rejoin func()
	// lease is this registration's lease (RunMember renews it).
	lease *coord.LeaseState

	mu      sync.Mutex
	want    *pb.Config
	slot    int32
	running uint64 // coordinator epoch of the serving engine; 0: none
	runSlot int32
	cur     *epochEngine
	kick    chan struct{}
}

func newMember(base uint64, build buildFunc, log *slog.Logger) *member {
	return &member{base: base, build: build, log: log, slot: -1, kick: make(chan struct{}, 1), rejoin: func() {},
		lease: coord.NewLeaseState(coord.ProcessClock())}
}

// engineErr is the error that stopped the serving engine, if any.
func (m *member) engineErr() error {
	m.mu.Lock()
	cur := m.cur
	m.mu.Unlock()
	if cur == nil || cur.err == nil {
		return nil
	}
	return cur.err()
}

// onConfig is coord.MemberConfig.OnConfig.
func (m *member) onConfig(_ context.Context, conf *pb.Config, self *pb.Member) error {
	m.mu.Lock()
	m.want, m.slot = conf, self.GetSlot()
	var old *epochEngine
	if m.cur != nil && (m.running != conf.GetEpoch() || m.runSlot != self.GetSlot()) {
		old, m.cur, m.running = m.cur, nil, 0
	}
	m.mu.Unlock()
	if old != nil {
		m.log.Info("leaving the configuration epoch", "next_epoch", conf.GetEpoch(), "slot", self.GetSlot())
		if err := old.stop(); err != nil {
			return err
		}
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
	return nil
}

// ready says whether conf can be built for slot: active, held, and every
// slot of the configuration filled.
func ready(conf *pb.Config, slot int32) bool {
	if conf == nil || slot < 0 || conf.GetActiveEpoch() < conf.GetEpoch() {
		return false
	}
	for _, eps := range [][]*pb.Endpoint{conf.GetGatekeepers(), conf.GetShards()} {
		if len(eps) == 0 {
			return false
		}
		for _, e := range eps {
			if e.GetMember() == 0 || e.GetAddress() == "" {
				return false
			}
		}
	}
	return true
}

// loop builds engines as configurations become ready, until ctx ends; then
// it stops the serving one.
func (m *member) loop(ctx context.Context) {
	defer func() {
		m.mu.Lock()
		old := m.cur
		m.cur, m.running = nil, 0
		m.mu.Unlock()
		if old != nil {
			if err := old.stop(); err != nil {
				m.log.Error("stopping", "err", err)
			}
		}
	}()
	watch := time.NewTicker(100 * time.Millisecond)
	defer watch.Stop()
	var failedSince time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-watch.C:
			if err := m.engineErr(); err == nil {
				failedSince = time.Time{}
			} else if failedSince.IsZero() {
				failedSince = now
			} else if now.Sub(failedSince) >= m.grace {
				// No new epoch rebuilt it: leave the slot (the
				// coordinator gives it to a backup) and come back as a
				// new member.
				m.log.Warn("the engine stopped and no new epoch replaced it: registering again", "err", err)
				m.rejoin()
				return
			}
			continue
		case <-m.kick:
		}
		for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
			m.mu.Lock()
			conf, slot := m.want, m.slot
			todo := ready(conf, slot) && (m.cur == nil || m.running != conf.GetEpoch())
			m.mu.Unlock()
			if !todo {
				break
			}
			t := time.Now()
			e, err := m.build(ctx, conf, int(slot), m.base+conf.GetEpoch(), m.lease)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				m.log.Warn("building the epoch's engine failed; retrying", "epoch", conf.GetEpoch(), "slot", slot, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				continue
			}
			m.mu.Lock()
			current := m.want.GetEpoch() == conf.GetEpoch() && m.slot == slot && m.cur == nil
			if current {
				m.cur, m.running, m.runSlot = e, conf.GetEpoch(), slot
				e.install()
			}
			m.mu.Unlock()
			if !current {
				if err := e.stop(); err != nil {
					m.log.Error("stopping an engine built for a passed epoch", "err", err)
				}
				continue
			}
			m.log.Info("serving", "epoch", conf.GetEpoch(), "clock_epoch", m.base+conf.GetEpoch(), "slot", slot,
				"build_seconds", fmt.Sprintf("%.3f", time.Since(t).Seconds()))
		}
	}
}

// load is coord.MemberConfig.Load: the serving engine's gauges, with the
// slot and the epoch, and the lease's.
func (m *member) load() map[string]float64 {
	m.mu.Lock()
	cur, epoch, slot := m.cur, m.running, m.runSlot
	m.mu.Unlock()
	valid := 0.0
	if m.lease.MayServe() {
		valid = 1
	}
	if cur == nil {
		return map[string]float64{"serving": 0, "lease_valid": valid}
	}
	out := map[string]float64{"serving": 1, "slot": float64(slot), "epoch": float64(epoch), "lease_valid": valid}
	if cur.load != nil {
		for k, v := range cur.load() {
			out[k] = v
		}
	}
	return out
}

// runMember keeps a process in the cluster: it registers a member (a new
// one each time), follows its epochs, and registers again when the
// coordinator fenced it (it was declared failed: paused, partitioned) or
// its engine stopped and no new epoch rebuilt it within grace; it returns
// nil when ctx ends, or the error that must stop the process.
func runMember(ctx context.Context, c *coordclient.Client, mc coord.MemberConfig, base uint64, build buildFunc,
	grace time.Duration, stats *Stats, lc leaseConfig, log *slog.Logger) error {
	for {
		m := newMember(base, build, log)
		m.grace = grace
		if lc.plantIgnore {
			m.lease.PlantIgnoreExpiry()
		}
		mc.Lease = m.lease
		rep := &reporter{lease: m.lease, after: lc.unreachableAfter, stalls: m.stalls, log: log}
		mc.Unreachable = rep.unreachable
		mctx, cancel := context.WithCancel(ctx)
		var rejoined atomic.Bool
		m.rejoin = func() { rejoined.Store(true); cancel() }
		done := make(chan struct{})
		go func() { defer close(done); m.loop(mctx) }()
		mc.OnConfig = m.onConfig
		mc.Load = func() map[string]float64 {
			l := m.load()
			l["lease_refusals"] = float64(lc.refusals.Load() + m.lease.Refusals())
			stats.set(l)
			return l
		}
		err := coord.RunMember(mctx, c, mc, log)
		cancel()
		<-done
		lc.refusals.Add(m.lease.Refusals()) // the process's count goes on across registrations
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, coordclient.ErrFenced) || (err == nil && rejoined.Load()):
			log.Warn("registering with the coordinator again, as a new member", "after", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
		default:
			return err
		}
	}
}

// stalls is the serving engine's report of unreachable peers (nil: none).
func (m *member) stalls() map[uint64]time.Time {
	m.mu.Lock()
	cur := m.cur
	m.mu.Unlock()
	if cur == nil || cur.stalls == nil {
		return nil
	}
	return cur.stalls()
}
