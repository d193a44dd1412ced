package api

import (
	"context"

	"github.com/weft-db/weft/internal/api/console"
	"github.com/weft-db/weft/internal/engine"
)

// processView is the console's cluster view of a server that answers for
// itself (`weft serve`): its gatekeepers and shards as the slots of its
// one epoch, and the process itself as the one member, its metrics read
// from its own registry.
func processView(db engine.API) console.ClusterSource {
	return func(ctx context.Context) (*console.ClusterView, error) {
		st, err := db.Status(ctx)
		if err != nil {
			return nil, err
		}
		return processViewOf(st), nil
	}
}

// processViewOf builds the view from one Status. Pure.
func processViewOf(st *engine.Status) *console.ClusterView {
	const self = 1 // the one member's id in this view
	v := &console.ClusterView{Mode: "process", Epoch: st.Epoch, ActiveEpoch: st.Epoch,
		Members: []console.Member{{ID: self, Name: "this server", Role: "server", State: "serving", Slot: -1,
			Live: true, HeartbeatAgeMs: -1, Self: true,
			Load: map[string]float64{"vertices": float64(st.Vertices), "edges": float64(st.Edges)}}}}
	ep := console.Epoch{Epoch: st.Epoch, ActiveEpoch: st.Epoch}
	for i := 0; i < st.Gatekeepers; i++ {
		v.Slots = append(v.Slots, console.Slot{Role: "gatekeeper", Index: int32(i), Holder: self, SinceEpoch: st.Epoch})
		ep.Gatekeepers = append(ep.Gatekeepers, self)
	}
	for i := 0; i < st.Shards; i++ {
		v.Slots = append(v.Slots, console.Slot{Role: "shard", Index: int32(i), Holder: self, SinceEpoch: st.Epoch})
		ep.Shards = append(ep.Shards, self)
	}
	v.Epochs = []console.Epoch{ep}
	return v
}
