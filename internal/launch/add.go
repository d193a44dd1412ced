package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/wire/coordclient"
	"github.com/weft-db/weft/internal/wire/coordpb"
)

// Add grows the running cluster in dir by one process of role ("shard" or
// "gatekeeper"): it starts the process with the flags of its role's others
// (recording it in the state file), waits until it registers with the
// coordinator as a backup, then adds a slot for it, and waits until the
// new configuration epoch is active and serves. It returns the process
// added. A new shard starts empty: moving its share of the placement to it
// is the caller's (weft rebalance, through RebalanceVia).
func Add(ctx context.Context, out io.Writer, dir, role string, readyTimeout time.Duration) (*Proc, error) {
	r := roleNamed(role)
	if r == nil || (role != "shard" && role != "gatekeeper") {
		return nil, fmt.Errorf("cluster add: role %q: want shard or gatekeeper", role)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	unlock, err := LockDir(abs)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := Load(abs)
	if err != nil {
		return nil, fmt.Errorf("no cluster in %s: %w", dir, err)
	}
	if st.Stopped || st.Epoch == 0 {
		return nil, fmt.Errorf("the cluster in %s is stopped (or was started by an older weft): `weft cluster up` first", dir)
	}
	c := &Config{Dir: dir, Binary: st.Binary, Dgraph: st.Dgraph, DgraphPlacement: st.DgraphPlacement,
		LogFormat: st.LogFormat, epoch: st.Epoch}
	p, err := planOne(abs, r, c, st)
	if err != nil {
		return nil, err
	}
	if err := Start(st.Binary, p); err != nil {
		return nil, err
	}
	st.Procs = append(st.Procs, p)
	if err := st.Save(abs); err != nil {
		return nil, err
	}
	if err := WaitLog(p, servingLine, readyTimeout); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	epoch, slots, err := addSlot(ctx, st, p, role)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := waitActive(ctx, st, epoch, readyTimeout); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s added (pid %d, %s): %d %s slots in epoch %d; serving again after %v\n", p.Name, p.Pid, p.Addr,
		slots, role, epoch, time.Since(t0).Round(time.Millisecond))
	return p, nil
}

// planOne plans the next process of r: fresh addresses, the next name and
// index, and the command line of r's others (c's flags).
func planOne(dir string, r *role, c *Config, st *State) (*Proc, error) {
	existing := st.Of(r.name)
	n := len(existing)
	used := st.used()
	group, err := planGroup(dir, r, n+1, nil, used)
	if err != nil {
		return nil, err
	}
	p := group[n]
	if c.Dgraph && r.name == "gatekeeper" {
		if err := planDgraph(group[n:], nil, used); err != nil {
			return nil, err
		}
	}
	p.Index = n
	if st.Proc(p.Name) != nil { // planGroup gave the new one fresh addresses; keep the names unique
		return nil, fmt.Errorf("cluster add: %s exists", p.Name)
	}
	group = append(existing, p)
	p.Args = r.argsOf(c, n, group, st)
	return p, nil
}

// addSlot waits until p is a live member of the coordinator, then asks
// for one more slot of role; it returns the epoch of the configuration
// that adds it and the role's slots in it.
func addSlot(ctx context.Context, st *State, p *Proc, role string) (epoch uint64, slots int32, err error) {
	c, err := coordclient.NewClient(st.Addrs("coord"))
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	rr, _ := coord.ParseRole(role)
	for {
		cs, err := c.LeaderStatus(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("cluster add: the coordinator: %w", err)
		}
		registered := false
		for _, m := range cs.GetMembers() {
			registered = registered || (m.GetName() == p.Name && m.GetLive())
		}
		if registered {
			for _, s := range cs.GetSlots() {
				if s.GetRole() == rr {
					slots++
				}
			}
			break
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("cluster add: %s did not register with the coordinator: %w", p.Name, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
	resp, err := c.AddSlot(ctx, &coordpb.AddSlotRequest{Role: rr, Count: slots + 1})
	if err != nil {
		return 0, 0, fmt.Errorf("cluster add: adding the slot: %w", err)
	}
	return resp.GetConfig().GetEpoch(), slots + 1, nil
}

// RebalanceVia is the HTTP API address of a gatekeeper of the cluster in
// dir to move placement slots through.
func RebalanceVia(dir string) (string, error) {
	st, err := Load(dir)
	if err != nil {
		return "", err
	}
	for _, q := range st.Of("gatekeeper") {
		if q.HTTPAddr != "" {
			return q.HTTPAddr, nil
		}
	}
	return "", errors.New("cluster add: no gatekeeper with an HTTP API to rebalance through (weft rebalance --http-addr ADDR)")
}
