package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// Placement: where placement units live and moving them online
// (docs/online-moves.md). GET /v1/placement describes the directory and
// the rebalance plan (txn.PlanRebalance); POST /v1/move moves one unit.

type unitHomeJSON struct {
	Unit  string   `json:"unit"`
	Shard uint32   `json:"shard"`
	From  uint32   `json:"from"`
	Held  []uint32 `json:"held"`
}

type slotMoveJSON struct {
	Unit string `json:"unit"`
	From uint32 `json:"from"`
	To   uint32 `json:"to"`
}

type placementResponse struct {
	Base   uint32 `json:"base"`
	Shards uint32 `json:"shards"`
	// Slots counts, per shard, the slot units it serves.
	Slots []int `json:"slots"`
	// Moved lists the units that live off their base shard, sorted.
	Moved []unitHomeJSON `json:"moved"`
	// Rebalance is the plan that evens out the slots per shard.
	Rebalance []slotMoveJSON `json:"rebalance"`
}

type moveRequest struct {
	Unit  string `json:"unit"`
	Shard *int   `json:"shard"`
}

type moveResponse struct {
	Unit string `json:"unit"`
	From uint32 `json:"from"`
	To   uint32 `json:"to"`
}

// mover returns the engine's Mover and the store's directory now.
func (h *httpAPI) mover(ctx context.Context) (engine.Mover, *txn.Directory, error) {
	m, ok := h.svc.db.(engine.Mover)
	if !ok {
		return nil, nil, fmt.Errorf("%w: this server's engine does not move placement units", engine.ErrBadRequest)
	}
	d, err := m.CurrentDirectory(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m, d, nil
}

func (h *httpAPI) placement(_ http.ResponseWriter, r *http.Request) (any, error) {
	_, d, err := h.mover(r.Context())
	if err != nil {
		return nil, err
	}
	return placementOf(d), nil
}

// placementOf describes d. Pure.
func placementOf(d *txn.Directory) placementResponse {
	out := placementResponse{Base: d.Base(), Shards: d.Shards(), Slots: make([]int, d.Shards()),
		Moved: []unitHomeJSON{}, Rebalance: []slotMoveJSON{}}
	for k := range txn.SlotsPerShard * d.Base() {
		out.Slots[d.HomeOf(txn.Unit{Slot: k}).Shard]++
	}
	for u, h := range d.Units() {
		out.Moved = append(out.Moved, unitHomeJSON{Unit: u.String(), Shard: h.Shard, From: h.From, Held: slices.Clone(h.Held)})
	}
	slices.SortFunc(out.Moved, func(a, b unitHomeJSON) int {
		if a.Unit < b.Unit {
			return -1
		}
		if a.Unit > b.Unit {
			return 1
		}
		return 0
	})
	for _, m := range txn.PlanRebalance(d) {
		out.Rebalance = append(out.Rebalance, slotMoveJSON{Unit: m.Unit.String(), From: m.From, To: m.To})
	}
	return out
}

func (h *httpAPI) move(w http.ResponseWriter, r *http.Request) (any, error) {
	var req moveRequest
	if err := decodeBody(w, r, h.bodyMax, &req, false); err != nil {
		return nil, err
	}
	m, d, err := h.mover(r.Context())
	if err != nil {
		return nil, err
	}
	if req.Shard == nil {
		return nil, invalid(`"shard" is required`)
	}
	u, err := txn.ParseUnit(req.Unit, d.Base())
	if err != nil {
		return nil, invalid(err.Error())
	}
	if *req.Shard < 0 || *req.Shard >= int(d.Shards()) {
		return nil, invalid(fmt.Sprintf("shard %d of %d", *req.Shard, d.Shards()))
	}
	from := d.HomeOf(u).Shard
	if err := m.MoveUnit(r.Context(), u, *req.Shard); err != nil {
		return nil, err
	}
	return moveResponse{Unit: u.String(), From: from, To: uint32(*req.Shard)}, nil
}
