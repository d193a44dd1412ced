package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/faultproxy"
	"github.com/weft-db/weft/internal/wire/coordpb"
)

// Partitions of a cluster (docs/cluster.md, "Leases"; docs/testing.md). With
// ClusterConfig.Proxied every gatekeeper and shard process talks to the
// coordinator replicas through fault proxies of its own, and every
// gatekeeper to every shard through one proxy per (gatekeeper, shard); the
// lease kinds below partition them. Clients, PostgreSQL, Kronos and the
// shards' hops are not proxied: the members cut off from the coordinators
// still serve the clients that reach them — unless their leases stop them.
const (
	// FaultIsolateHolders cuts every slot-holding gatekeeper and shard
	// off from every coordinator replica (both ways) for the hold; clients
	// go on reaching them. Their leases lapse, the coordinator replaces
	// them with backups, and when the cut heals they find they were fenced
	// and register again as backups.
	FaultIsolateHolders FaultKind = "isolate-holders"
	// FaultIsolateGatekeeperShard cuts one gatekeeper slot holder from one
	// shard slot holder (both ways) for the hold, everything else
	// connected: the gatekeeper reports the shard unreachable and the
	// coordinator replaces one of them.
	FaultIsolateGatekeeperShard FaultKind = "isolate-gk-shard"
)

// LeaseNemeses are the partition kinds; they need ClusterConfig.Proxied.
var LeaseNemeses = []FaultKind{FaultIsolateHolders, FaultIsolateGatekeeperShard}

func isIsolation(k FaultKind) bool { return slices.Contains(LeaseNemeses, k) }

// memberProxies are one gatekeeper or shard process's proxies: to each
// coordinator replica, and (a gatekeeper's) to each shard process by the
// shard's address.
type memberProxies struct {
	coord  []*faultproxy.Proxy
	shards map[string]*faultproxy.Proxy
}

// proxies holds every proxy of a Proxied cluster, by process name.
type proxies struct {
	mu     sync.Mutex
	by     map[string]*memberProxies
	closed bool
}

func (p *proxies) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, mp := range p.by {
		for _, x := range mp.coord {
			_ = x.Close()
		}
		for _, x := range mp.shards {
			_ = x.Close()
		}
	}
	p.closed = true
}

// routeThroughProxies puts proxies between every gatekeeper and shard
// process and the coordinators (and between gatekeepers and shards), then
// restarts those processes with their proxies' addresses: they come back as
// new members, and the cluster is whole again before the clients start.
func (t *clusterTarget) routeThroughProxies(ctx context.Context, j *journal) error {
	t.mu.Lock()
	var coords, shards, routed []*member
	for _, m := range t.members {
		switch m.Role {
		case roleCoord:
			coords = append(coords, m)
		case roleShard:
			shards = append(shards, m)
			routed = append(routed, m)
		case roleGatekeeper:
			routed = append(routed, m)
		}
	}
	t.mu.Unlock()
	t.px = &proxies{by: map[string]*memberProxies{}}
	newProxy := func(target string) (*faultproxy.Proxy, error) {
		cfg := faultproxy.DefaultConfig()
		cfg.Listen, cfg.Target, cfg.Seed = "127.0.0.1:0", target, t.h.cfg.Seed
		return faultproxy.New(cfg, t.h.log)
	}
	for _, m := range routed {
		mp := &memberProxies{shards: map[string]*faultproxy.Proxy{}}
		t.px.by[m.Name] = mp
		var addrs []string
		for _, c := range coords {
			p, err := newProxy(c.Addr)
			if err != nil {
				return err
			}
			mp.coord = append(mp.coord, p)
			addrs = append(addrs, p.Addr())
		}
		args := setFlag(m.Args, "--coord", strings.Join(addrs, ","))
		if m.Role == roleGatekeeper {
			var via []string
			for _, s := range shards {
				p, err := newProxy(s.Addr)
				if err != nil {
					return err
				}
				mp.shards[s.Addr] = p
				via = append(via, s.Addr+"="+p.Addr())
			}
			args = setFlag(args, "--dial-via", strings.Join(via, ","))
		}
		if t.cc.PlantIgnoreLease {
			args = setFlag(args, "--plant-ignore-lease", "true")
		}
		t.mu.Lock()
		m.Args = args
		t.mu.Unlock()
	}
	before, err := t.leaderStatus(ctx)
	if err != nil {
		return err
	}
	for _, m := range routed {
		if err := t.kill(m); err != nil {
			return err
		}
	}
	for _, m := range routed {
		if err := t.restart(m, j); err != nil {
			return err
		}
	}
	j.note("proxied", fmt.Sprintf("%d gatekeeper and shard processes talk to the coordinators (and gatekeepers to shards) through proxies", len(routed)))
	// Whole only once every member of the killed processes is failed:
	// until then a killed holder still holds its slot.
	for deadline := time.Now().Add(t.cc.recoveryTimeout()); ; {
		st, err := t.leaderStatus(ctx)
		if err == nil && !slices.ContainsFunc(before.GetMembers(), func(old *coordpb.Member) bool {
			return (old.GetRole() == coordpb.Role_GATEKEEPER || old.GetRole() == coordpb.Role_SHARD) && old.GetLive() &&
				slices.ContainsFunc(st.GetMembers(), func(m *coordpb.Member) bool { return m.GetId() == old.GetId() && m.GetLive() })
		}) {
			break
		}
		if time.Now().After(deadline) || !sleep(ctx, clusterPollEvery) {
			return fmt.Errorf("faults: the processes' members before the proxies were not all failed within %v", t.cc.recoveryTimeout())
		}
	}
	return t.waitWhole(ctx, j)
}

