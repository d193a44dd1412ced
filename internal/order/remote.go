package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	kc "github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/vclock"
)

// Remote is an Oracle served by a Kronos replica group over the network
// (weft kronos), for roles in separate processes: every gatekeeper and shard
// of a cluster asks the same Kronos, which is what keeps their orders
// consistent. The client batches, fails over between replicas and retries
// mutations exactly once (client/kronos).
type Remote struct {
	C *kc.Client
	// Patience is how long Assign keeps retrying while no replica answers
	// as leader (an election after the leader's loss) [15s]. A shard that
	// cannot order stops; an election must not stop it.
	Patience time.Duration
}

// Assign implements Oracle. Assignments are idempotent (an order already
// held is answered as held), so retrying one whose answer was lost is safe.
func (r Remote) Assign(ctx context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error) {
	patience := r.Patience
	if patience <= 0 {
		patience = 15 * time.Second
	}
	deadline := time.Now().Add(patience)
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		res, err := r.assign(ctx, as)
		if err == nil || !errors.Is(err, kc.ErrUnavailable) || time.Now().Add(pause).After(deadline) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
	}
}

func (r Remote) assign(ctx context.Context, as []kronos.Assignment) ([]kronos.AssignResult, error) {
	req := make([]kc.Assignment, len(as))
	for i, a := range as {
		ord, err := toClientOrder(a.Order)
		if err != nil {
			return nil, err
		}
		req[i] = kc.Assignment{A: toClientRef(a.A), Order: ord, B: toClientRef(a.B), Strength: kc.Strength(a.Strength)}
	}
	res, err := r.C.AssignOrder(ctx, req)
	if err != nil {
		// A contradicted must pair is the in-process Kronos's error, so
		// callers (order.Must: ErrStale) tell it from a failure.
		var ce *kc.Error
		if errors.As(err, &ce) && ce.Code == kc.CodeMustConflict {
			if o, oerr := fromClientOrder(ce.Actual); oerr == nil {
				return nil, &kronos.ConflictError{Index: ce.PairIndex, Actual: o}
			}
		}
		return nil, err
	}
	if len(res) != len(as) {
		return nil, fmt.Errorf("order: kronos answered %d of %d assignments", len(res), len(as))
	}
	out := make([]kronos.AssignResult, len(res))
	for i, x := range res {
		o, err := fromClientOrder(x.Order)
		if err != nil {
			return nil, err
		}
		out[i] = kronos.AssignResult{Order: o, Reversed: x.Reversed}
	}
	return out, nil
}

// Cleanup implements Oracle.
func (r Remote) Cleanup(ctx context.Context, gk uint32, c vclock.Clock) error {
	_, _, err := r.C.Cleanup(ctx, gk, kc.Clock{Epoch: c.Epoch, Owner: gk, Counters: c.Counters})
	return err
}

func toClientRef(r kronos.Ref) kc.Ref {
	if r.Clock == nil {
		return kc.Ref{ID: uint64(r.ID)}
	}
	return kc.Ref{Clock: &kc.Clock{Epoch: r.Clock.Epoch, Owner: r.Clock.Owner, Counters: r.Clock.Counters}}
}

func toClientOrder(o kronos.Order) (kc.Order, error) {
	switch o {
	case kronos.Before:
		return kc.Before, nil
	case kronos.After:
		return kc.After, nil
	}
	return 0, fmt.Errorf("order: assignment with order %v", o)
}

func fromClientOrder(o kc.Order) (kronos.Order, error) {
	switch o {
	case kc.Concurrent:
		return kronos.Concurrent, nil
	case kc.Before:
		return kronos.Before, nil
	case kc.After:
		return kronos.After, nil
	case kc.Unknown:
		return kronos.Unknown, nil
	}
	return 0, fmt.Errorf("order: kronos answered order %d", o)
}
