package coord_test

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-db/weft/internal/coord"
	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// A shard process joins the cluster: it registers (taking a vacant slot or
// waiting as a backup), heartbeats, and moves to each new epoch before
// acknowledging it. When fenced it must stop serving at once: a backup has
// (or will have) its slot.
func ExampleRunMember() {
	c, err := coordclient.NewClient([]string{"10.0.0.1:7600", "10.0.0.2:7600", "10.0.0.3:7600"})
	if err != nil {
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = coord.RunMember(ctx, c, coord.MemberConfig{
		Name: "shard-host7", Role: pb.Role_SHARD, Address: "10.0.0.7:7700",
		OnConfig: func(ctx context.Context, cfg *pb.Config, self *pb.Member) error {
			if self.Slot < 0 {
				return nil // a backup: wait to be promoted
			}
			// Serve partition self.Slot: (re)load it from the store if it is
			// new to this process, stamp nothing of cfg.Epoch until
			// cfg.ActiveEpoch reaches it. Returning acknowledges cfg.Epoch.
			return nil
		},
	}, slog.Default())
	if errors.Is(err, coordclient.ErrFenced) {
		// Stop serving; exit so a supervisor restarts the process as a new member.
		return
	}
}
