package social

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/weft-db/weft/client/kronos"
)

// Post is one message. Its Kronos event is its identity.
type Post struct {
	Event   uint64 // the post's Kronos event
	Author  int    // user id
	Text    string // body
	ReplyTo uint64 // event of the post answered; 0 for none
	Shard   int    // shard that accepted the post
}

// Config configures a Network.
type Config struct {
	// Friends lists each user's friends; users are 0..len(Friends)-1 and user
	// u is homed on shard u mod the number of shards. Required.
	Friends [][]int
	// DelayMax bounds the uniformly random delay of one fan-out delivery.
	// Default 0: delivered at once (still in no particular order).
	DelayMax time.Duration
	// Seed seeds the delivery delays.
	Seed uint64
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if len(c.Friends) == 0 {
		return errors.New("social: no users")
	}
	for u, fs := range c.Friends {
		for _, f := range fs {
			if f < 0 || f >= len(c.Friends) || f == u {
				return errors.New("social: friend list names a bad user")
			}
		}
	}
	if c.DelayMax < 0 {
		return errors.New("social: negative DelayMax")
	}
	return nil
}

// Network is the social network: users, their timelines and the shards
// that accept posts and fan them out.
type Network struct {
	cfg       Config
	shards    []*Shard
	timelines []*Timeline
	inflight  sync.WaitGroup // deliveries scheduled but not yet arrived
}

// NewNetwork builds a network whose shards use the given Kronos clients, one
// shard per client. The clients stay owned by the caller.
func NewNetwork(cfg Config, clients []*kronos.Client) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(clients) == 0 {
		return nil, errors.New("social: no shards")
	}
	n := &Network{cfg: cfg}
	for i, kc := range clients {
		n.shards = append(n.shards, &Shard{id: i, net: n, kc: kc,
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)))})
	}
	for range cfg.Friends {
		n.timelines = append(n.timelines, &Timeline{})
	}
	return n, nil
}

// Users is the number of users.
func (n *Network) Users() int { return len(n.cfg.Friends) }

// Friends returns user u's friends (shared; do not modify).
func (n *Network) Friends(u int) []int { return n.cfg.Friends[u] }

// Home is the shard user u posts through.
func (n *Network) Home(u int) *Shard { return n.shards[u%len(n.shards)] }

// Shard returns shard i.
func (n *Network) Shard(i int) *Shard { return n.shards[i] }

// Timeline returns user u's timeline.
func (n *Network) Timeline(u int) *Timeline { return n.timelines[u] }

// Settle waits until every scheduled delivery has arrived. Held deliveries
// are not scheduled until their shard releases them.
func (n *Network) Settle() { n.inflight.Wait() }

// Render orders user u's timeline with the Kronos client of u's home shard.
func (n *Network) Render(ctx context.Context, u int) ([]Post, error) {
	return Render(ctx, n.Home(u).kc, n.timelines[u].Arrived())
}

// Shard is an application server: it accepts posts from its users, records
// them in Kronos, and fans them out to timelines.
type Shard struct {
	id  int
	net *Network
	kc  *kronos.Client

	// kmu keeps one Kronos mutation in flight per shard: the client's
	// exactly-once session rejects a mutation whose sequence number is
	// overtaken by a concurrent one ("sequence N is older than M"), so
	// concurrent CreateEvent/AssignOrder calls on one Client fail.
	kmu sync.Mutex

	mu      sync.Mutex
	rng     *rand.Rand // delivery delays; guarded by mu
	holding bool       // fan-out is queued in held instead of scheduled
	held    []delivery
}

type delivery struct {
	post Post
	to   int
}

// ID is the shard's index.
func (s *Shard) ID() int { return s.id }

// Post records a new post by author and fans it out (Figure 5,
// post_message).
func (s *Shard) Post(ctx context.Context, author int, text string) (Post, error) {
	s.kmu.Lock()
	e, err := s.kc.CreateEvent(ctx)
	s.kmu.Unlock()
	if err != nil {
		return Post{}, err
	}
	p := Post{Event: e, Author: author, Text: text, Shard: s.id}
	s.fanOut(p)
	return p, nil
}

// Reply records author's reply to parent, ordered after it in Kronos, and
// fans it out (Figure 5, reply_to_message). The order is recorded before any
// timeline can receive the reply, so every render that holds both sees it.
func (s *Shard) Reply(ctx context.Context, author int, text string, parent Post) (Post, error) {
	e, err := s.reply(ctx, parent)
	if err != nil {
		return Post{}, err
	}
	p := Post{Event: e, Author: author, Text: text, ReplyTo: parent.Event, Shard: s.id}
	s.fanOut(p)
	return p, nil
}

// reply creates the reply's event and orders it after parent.
func (s *Shard) reply(ctx context.Context, parent Post) (uint64, error) {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	e, err := s.kc.CreateEvent(ctx)
	if err != nil {
		return 0, err
	}
	// The reply is a fresh event nothing can yet follow, so this must
	// cannot conflict; an error here is an operating error (unreachable
	// service, collected parent), returned as such.
	_, err = s.kc.AssignOrder(ctx, []kronos.Assignment{{
		A: kronos.ID(parent.Event), Order: kronos.Before, B: kronos.ID(e), Strength: kronos.Must,
	}})
	return e, err
}

// Hold makes the shard lag: its fan-out queues until Release.
func (s *Shard) Hold() {
	s.mu.Lock()
	s.holding = true
	s.mu.Unlock()
}

// Release schedules the held fan-out, shuffled, and stops holding.
func (s *Shard) Release() {
	s.mu.Lock()
	held := s.held
	s.held, s.holding = nil, false
	s.rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
	for _, d := range held {
		s.schedule(d)
	}
	s.mu.Unlock()
}

// fanOut delivers p to its author's timeline and every friend's.
func (s *Shard) fanOut(p Post) {
	s.mu.Lock()
	defer s.mu.Unlock()
	to := append([]int{p.Author}, s.net.cfg.Friends[p.Author]...)
	for _, u := range to {
		d := delivery{post: p, to: u}
		if s.holding {
			s.held = append(s.held, d)
			continue
		}
		s.schedule(d)
	}
}

// schedule starts one delivery after a random delay. Caller holds s.mu.
func (s *Shard) schedule(d delivery) {
	var delay time.Duration
	if dmax := s.net.cfg.DelayMax; dmax > 0 {
		delay = time.Duration(s.rng.Int64N(int64(dmax)))
	}
	tl := s.net.timelines[d.to]
	s.net.inflight.Add(1)
	time.AfterFunc(delay, func() {
		tl.add(d.post)
		s.net.inflight.Done()
	})
}

// Timeline is one user's inbox of posts in arrival order.
type Timeline struct {
	mu    sync.Mutex
	posts []Post
}

func (t *Timeline) add(p Post) {
	t.mu.Lock()
	t.posts = append(t.posts, p)
	t.mu.Unlock()
}

// Arrived returns a copy of the timeline's posts in arrival order.
func (t *Timeline) Arrived() []Post {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Post(nil), t.posts...)
}
