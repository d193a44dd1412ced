package gatekeeper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/txn"
)

// The epoch fence: a meta key in the shared store holding the highest clock
// epoch a gatekeeper or shard has started in. A shard or gatekeeper of a
// new epoch raises it before it reads the store (a shard's rebuild), and
// every commit of a cluster gatekeeper checks it in its serialized commit
// section (next to OrderAfterAccess): a gatekeeper of an older epoch — one
// the coordinator gave up on while it could still reach the store, or one
// whose commit was still on its way when the epoch changed — can then no
// longer commit, so no write of an old epoch lands after a new epoch's
// shards read the store (durable, yet missing from their graph). The store
// serializes commits with their hooks (store.Critical), which makes the
// check and the raise linearizable. The engine and the simulator share it.
var FenceKey = txn.MetaKey("fence")

// ErrFenced is a commit refused because its epoch is below the fence:
// nothing was written.
var ErrFenced = errors.New("gatekeeper: the configuration epoch has ended (fenced)")

// DecodeFence decodes the fence's value (ok false: never raised, 0).
func DecodeFence(v []byte, ok bool) (uint64, error) {
	if !ok {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: epoch fence of %d bytes", txn.ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// CheckFence refuses (ErrFenced) a commit of epoch when the fence is above
// it. Called in the commit hook.
func CheckFence(c store.Critical, epoch uint64) error {
	v, ok, err := c.Get(FenceKey)
	if err != nil {
		return err
	}
	f, err := DecodeFence(v, ok)
	if err != nil {
		return err
	}
	if f > epoch {
		return fmt.Errorf("%w (epoch %d, fence %d)", ErrFenced, epoch, f)
	}
	return nil
}

// RaiseFence raises the store's epoch fence to epoch (never lowers it). Once
// it returns, no commit of an older epoch can succeed, and every one that
// did is visible to a transaction begun after.
func RaiseFence(ctx context.Context, st store.Store, epoch uint64) error {
	return CommitRetrying(ctx, st, fmt.Sprintf("raising the epoch fence to %d", epoch), func(c store.Critical) error {
		v, ok, err := c.Get(FenceKey)
		if err != nil {
			return err
		}
		f, err := DecodeFence(v, ok)
		if err != nil || f >= epoch {
			return err
		}
		return c.Set(FenceKey, binary.BigEndian.AppendUint64(nil, epoch))
	})
}

// CommitRetrying commits a store transaction whose only work is hook, in
// the commit section, retrying it (20 attempts, growing pauses) while the
// store answers a retryable error or a conflict; what names it in errors.
func CommitRetrying(ctx context.Context, st store.Store, what string, hook func(c store.Critical) error) error {
	var last error
	for attempt := range 20 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
			}
		}
		t, err := st.Begin()
		if err != nil {
			return err
		}
		err = t.Commit(ctx, hook)
		t.Discard()
		if err == nil {
			return nil
		}
		if !store.IsRetryable(err) && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("gatekeeper: %s: %w", what, err)
		}
		last = err
	}
	return fmt.Errorf("gatekeeper: %s: %w", what, last)
}
