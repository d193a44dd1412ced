package gatekeeper

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// OrderAfterAccess runs inside the store's serialized commit section of
// transaction ts: it orders ts after the last access of every vertex and
// alias it touched (keys access, holding encoded stamps), through Kronos
// when vector clocks cannot, and records ts as their last access. An order
// Kronos already holds the other way aborts the transaction (retryable).
// The engine and the simulator share it.
func OrderAfterAccess(ctx context.Context, o order.Oracle, c store.Critical, ts vclock.Stamp, access [][]byte) error {
	return orderAfter(ctx, o, c, ts, access, nil)
}

// orderAfter orders ts after the stamps in the access records and after
// extra, then records ts in the access records.
func orderAfter(ctx context.Context, o order.Oracle, c store.Critical, ts vclock.Stamp, access [][]byte, extra []vclock.Stamp) error {
	prevs := make([]vclock.Stamp, 0, len(access)+len(extra))
	prevs = append(prevs, extra...)
	for _, k := range access {
		b, ok, err := c.Get(k)
		if err != nil {
			return err
		}
		if ok {
			p, err := txn.DecodeStamp(b)
			if err != nil {
				return err
			}
			prevs = append(prevs, p)
		}
	}
	if err := order.Must(ctx, o, prevs, ts); err != nil {
		if errors.Is(err, order.ErrStale) {
			return fmt.Errorf("%w: %v", txn.ErrAborted, err)
		}
		return err
	}
	enc := txn.EncodeStamp(ts)
	for _, k := range access {
		if err := c.Set(k, enc); err != nil {
			return err
		}
	}
	return nil
}
