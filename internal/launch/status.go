package launch

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/internal/wire/coordpb"
	"github.com/weft-db/weft/internal/wire/kronospb"
)

// Status is what `weft cluster status` shows of a cluster.
type Status struct {
	State *State
	// Alive is, by process name, whether it runs (Proc.Alive).
	Alive map[string]bool
	// Kronos are the Kronos replicas' stats, by process name (those that
	// answered).
	Kronos map[string]*kronospb.StatsResponse
	// Coord is the coordinator leader's status; CoordErr says why there is
	// none (both nil: the cluster has no coordinator).
	Coord    *coordpb.StatusResponse
	CoordErr error
	// StatusPage is the coordinator leader's status page URL ("": none).
	StatusPage string
}

// ReadStatus reads the state file in dir and asks the processes.
func ReadStatus(ctx context.Context, dir string) (*Status, error) {
	st, err := Load(dir)
	if err != nil {
		return nil, fmt.Errorf("no cluster in %s: %w", dir, err)
	}
	s := &Status{State: st, Alive: map[string]bool{}, Kronos: KronosStatus(ctx, st)}
	for _, p := range st.Procs {
		s.Alive[p.Name] = p.Alive()
	}
	if len(st.Of("coord")) == 0 {
		return s, nil
	}
	if s.Coord, s.CoordErr = CoordStatus(ctx, st); s.CoordErr != nil {
		return s, nil
	}
	for _, p := range st.Of("coord") {
		if p.Index == int(s.Coord.NodeId)-1 {
			s.StatusPage = fmt.Sprintf("http://%s/status", p.HTTPAddr)
		}
	}
	return s, nil
}
