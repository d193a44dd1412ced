package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/wire/coordclient"
	"github.com/weft-db/weft/internal/wire/coordpb"
	"github.com/weft-db/weft/internal/wire/kronospb"
)

// waitDgraph waits until n of the gatekeepers (the slot holders; backups
// serve Dgraph only once promoted) log that their Dgraph face serves.
func waitDgraph(gks []*Proc, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready := 0
		for _, p := range gks {
			if b, err := os.ReadFile(p.Log); err == nil && strings.Contains(string(b), dgraphReady) {
				ready++
			}
		}
		if ready >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d gatekeepers serve Dgraph's API after %v (see their logs in %s)", ready, n, timeout, filepath.Dir(gks[0].Log))
		}
		time.Sleep(pollEvery)
	}
}

// waitLeaders waits until the coordinator and Kronos groups have leaders.
func waitLeaders(ctx context.Context, st *State, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cs, _ := CoordStatus(ctx, st)
		ks := KronosStatus(ctx, st)
		if (cs != nil || len(st.Of("coord")) == 0) && (len(ks) == 0 || KronosLeader(ks) != 0) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the coordinator or Kronos group elected no leader within %v", timeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitActive waits until the coordinator's configuration, of epoch at least
// minEpoch, is active with every slot held, and every gatekeeper in it
// answers a status call (which reaches every shard; a gatekeeper that left
// the old epoch answers only once it serves the new one).
func waitActive(ctx context.Context, st *State, minEpoch uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	why := "no answer"
	for {
		err := clusterServes(ctx, st, minEpoch)
		if err == nil {
			return nil
		}
		why = err.Error()
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster did not serve within %v: %s", timeout, why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func clusterServes(ctx context.Context, st *State, minEpoch uint64) error {
	cs, err := CoordStatus(ctx, st)
	if err != nil {
		return err
	}
	conf := cs.GetConfig()
	if conf.GetEpoch() < minEpoch {
		return fmt.Errorf("epoch %d not posted yet (the coordinator shows %d)", minEpoch, conf.GetEpoch())
	}
	if conf.GetActiveEpoch() != conf.GetEpoch() {
		return fmt.Errorf("epoch %d not active yet (active %d)", conf.GetEpoch(), conf.GetActiveEpoch())
	}
	for _, e := range append(append([]*coordpb.Endpoint{}, conf.GetGatekeepers()...), conf.GetShards()...) {
		if e.GetMember() == 0 {
			return fmt.Errorf("slot %d vacant", e.GetSlot())
		}
	}
	for _, e := range conf.GetGatekeepers() {
		c, err := weft.Dial(e.GetApiAddress(), weft.Options{CallTimeout: time.Second})
		if err != nil {
			return err
		}
		_, err = c.Status(ctx)
		c.Close()
		if err != nil {
			return fmt.Errorf("gatekeeper %d at %s: %w", e.GetSlot(), e.GetApiAddress(), err)
		}
	}
	return nil
}

// CoordStatus is the serving coordinator leader's status, asked of the
// state's coordinator replicas.
func CoordStatus(ctx context.Context, st *State) (*coordpb.StatusResponse, error) {
	addrs := st.Addrs("coord")
	if len(addrs) == 0 {
		return nil, errors.New("no coordinator replicas")
	}
	c, err := coordclient.NewClient(addrs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.AttemptTimeout = 500 * time.Millisecond
	s, err := c.LeaderStatus(ctx)
	if err != nil || !s.IsLeader {
		return nil, fmt.Errorf("no serving coordinator leader (%v)", err)
	}
	return s, nil
}

// KronosStatus asks every Kronos replica of st for its stats, by process
// name (those that do not answer are missing).
func KronosStatus(ctx context.Context, st *State) map[string]*kronospb.StatsResponse {
	out := map[string]*kronospb.StatsResponse{}
	for _, p := range st.Of("kronos") {
		conn, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		s, err := kronospb.NewKronosClient(conn).Stats(cctx, &kronospb.StatsRequest{})
		cancel()
		conn.Close()
		if err == nil {
			out[p.Name] = s
		}
	}
	return out
}

// KronosLeader is the id of the replica that says it leads (0: none).
func KronosLeader(ks map[string]*kronospb.StatsResponse) uint64 {
	for _, s := range ks {
		if s.IsLeader {
			return s.NodeId
		}
	}
	return 0
}
