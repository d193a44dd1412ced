package coordclient_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weft-db/weft/internal/wire/coordclient"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// A tool reads the cluster's configuration from a three-replica coordinator
// group, then follows its changes. The client finds the leader itself; a
// call fails only once its context ends or its attempts run out.
func ExampleNewClient() {
	c, err := coordclient.NewClient([]string{"10.0.0.1:7600", "10.0.0.2:7600", "10.0.0.3:7600"})
	if err != nil {
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := c.Config(ctx)
	var e *coordclient.Error
	switch {
	case errors.As(err, &e):
		fmt.Println("the coordinator refused:", e.Code, e.Message)
		return
	case err != nil:
		fmt.Println("no coordinator answered:", err)
		return
	}
	fmt.Println("epoch", cfg.Epoch, "active", cfg.ActiveEpoch)
	_ = c.Watch(ctx, func(cfg *pb.Config) error {
		fmt.Println("now epoch", cfg.Epoch) // epochs never go back
		return nil
	})
}
