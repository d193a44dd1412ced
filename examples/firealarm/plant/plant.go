package plant

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/weft-db/weft/client/kronos"
)

// Config configures Run. Zero fields take the documented defaults.
type Config struct {
	Zones           int           // zones, one alarm sensor each; default 3
	MachinesPerZone int           // default 2
	Fires           int           // fires per zone, one after another; default 4
	Controllers     int           // control units issuing start/stop; default 2
	Commands        int           // orders per controller; default 12
	Observers       int           // default 4
	DelayMax        time.Duration // bound on a message's random delay on a link; default 4ms
	// LaggingObservers is how many observers (the first ones) have a link
	// that holds every fire alarm until all other messages are sent: their
	// fire outs arrive before their fires. Default 0.
	LaggingObservers int
	Seed             uint64 // seeds delays and controllers' choices
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Zones, 3)
	def(&c.MachinesPerZone, 2)
	def(&c.Fires, 4)
	def(&c.Controllers, 2)
	def(&c.Commands, 12)
	def(&c.Observers, 4)
	if c.DelayMax == 0 {
		c.DelayMax = 4 * time.Millisecond
	}
}

// messages is how many messages a run issues.
func (c *Config) messages() int {
	fires := c.Zones * c.Fires
	return 2*fires + 2*fires*c.MachinesPerZone + c.Controllers*c.Commands
}

// Edge is a must edge an issuer recorded: From happens before To.
type Edge struct{ From, To uint64 }

// Result is a finished run.
type Result struct {
	Observers []*Observer
	Issued    []Msg  // every message, in issue order
	Edges     []Edge // every must edge issuers recorded
}

// Zone names zone z.
func Zone(z int) string { return fmt.Sprintf("zone-%d", z) }

// Machine names machine i of zone z.
func Machine(z, i int) string { return fmt.Sprintf("machine-%d.%d", z, i) }

// run is the state shared by one run's actors.
type run struct {
	cfg Config
	bus bus

	mu     sync.Mutex
	issued []Msg
	edges  []Edge
}

// actor is one issuer: its own client, and events created ahead of need.
type actor struct {
	kc   *kronos.Client
	pool []uint64
}

// actorBatch is how many events an actor creates per call. Which event a
// message gets does not matter: only the edges recorded for it order it.
const actorBatch = 16

// events returns n fresh events.
func (a *actor) events(ctx context.Context, n int) ([]uint64, error) {
	if len(a.pool) < n {
		ids, err := a.kc.CreateEvents(ctx, max(n, actorBatch))
		if err != nil {
			return nil, err
		}
		a.pool = append(a.pool, ids...)
	}
	evs := a.pool[:n:n]
	a.pool = a.pool[n:]
	return evs, nil
}

// must is the assignment p ⇝ e, skipped for p = 0 (no predecessor).
func must(as []kronos.Assignment, p, e uint64) []kronos.Assignment {
	if p == 0 {
		return as
	}
	return append(as, kronos.Assignment{A: kronos.ID(p), Order: kronos.Before, B: kronos.ID(e), Strength: kronos.Must})
}

// issue records as in one atomic assign_order batch and then publishes ms.
// Issuers' musts all end at fresh events nothing can yet follow, so the
// batch cannot conflict.
func (r *run) issue(ctx context.Context, a *actor, as []kronos.Assignment, ms ...Msg) error {
	if len(as) > 0 {
		if _, err := a.kc.AssignOrder(ctx, as); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.issued = append(r.issued, ms...)
	for _, x := range as {
		if x.Strength == kronos.Must {
			r.edges = append(r.edges, Edge{x.A.ID, x.B.ID})
		}
	}
	r.mu.Unlock()
	for _, m := range ms {
		r.bus.publish(m)
	}
	return nil
}

// pause sleeps up to DelayMax: the actors' think time.
func (r *run) pause(ctx context.Context, rng *rand.Rand) error {
	t := time.NewTimer(time.Duration(rng.Int64N(int64(r.cfg.DelayMax) + 1)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run simulates the plant against the Kronos service at addr: every actor
// and observer dials its own client. It returns once every observer holds
// every message.
func Run(ctx context.Context, addr string, cfg Config) (*Result, error) {
	cfg.defaults()
	if cfg.Zones <= 0 || cfg.MachinesPerZone <= 0 || cfg.Fires <= 0 || cfg.Observers <= 0 {
		return nil, errors.New("plant: need zones, machines, fires and observers")
	}
	r := &run{cfg: cfg}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var clients []*kronos.Client
	defer func() {
		for _, kc := range clients {
			kc.Close()
		}
	}()
	dial := func() (*kronos.Client, error) {
		kc, err := kronos.Dial([]string{addr})
		if err == nil {
			clients = append(clients, kc)
		}
		return kc, err
	}
	capacity := cfg.messages()
	var observers []*Observer
	var olinks []*link
	for i := range cfg.Observers {
		kc, err := dial()
		if err != nil {
			return nil, err
		}
		var lag func(Msg) bool
		if i < cfg.LaggingObservers {
			lag = func(m Msg) bool { return m.Kind == Fire }
		}
		olinks = append(olinks, r.bus.subscribe(func(Msg) bool { return true }, lag, cfg.DelayMax, capacity, cfg.Seed))
		observers = append(observers, newObserver(fmt.Sprintf("observer-%d", i), kc))
	}
	actors, err := r.actors(dial, capacity)
	if err != nil {
		return nil, err
	}

	errs := make(chan error, len(actors)+len(observers))
	var owg sync.WaitGroup
	for i, o := range observers {
		owg.Add(1)
		go func() {
			defer owg.Done()
			errs <- observe(ctx, o, olinks[i], capacity)
		}()
	}
	var awg sync.WaitGroup
	for _, a := range actors {
		awg.Add(1)
		go func() {
			defer awg.Done()
			errs <- a(ctx)
		}()
	}
	go func() {
		awg.Wait()
		r.bus.release() // the lagging link catches up only now
		owg.Wait()
		close(errs)
	}()
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
			cancel()
		}
	}
	if err := errors.Join(all...); err != nil {
		return nil, err
	}
	r.bus.inflight.Wait()
	return &Result{Observers: observers, Issued: r.issued, Edges: r.edges}, nil
}

func observe(ctx context.Context, o *Observer, l *link, n int) error {
	for range n {
		select {
		case m := <-l.inbox:
			if err := o.receive(ctx, m); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
