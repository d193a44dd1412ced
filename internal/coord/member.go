package coord

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// MemberConfig configures RunMember.
type MemberConfig struct {
	// Name labels the process (e.g. "shard-2"). Required.
	Name string
	// Role is what the process serves. Required.
	Role pb.Role
	// Address and HTTPAddress are where it serves (shown to clients);
	// APIAddress is a gatekeeper's client-facing Weft gRPC API.
	Address, HTTPAddress, APIAddress string
	// Load, if set, is called before each heartbeat; its gauges go with
	// it and show in the coordinator's status (at most 32).
	Load func() map[string]float64
	// Interval between heartbeats. Must be well below the coordinator's
	// SuspectAfter. Default 100ms.
	Interval time.Duration
	// OnConfig is called with each new configuration and this member's
	// record (its slot shows a promotion): whenever the epoch, the active
	// epoch (the barrier) or the member's slot changes. When it returns nil
	// the member has moved to the configuration's epoch, which the next
	// heartbeat acknowledges. An error stops RunMember. Optional.
	OnConfig func(ctx context.Context, cfg *pb.Config, self *pb.Member) error
	// Lease, if set, is renewed with every lease the coordinator grants
	// (counted from the instant, on the lease's clock, the heartbeat was
	// sent) and fenced when the coordinator fences the member; the
	// member's engines ask it before they serve (docs/cluster.md,
	// "Leases"). Optional (a member that serves nothing needs none).
	Lease *LeaseState
	// Unreachable, if set, is called before each heartbeat: the member ids
	// of the peers this member needs and has not reached for longer than
	// its bound; they go with the heartbeat (at most 64). Optional.
	Unreachable func() []uint64
}

// RunMember registers a process with the coordinator, then heartbeats every
// Interval until ctx ends (returning nil) or the coordinator fences the
// member (returning coordclient.ErrFenced): a fenced process must stop serving. A failed
// heartbeat is not an error: the member goes on trying, and its Lease, not
// renewed, lapses on its own — a member cut off from the coordinators stops
// serving by itself, before the coordinator gives its slot away.
func RunMember(ctx context.Context, c *coordclient.Client, cfg MemberConfig, log *slog.Logger) error {
	if cfg.Name == "" || cfg.Role == pb.Role_ROLE_UNSPECIFIED {
		return errors.New("coord: a member needs a name and a role")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if log == nil {
		log = slog.Default()
	}
	var tb [8]byte
	if _, err := rand.Read(tb[:]); err != nil {
		return err
	}
	token := binary.LittleEndian.Uint64(tb[:]) | 1
	reg, err := c.Register(ctx, &pb.RegisterRequest{Name: cfg.Name, Role: cfg.Role, Address: cfg.Address,
		HttpAddress: cfg.HTTPAddress, ApiAddress: cfg.APIAddress, Token: token})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("coord: register %s: %w", cfg.Name, err)
	}
	self := reg.Member
	log = log.With("member", self.Id, "name", cfg.Name)
	log.Info("registered with the coordinator", "slot", self.Slot, "epoch", reg.Config.Epoch)
	adopted, active := uint64(0), uint64(0)
	adopt := func(conf *pb.Config, me *pb.Member) error {
		if conf.GetEpoch() <= adopted && conf.GetActiveEpoch() <= active && me.GetSlot() == self.GetSlot() {
			return nil
		}
		if me.GetSlot() != self.GetSlot() {
			log.Info("slot changed", "from", self.GetSlot(), "to", me.GetSlot(), "epoch", conf.GetEpoch())
		}
		if cfg.OnConfig != nil {
			if err := cfg.OnConfig(ctx, conf, me); err != nil {
				return err
			}
		}
		self, adopted, active = me, max(adopted, conf.GetEpoch()), max(active, conf.GetActiveEpoch())
		return nil
	}
	if err := adopt(reg.Config, reg.Member); err != nil {
		return err
	}
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, cfg.Interval*5)
		req := &pb.HeartbeatRequest{Member: self.Id, AckedEpoch: adopted}
		if cfg.Load != nil {
			req.Load = cfg.Load()
		}
		if cfg.Unreachable != nil {
			req.Unreachable = cfg.Unreachable()
		}
		var sent time.Duration
		if cfg.Lease != nil {
			sent = cfg.Lease.Now() // before sending: the delay only shortens the lease
		}
		resp, err := c.Heartbeat(hctx, req)
		cancel()
		switch {
		case errors.Is(err, coordclient.ErrFenced):
			if cfg.Lease != nil {
				cfg.Lease.Fence()
			}
			log.Warn("fenced by the coordinator: stopping", "err", err)
			return err
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			// The lease is not renewed: past its expiry the engines
			// refuse to serve until a heartbeat gets through.
			log.Debug("heartbeat failed", "err", err)
			continue
		}
		if cfg.Lease != nil {
			if resp.GetLeaseNs() > 0 {
				cfg.Lease.Granted(sent, time.Duration(resp.GetLeaseNs()))
			} else {
				log.Debug("heartbeat answered without a lease (the coordinator is replacing this member)")
			}
		}
		if err := adopt(resp.Config, resp.Member); err != nil {
			return err
		}
	}
}
