package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/gatekeeper"
	"github.com/weft-db/weft/internal/store"
)

// ErrFenced is a commit refused because its gatekeeper's configuration
// epoch has ended (gatekeeper.CheckFence); it wraps ErrOverloaded: nothing
// was written and the client retries (through a gatekeeper of the new
// epoch).
var ErrFenced = fmt.Errorf("%w: the gatekeeper's configuration epoch has ended (fenced)", ErrOverloaded)

// checkFence is gatekeeper.CheckFence with the engine's error.
func checkFence(c store.Critical, epoch uint64) error {
	err := gatekeeper.CheckFence(c, epoch)
	if errors.Is(err, gatekeeper.ErrFenced) {
		return fmt.Errorf("%w: %v", ErrFenced, err)
	}
	return err
}

// RaiseFence raises the store's epoch fence (gatekeeper.RaiseFence).
func RaiseFence(ctx context.Context, st store.Store, epoch uint64) error {
	return gatekeeper.RaiseFence(ctx, st, epoch)
}
