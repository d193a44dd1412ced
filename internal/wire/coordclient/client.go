package coordclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// ErrFenced is returned to a member the coordinator declared failed: the
// process must stop serving its slot (a backup has it, or will) and may only
// come back by registering as a new member.
var ErrFenced = errors.New("coord: member fenced (declared failed)")

// Error is an API error answered by a replica (a stable code).
type Error struct {
	Code    pb.ErrorCode
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%v)", e.Message, e.Code) }

// retryable reports whether another replica (or a later try) may succeed.
func retryable(c pb.ErrorCode) bool {
	return c == pb.ErrorCode_NOT_LEADER || c == pb.ErrorCode_NOT_READY || c == pb.ErrorCode_OVERLOADED ||
		c == pb.ErrorCode_SHUTTING_DOWN
}

// Client talks to a coordinator group: it follows leader hints and retries
// on another replica after NOT_LEADER, NOT_READY, OVERLOADED or a transport
// error, until the context ends. Safe for concurrent use.
type Client struct {
	addrs []string
	// AttemptTimeout bounds one RPC to one replica. Default 1s.
	AttemptTimeout time.Duration
	// AttemptsMax bounds the attempts of one call (the context may end it
	// sooner); with the backoff between rounds it is about a minute for 3
	// replicas. Default 1000.
	AttemptsMax int

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	leader string
	next   int
}

// NewClient returns a client of the replicas at addrs (no I/O yet).
func NewClient(addrs []string) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("coord: no coordinator addresses")
	}
	return &Client{addrs: addrs, AttemptTimeout: time.Second, AttemptsMax: 1000, conns: map[string]*grpc.ClientConn{}}, nil
}

// Close closes the connections.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a, cc := range c.conns {
		_ = cc.Close()
		delete(c.conns, a)
	}
	return nil
}

func (c *Client) conn(addr string) (pb.CoordClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc, ok := c.conns[addr]
	if !ok {
		var err error
		if cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return nil, err
		}
		c.conns[addr] = cc
	}
	return pb.NewCoordClient(cc), nil
}

// target picks the replica to try: the known leader, else the next in turn.
func (c *Client) target() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leader != "" {
		return c.leader
	}
	a := c.addrs[c.next%len(c.addrs)]
	c.next++
	return a
}

func (c *Client) observe(addr string, e *pb.Error, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case failed || (e != nil && retryable(e.Code)):
		if c.leader == addr {
			c.leader = ""
		}
		if e != nil && e.LeaderHint != "" && e.LeaderHint != addr && c.reaches(e.LeaderHint) {
			c.leader = e.LeaderHint
		}
	default:
		c.leader = addr
	}
}

// reaches reports whether the client may follow a leader hint: a client of
// one address follows every hint; a client of several talks only to the
// addresses it was given (the replicas may sit behind proxies whose
// addresses the replicas do not know), so a hint outside them is ignored
// and the next address tried in turn. Called with mu held.
func (c *Client) reaches(hint string) bool {
	return len(c.addrs) == 1 || slices.Contains(c.addrs, hint)
}

// call runs rpc against replicas until an answer that is not retryable.
func call[T interface{ GetError() *pb.Error }](ctx context.Context, c *Client, rpc func(context.Context, pb.CoordClient) (T, error)) (T, error) {
	var zero T
	backoff := 10 * time.Millisecond
	var last error
	for attempt := 0; ; attempt++ {
		if attempt >= c.AttemptsMax {
			return zero, fmt.Errorf("coord: gave up after %d attempts: %w", attempt, last)
		}
		addr := c.target()
		cl, err := c.conn(addr)
		if err == nil {
			actx, cancel := context.WithTimeout(ctx, c.AttemptTimeout)
			var r T
			r, err = rpc(actx, cl)
			cancel()
			if err == nil {
				e := r.GetError()
				c.observe(addr, e, false)
				switch {
				case e == nil:
					return r, nil
				case e.Code == pb.ErrorCode_FENCED:
					return r, fmt.Errorf("%w: %s", ErrFenced, e.Message)
				case !retryable(e.Code):
					return r, &Error{Code: e.Code, Message: e.Message}
				}
				last = &Error{Code: e.Code, Message: e.Message}
				if e.LeaderHint != "" && attempt%len(c.addrs) != len(c.addrs)-1 {
					continue // follow the hint (or, when it is not ours, try the next address) at once
				}
			} else {
				c.observe(addr, nil, true)
				last = err
			}
		} else {
			last = err
		}
		// One round over every replica failed: wait a little.
		if attempt%len(c.addrs) == len(c.addrs)-1 {
			select {
			case <-ctx.Done():
				return zero, fmt.Errorf("coord: %w (last error: %v)", ctx.Err(), last)
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 200*time.Millisecond)
		} else if ctx.Err() != nil {
			return zero, fmt.Errorf("coord: %w (last error: %v)", ctx.Err(), last)
		}
	}
}

