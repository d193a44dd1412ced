package apps

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// SyntheticVars returns one variable per server: a key whose first replica
// on ring is that server ("p<i>-<k>" for the least such k), so variable i
// is watched on server i.
func SyntheticVars(ring *kvcore.Ring) []string {
	vars := make([]string, ring.Servers())
	for i := range vars {
		for k := 0; ; k++ {
			key := fmt.Sprintf("p%d-%d", i, k)
			if ring.Replicas(nil, key, 1)[0] == i {
				vars[i] = key
				break
			}
		}
	}
	return vars
}

// SyntheticSpec is the synthetic workload's ¬P: the conjunction over every
// server i of vars[i] = 1 on server i (one conjunctive predicate).
func SyntheticSpec(ring *kvcore.Ring) *monitor.Spec {
	p := monitor.Predicate{Name: "all-true", Type: monitor.Conjunctive, Clauses: []monitor.Clause{{}}}
	for i, key := range SyntheticVars(ring) {
		p.Clauses[0].Literals = append(p.Clauses[0].Literals, monitor.Literal{Server: i, Key: key, Op: monitor.Eq, Value: "1"})
	}
	return &monitor.Spec{Servers: ring.Servers(), Predicates: []monitor.Predicate{p}}
}

// SyntheticConfig configures one client of the synthetic workload.
type SyntheticConfig struct {
	// Vars are the monitored variables (SyntheticVars); Var is the one
	// this client writes (−1: none). Only one client should write each.
	Vars []string
	Var  int
	// Beta is the probability that a write of the variable makes it true.
	Beta float64
	// PutFraction is the share of operations that are PUTs (0..1).
	PutFraction float64
	// VarFraction is the share of this client's PUTs that write its
	// variable (the rest write ordinary keys). Default 0.5.
	VarFraction float64
	// Keys is the number of ordinary keys per client. Default 1000.
	Keys int
	// Client names this client's ordinary keys ("k<client>-<n>").
	Client int
	// Ops is how many operations to run (0: until ctx ends).
	Ops  int
	Rand *rand.Rand
}

// SyntheticStats counts one client's operations.
type SyntheticStats struct {
	Gets    uint64 `json:"gets"`
	Puts    uint64 `json:"puts"`
	VarTrue uint64 `json:"var_true"` // writes that made the variable true
	Errors  uint64 `json:"errors"`   // failed requests (e.g. PAUSED during a rollback), not retried
}

// RunSynthetic runs the mix: each operation is a PUT with probability
// PutFraction (to the client's variable, true with probability Beta, or to
// an ordinary key), else a GET of a random ordinary key of this client.
// Failed operations are counted, not retried.
func RunSynthetic(ctx context.Context, c *kvclient.Client, cfg SyntheticConfig) (SyntheticStats, error) {
	var st SyntheticStats
	if cfg.Rand == nil {
		return st, fmt.Errorf("apps: SyntheticConfig.Rand is required")
	}
	if cfg.Keys <= 0 {
		cfg.Keys = 1000
	}
	if cfg.VarFraction <= 0 {
		cfg.VarFraction = 0.5
	}
	last := map[string]kvclient.Version{}
	for n := 0; cfg.Ops == 0 || n < cfg.Ops; n++ {
		if ctx.Err() != nil {
			break
		}
		rng := cfg.Rand
		if rng.Float64() >= cfg.PutFraction {
			key := "k" + strconv.Itoa(cfg.Client) + "-" + strconv.Itoa(rng.IntN(cfg.Keys))
			if _, err := c.Get(ctx, key); err != nil {
				if ctx.Err() != nil {
					break // the run ended mid-request
				}
				st.Errors++
			} else {
				st.Gets++
			}
			continue
		}
		key, val := "k"+strconv.Itoa(cfg.Client)+"-"+strconv.Itoa(rng.IntN(cfg.Keys)), "v"+strconv.Itoa(n)
		if cfg.Var >= 0 && cfg.Var < len(cfg.Vars) && rng.Float64() < cfg.VarFraction {
			key, val = cfg.Vars[cfg.Var], "0"
			if rng.Float64() < cfg.Beta {
				val = "1"
				st.VarTrue++
			}
		}
		var ver kvclient.Version
		var err error
		if v, ok := last[key]; ok {
			ver, err = c.Put(ctx, key, []byte(val), []kvclient.Version{v})
		} else {
			// First write of the key by this session: supersede whatever
			// earlier sessions left (a blind write would add a sibling per
			// session until the key refuses writes).
			ver, err = c.Write(ctx, key, []byte(val))
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			st.Errors++
			continue
		}
		last[key] = ver
		st.Puts++
	}
	return st, nil
}
