package roles

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/engine"
)

// Leases and unreachable peers on a member process (docs/cluster.md,
// "Leases" and "Availability"). RunMember renews the member's
// coord.LeaseState; the gatekeeper engine asks it (GatekeeperConfig.Lease)
// and the shard front asks it before every call it forwards (forward.go).

// DefaultUnreachableAfter is how long a peer must have failed a member, while
// the member held its lease, before the member reports it unreachable.
const DefaultUnreachableAfter = 500 * time.Millisecond

// leaseConfig is what runMember needs for leases.
type leaseConfig struct {
	unreachableAfter time.Duration
	plantIgnore      bool
	// refusals sums the refusals of the process's earlier registrations.
	refusals *atomic.Uint64
}

func (c *Config) leaseConfig() leaseConfig {
	after := c.UnreachableAfter
	if after <= 0 {
		after = DefaultUnreachableAfter
	}
	return leaseConfig{unreachableAfter: after, plantIgnore: c.PlantIgnoreLease, refusals: new(atomic.Uint64)}
}

// reporter turns the engine's stalls into the heartbeat's report: a peer is
// unreachable once it has failed the member for unreachableAfter while the
// member's own lease held all along (while the lease lapses — a coordinator
// failover — the member's peers may be holding their own calls, which is no
// fault of theirs).
type reporter struct {
	lease  *coord.LeaseState
	after  time.Duration
	stalls func() map[uint64]time.Time
	log    *slog.Logger

	validSince time.Time // zero: the lease does not hold
	reported   []uint64
}

// unreachable is coord.MemberConfig.Unreachable (called by the heartbeat
// loop only).
func (r *reporter) unreachable() []uint64 {
	now := time.Now()
	if !r.lease.MayServe() {
		r.validSince = time.Time{}
		return nil
	}
	if r.validSince.IsZero() {
		r.validSince = now
	}
	var out []uint64
	for id, since := range r.stalls() {
		if since.IsZero() {
			continue
		}
		if since.Before(r.validSince) {
			since = r.validSince
		}
		if now.Sub(since) >= r.after {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	if !slices.Equal(out, r.reported) {
		if len(out) > 0 {
			r.log.Warn("reporting peers unreachable to the coordinator", "members", out, "after", r.after)
		}
		r.reported = out
	}
	return out
}

// leaseErr adapts the lease for the engines: nil while it holds.
func leaseErr(l *coord.LeaseState) func() error { return l.Check }

// leasedGatekeeper is the gatekeeper engine as the Weft API's Switch serves
// it: every method is the engine's (which checks the lease itself), and the
// batched read — whose code checks the lease only as it starts — is checked
// again before it answers.
type leasedGatekeeper struct {
	*engine.ClusterGatekeeper
	lease *coord.LeaseState
}

// GetVertices implements engine.BatchReader.
func (g leasedGatekeeper) GetVertices(ctx context.Context, snap engine.Snapshot, refs []engine.VertexRef,
	opts engine.ReadOptions) ([]*engine.Vertex, int, error) {
	vs, n, err := g.ClusterGatekeeper.GetVertices(ctx, snap, refs, opts)
	if err != nil {
		return nil, n, err
	}
	if err := g.lease.Check(); err != nil {
		return nil, n, fmt.Errorf("%w: %v", engine.ErrOverloaded, err)
	}
	return vs, n, nil
}