// Register registers a member (idempotent for the same name and token).
func (c *Client) Register(ctx context.Context, req *pb.RegisterRequest) (*pb.RegisterResponse, error) {
	return call(ctx, c, func(ctx context.Context, cl pb.CoordClient) (*pb.RegisterResponse, error) {
		return cl.Register(ctx, req)
	})
}

// Heartbeat sends one heartbeat to the leader.
func (c *Client) Heartbeat(ctx context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	return call(ctx, c, func(ctx context.Context, cl pb.CoordClient) (*pb.HeartbeatResponse, error) {
		return cl.Heartbeat(ctx, req)
	})
}

// AckEpoch acknowledges an epoch and waits until the ack is committed.
func (c *Client) AckEpoch(ctx context.Context, req *pb.AckEpochRequest) (*pb.AckEpochResponse, error) {
	return call(ctx, c, func(ctx context.Context, cl pb.CoordClient) (*pb.AckEpochResponse, error) {
		return cl.AckEpoch(ctx, req)
	})
}

// AddSlot grows role's slots to at least count.
func (c *Client) AddSlot(ctx context.Context, req *pb.AddSlotRequest) (*pb.AddSlotResponse, error) {
	return call(ctx, c, func(ctx context.Context, cl pb.CoordClient) (*pb.AddSlotResponse, error) {
		return cl.AddSlot(ctx, req)
	})
}

// Config returns the serving leader's configuration: the clients' view of
// which gatekeeper and shard serves each slot, and the epochs.
func (c *Client) Config(ctx context.Context) (*pb.Config, error) {
	st, err := c.LeaderStatus(ctx)
	if err != nil {
		return nil, err
	}
	if !st.IsLeader {
		return nil, &Error{Code: pb.ErrorCode_NOT_LEADER, Message: "coord: no serving leader"}
	}
	return st.Config, nil
}

// Status asks the replica at addr for its view.
func (c *Client) Status(ctx context.Context, addr string) (*pb.StatusResponse, error) {
	cl, err := c.conn(addr)
	if err != nil {
		return nil, err
	}
	return cl.Status(ctx, &pb.StatusRequest{})
}

// LeaderStatus asks the replicas in turn and returns the serving leader's
// view (or, if none serves, the view with the highest applied index).
func (c *Client) LeaderStatus(ctx context.Context) (*pb.StatusResponse, error) {
	var best *pb.StatusResponse
	var last error
	for _, a := range c.addrs {
		actx, cancel := context.WithTimeout(ctx, c.AttemptTimeout)
		st, err := c.Status(actx, a)
		cancel()
		if err != nil {
			last = err
			continue
		}
		if st.IsLeader {
			return st, nil
		}
		if best == nil || st.AppliedIndex > best.AppliedIndex {
			best = st
		}
	}
	if best == nil {
		return nil, fmt.Errorf("coord: no replica answered: %w", last)
	}
	return best, nil
}

// Watch calls fn with the configuration of one replica, then with each
// change, moving to another replica when the stream breaks, until ctx ends
// or fn returns an error. Epochs passed to fn never decrease.
func (c *Client) Watch(ctx context.Context, fn func(*pb.Config) error) error {
	var seen uint64
	backoff := 10 * time.Millisecond
	for ctx.Err() == nil {
		addr := c.target()
		cl, err := c.conn(addr)
		if err == nil {
			var st grpc.ServerStreamingClient[pb.Config]
			if st, err = cl.Watch(ctx, &pb.WatchRequest{AfterEpoch: seen}); err == nil {
				for {
					cfg, rerr := st.Recv()
					if rerr != nil {
						break
					}
					if cfg.Epoch < seen {
						continue // a lagging replica: skip what was already seen
					}
					seen = cfg.Epoch
					backoff = 10 * time.Millisecond
					if err := fn(cfg); err != nil {
						return err
					}
				}
			}
		}
		c.observe(addr, nil, true)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
	return ctx.Err()
}
