package social

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/weft-db/weft/client/kronos"
)

// SimConfig configures Simulate. Zero fields take the documented defaults.
type SimConfig struct {
	Users         int           // users; default 12
	Rounds        int           // rounds of post, reply, reply-to-reply; default 4
	FriendPercent int           // chance two users beyond ring neighbours are friends, in percent; default 40
	DelayMax      time.Duration // bound on one delivery's random delay; default 3ms
	Lagging       bool          // shard 0 holds its fan-out until the end of each round
	Renderers     int           // goroutines rendering random timelines during the run; default 2
	Seed          uint64        // seeds friendships, reply choices and delays
}

func (c *SimConfig) defaults() {
	if c.Users == 0 {
		c.Users = 12
	}
	if c.Rounds == 0 {
		c.Rounds = 4
	}
	if c.FriendPercent == 0 {
		c.FriendPercent = 40
	}
	if c.DelayMax == 0 {
		c.DelayMax = 3 * time.Millisecond
	}
	if c.Renderers == 0 {
		c.Renderers = 2
	}
}

// SimResult is what a simulation produced, for checking.
type SimResult struct {
	Posts    map[uint64]Post // every post, by event
	Renders  [][]Post        // every render: during the run, then one final per user
	Arrivals [][]Post        // each user's final timeline in arrival order
	// CrossReplies counts replies accepted by a prompt shard to a post the
	// lagging shard was still holding: each is shown before its parent by
	// arrival order on the replier's own timeline.
	CrossReplies int
}

// Simulate runs the workload of §3.1 with one shard per client: each round,
// every user posts, then every user replies to a friend's post of the
// round, then every user replies to a friend's reply — all users of a phase
// concurrently, so replies of replies form chains that cross friendships.
// Renderers render random timelines throughout; at the end every timeline
// is rendered once more after all deliveries have arrived.
func Simulate(ctx context.Context, clients []*kronos.Client, cfg SimConfig) (*SimResult, error) {
	cfg.defaults()
	if cfg.Users < 2 {
		return nil, errors.New("social: a simulation needs two users")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	n, err := NewNetwork(Config{Friends: RandomFriends(cfg.Users, cfg.FriendPercent, rng),
		DelayMax: cfg.DelayMax, Seed: cfg.Seed}, clients)
	if err != nil {
		return nil, err
	}
	res := &SimResult{Posts: map[uint64]Post{}}
	var mu sync.Mutex // guards res while renderers run
	record := func(p Post) {
		mu.Lock()
		res.Posts[p.Event] = p
		mu.Unlock()
	}

	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rerrs := make([]error, cfg.Renderers)
	for r := range cfg.Renderers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			rerrs[r] = renderLoop(ctx, n, uint64(r), stop, func(p []Post) {
				mu.Lock()
				res.Renders = append(res.Renders, p)
				mu.Unlock()
			})
		}()
	}
	users := make([]*rand.Rand, cfg.Users)
	for u := range users {
		users[u] = rand.New(rand.NewPCG(cfg.Seed, uint64(u)+1))
	}
	for round := range cfg.Rounds {
		cross, err := runRound(ctx, n, round, users, cfg.Lagging, record)
		if err != nil {
			close(stop)
			rwg.Wait()
			return nil, err
		}
		res.CrossReplies += cross
	}
	close(stop)
	rwg.Wait()
	if err := errors.Join(rerrs...); err != nil {
		return nil, err
	}
	for u := range cfg.Users {
		arrived := n.Timeline(u).Arrived()
		res.Arrivals = append(res.Arrivals, arrived)
		r, err := n.Render(ctx, u)
		if err != nil {
			return nil, err
		}
		res.Renders = append(res.Renders, r)
	}
	return res, nil
}

// runRound runs one round's three phases and lets every delivery arrive.
// It returns the round's cross replies.
func runRound(ctx context.Context, n *Network, round int, users []*rand.Rand, lagging bool, record func(Post)) (int, error) {
	if lagging {
		n.Shard(0).Hold()
	}
	posts := make([]Post, n.Users())
	err := forEachUser(n.Users(), func(u int) (err error) {
		if posts[u], err = n.Home(u).Post(ctx, u, fmt.Sprintf("u%d: news of round %d", u, round)); err == nil {
			record(posts[u])
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	var cross [2][]bool
	replies := make([]Post, n.Users())
	parents := [2][]Post{posts, replies}
	for phase, text := range [2]string{"re", "re: re"} {
		cross[phase] = make([]bool, n.Users())
		prev := parents[phase]
		next := make([]Post, n.Users())
		err := forEachUser(n.Users(), func(u int) (err error) {
			fs := n.Friends(u)
			parent := prev[fs[users[u].IntN(len(fs))]]
			next[u], err = n.Home(u).Reply(ctx, u, fmt.Sprintf("u%d: %s %q", u, text, parent.Text), parent)
			if err == nil {
				cross[phase][u] = lagging && parent.Shard == 0 && n.Home(u).ID() != 0
				record(next[u])
			}
			return err
		})
		if err != nil {
			return 0, err
		}
		copy(replies, next)
	}
	// Prompt deliveries land first, then the lagging shard catches up.
	n.Settle()
	if lagging {
		n.Shard(0).Release()
		n.Settle()
	}
	c := 0
	for _, phase := range cross {
		for _, x := range phase {
			if x {
				c++
			}
		}
	}
	return c, nil
}

// renderPause spaces a renderer's renders: each asks about every pair of a
// timeline's posts, so back-to-back renders would dominate the run.
const renderPause = 20 * time.Millisecond

// renderLoop renders random users' timelines until stop closes.
func renderLoop(ctx context.Context, n *Network, seed uint64, stop <-chan struct{}, keep func([]Post)) error {
	rng := rand.New(rand.NewPCG(seed, 1<<32))
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(renderPause):
		}
		r, err := n.Render(ctx, rng.IntN(n.Users()))
		if err != nil {
			return err
		}
		keep(r)
	}
}

// forEachUser runs f for every user concurrently and joins the errors.
func forEachUser(users int, f func(u int) error) error {
	errs := make([]error, users)
	var wg sync.WaitGroup
	for u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[u] = f(u)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RandomFriends returns a symmetric friendship graph over users: a ring, so
// everyone has a friend, plus each other pair with probability percent/100.
func RandomFriends(users, percent int, rng *rand.Rand) [][]int {
	fs := make([][]int, users)
	for u := range users {
		for v := u + 1; v < users; v++ {
			if v == u+1 || (u == 0 && v == users-1) || rng.IntN(100) < percent {
				fs[u] = append(fs[u], v)
				fs[v] = append(fs[v], u)
			}
		}
	}
	return fs
}