// setFlag sets --name value in args (replacing a present value; a boolean
// flag as --name=value).
func setFlag(args []string, name, value string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == name && i+1 < len(out) {
			out[i+1] = value
			return out
		}
		if strings.HasPrefix(a, name+"=") {
			out[i] = name + "=" + value
			return out
		}
	}
	return append(out, name+"="+value)
}

// injectIsolation applies a partition kind for f.Hold, heals it, and
// measures the recovery from the fault's start: every client's next success
// and an active configuration with every slot held (ClientsMs and
// ConfigMs); then it waits until the cluster is whole and records the
// members' lease refusals.
func (t *clusterTarget) injectIsolation(ctx context.Context, f Fault, j *journal) error {
	if t.px == nil {
		return errors.New("faults: partitions need ClusterConfig.Proxied")
	}
	cut, victim, err := t.pickCut(ctx, f.Kind)
	if err != nil {
		return err
	}
	j.note("partition", victim)
	if st, err := t.leaderStatus(ctx); err == nil {
		t.mu.Lock()
		t.needEpoch = st.GetConfig().GetEpoch() // recovered: a new epoch replaced someone
		t.mu.Unlock()
	}
	defer func() {
		t.mu.Lock()
		t.needEpoch = 0
		t.mu.Unlock()
	}()
	mark := t.h.markKill()
	begun := time.Now()
	for _, p := range cut {
		p.Partition(faultproxy.Both)
	}
	undone := make(chan error, 1)
	go func() {
		sleep(ctx, f.Hold)
		for _, p := range cut {
			p.Heal()
		}
		j.note("heal", victim)
		undone <- nil
	}()
	rec := Recovery{Fault: f.Kind, Role: roleOf(f.Kind), Process: victim, Victim: victim, At: mark.at, ClientsMs: -1, ConfigMs: -1}
	undoErr := t.measure(ctx, &rec, mark, begun, 0, false, undone, func() error { return t.revive(j, nil) })
	t.h.mark.Store(nil)
	t.mu.Lock()
	t.recs = append(t.recs, rec)
	t.mu.Unlock()
	j.note("recovered", rec.String())
	if p := t.h.cfg.Progress; p != nil {
		fmt.Fprintf(p, "faults: %5.0fs %s (at %.1fs)\n", time.Since(t.h.start).Seconds(), rec, float64(rec.At)/1e9)
	}
	if undoErr != nil {
		return undoErr
	}
	err = t.waitWhole(ctx, j)
	t.noteRefusals(ctx)
	return err
}

// pickCut chooses the proxies a partition kind cuts and describes them.
func (t *clusterTarget) pickCut(ctx context.Context, kind FaultKind) ([]*faultproxy.Proxy, string, error) {
	st, err := t.leaderStatus(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("faults: choosing a partition: %w", err)
	}
	names := map[uint64]string{}
	for _, m := range st.GetMembers() {
		names[m.GetId()] = m.GetName()
	}
	holders := func(role coordpb.Role) []string {
		var out []string
		for _, s := range st.GetSlots() {
			if s.GetRole() == role && s.GetHolder() != 0 {
				out = append(out, names[s.GetHolder()])
			}
		}
		return out
	}
	gks, shards := holders(coordpb.Role_GATEKEEPER), holders(coordpb.Role_SHARD)
	t.px.mu.Lock()
	defer t.px.mu.Unlock()
	switch kind {
	case FaultIsolateHolders:
		var cut []*faultproxy.Proxy
		for _, n := range append(slices.Clone(gks), shards...) {
			mp, ok := t.px.by[n]
			if !ok {
				return nil, "", fmt.Errorf("faults: slot holder %q has no proxies", n)
			}
			cut = append(cut, mp.coord...)
		}
		return cut, fmt.Sprintf("slot holders %s cut off from the coordinators", strings.Join(append(gks, shards...), ", ")), nil
	case FaultIsolateGatekeeperShard:
		if len(gks) == 0 || len(shards) == 0 {
			return nil, "", errors.New("faults: no gatekeeper or shard slot is held")
		}
		g, s := gks[t.rng.IntN(len(gks))], shards[t.rng.IntN(len(shards))]
		sm := t.byName(s)
		mp, ok := t.px.by[g]
		if sm == nil || !ok || mp.shards[sm.Addr] == nil {
			return nil, "", fmt.Errorf("faults: no proxy from %s to %s", g, s)
		}
		return []*faultproxy.Proxy{mp.shards[sm.Addr]}, fmt.Sprintf("gatekeeper %s cut from shard %s", g, s), nil
	}
	return nil, "", fmt.Errorf("faults: %s is not a partition", kind)
}

// noteRefusals records each process's lease refusals (the lease_refusals
// gauge its heartbeats carry: the process's total across registrations).
func (t *clusterTarget) noteRefusals(ctx context.Context) {
	if t.px == nil {
		return
	}
	st, err := t.leaderStatus(ctx)
	for try := 0; err != nil && try < 5 && sleep(ctx, 200*time.Millisecond); try++ {
		st, err = t.leaderStatus(ctx)
	}
	if err != nil {
		t.h.log.Warn("faults: the lease refusals could not be read", "err", err)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refusals == nil {
		t.refusals = map[string]int64{}
	}
	for _, m := range st.GetMembers() {
		if l, ok := st.GetLoad()[m.GetId()]; ok {
			if v := int64(l.GetValues()["lease_refusals"]); v > t.refusals[m.GetName()] {
				t.refusals[m.GetName()] = v
			}
		}
	}
}

// leaseRefusals returns the refusals recorded, by process.
func (t *clusterTarget) leaseRefusals() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.refusals) == 0 {
		return nil
	}
	out := make(map[string]int64, len(t.refusals))
	for k, v := range t.refusals {
		out[k] = v
	}
	return out
}
