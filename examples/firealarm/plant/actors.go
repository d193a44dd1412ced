package plant

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/weft-db/weft/client/kronos"
)

// actors subscribes and returns every issuer of the run: sensors, the
// extinguisher, the fail-safe and the controllers. Each issues its messages
// one at a time on its own client.
func (r *run) actors(dial func() (*kronos.Client, error), capacity int) ([]func(context.Context) error, error) {
	cfg := r.cfg
	var actors []func(context.Context) error
	add := func(want func(Msg) bool, act func(context.Context, *actor, *link, *rand.Rand) error) error {
		kc, err := dial()
		if err != nil {
			return err
		}
		l := r.bus.subscribe(want, nil, cfg.DelayMax, capacity, cfg.Seed)
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(len(actors))<<32))
		a := &actor{kc: kc}
		actors = append(actors, func(ctx context.Context) error { return act(ctx, a, l, rng) })
		return nil
	}
	for z := range cfg.Zones {
		want := func(m Msg) bool { return m.Kind == FireOut && m.Object == Zone(z) }
		if err := add(want, func(ctx context.Context, a *actor, l *link, rng *rand.Rand) error {
			return r.sensor(ctx, a, l, rng, z)
		}); err != nil {
			return nil, err
		}
	}
	if err := add(func(m Msg) bool { return m.Kind == Fire }, r.extinguisher); err != nil {
		return nil, err
	}
	if err := add(func(m Msg) bool { return m.Kind == Fire || m.Kind == FireOut }, r.failSafe); err != nil {
		return nil, err
	}
	for c := range cfg.Controllers {
		want := func(m Msg) bool { return m.Kind == Start || m.Kind == Stop }
		if err := add(want, func(ctx context.Context, a *actor, l *link, rng *rand.Rand) error {
			return r.controller(ctx, a, l, rng, c)
		}); err != nil {
			return nil, err
		}
	}
	return actors, nil
}

// sensor raises zone z's alarm Fires times, each after the previous fire is
// reported out (and ordered after that report).
func (r *run) sensor(ctx context.Context, a *actor, l *link, rng *rand.Rand, z int) error {
	var lastOut uint64
	for range r.cfg.Fires {
		if err := r.pause(ctx, rng); err != nil {
			return err
		}
		evs, err := a.events(ctx, 1)
		if err != nil {
			return err
		}
		ev := evs[0]
		fire := Msg{Event: ev, Kind: Fire, Object: Zone(z), Issuer: fmt.Sprintf("sensor-%d", z)}
		if err := r.issue(ctx, a, must(nil, lastOut, ev), fire); err != nil {
			return err
		}
		for out := false; !out; {
			select {
			case m := <-l.inbox:
				if out = m.Refers == ev; out {
					lastOut = m.Event
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// extinguisher puts out every fire, reporting each after it.
func (r *run) extinguisher(ctx context.Context, a *actor, l *link, rng *rand.Rand) error {
	for range r.cfg.Zones * r.cfg.Fires {
		var f Msg
		select {
		case f = <-l.inbox:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := r.pause(ctx, rng); err != nil {
			return err
		}
		evs, err := a.events(ctx, 1)
		if err != nil {
			return err
		}
		out := Msg{Event: evs[0], Kind: FireOut, Object: f.Object, Refers: f.Event, Issuer: "extinguisher"}
		if err := r.issue(ctx, a, must(nil, f.Event, out.Event), out); err != nil {
			return err
		}
	}
	return nil
}

// failSafe stops a zone's machines on its fire and restarts them on the fire
// out (§3.4's kill switch). A fire out can arrive before its fire; it waits.
func (r *run) failSafe(ctx context.Context, a *actor, l *link, _ *rand.Rand) error {
	stops := map[uint64][]uint64{} // fire → its stop per machine
	early := map[uint64]Msg{}      // fire → a fire out that arrived first
	zoneOf := map[string]int{}
	for z := range r.cfg.Zones {
		zoneOf[Zone(z)] = z
	}
	for range 2 * r.cfg.Zones * r.cfg.Fires {
		var m Msg
		select {
		case m = <-l.inbox:
		case <-ctx.Done():
			return ctx.Err()
		}
		z := zoneOf[m.Object]
		if m.Kind == FireOut {
			if _, ok := stops[m.Refers]; !ok {
				early[m.Refers] = m
				continue
			}
			if err := r.restart(ctx, a, z, m, stops[m.Refers]); err != nil {
				return err
			}
			continue
		}
		evs, err := a.events(ctx, r.cfg.MachinesPerZone)
		if err != nil {
			return err
		}
		var as []kronos.Assignment
		var msgs []Msg
		for i, ev := range evs {
			as = must(as, m.Event, ev)
			msgs = append(msgs, Msg{Event: ev, Kind: Stop, Object: Machine(z, i), Refers: m.Event, Issuer: "fail-safe"})
		}
		if err := r.issue(ctx, a, as, msgs...); err != nil {
			return err
		}
		stops[m.Event] = evs
		if out, ok := early[m.Event]; ok {
			if err := r.restart(ctx, a, z, out, evs); err != nil {
				return err
			}
		}
	}
	return nil
}

// restart starts zone z's machines after the fire out and after the stops
// the fail-safe issued for that fire, and prefers each stop before the fire
// out. Only a preference: an observer may already have placed a later
// fire's stop (which follows this fire out) before this stop on the same
// machine, and a must would then abort.
func (r *run) restart(ctx context.Context, a *actor, z int, out Msg, stops []uint64) error {
	evs, err := a.events(ctx, len(stops))
	if err != nil {
		return err
	}
	var as []kronos.Assignment
	var msgs []Msg
	for i, ev := range evs {
		as = must(must(as, out.Event, ev), stops[i], ev)
		msgs = append(msgs, Msg{Event: ev, Kind: Start, Object: Machine(z, i), Refers: out.Event, Issuer: "fail-safe"})
	}
	// Kronos applies every must first, then the preferences in order.
	for _, stop := range stops {
		as = append(as, kronos.Assignment{A: kronos.ID(stop), Order: kronos.Before, B: kronos.ID(out.Event), Strength: kronos.Prefer})
	}
	return r.issue(ctx, a, as, msgs...)
}

// controller issues Commands random start/stop orders, each after its own
// previous order and the last order it saw for the same machine.
func (r *run) controller(ctx context.Context, a *actor, l *link, rng *rand.Rand, c int) error {
	seen := map[string]uint64{}
	own := map[string]uint64{}
	for range r.cfg.Commands {
		for drained := false; !drained; {
			select {
			case m := <-l.inbox:
				seen[m.Object] = m.Event
			default:
				drained = true
			}
		}
		if err := r.pause(ctx, rng); err != nil {
			return err
		}
		obj := Machine(rng.IntN(r.cfg.Zones), rng.IntN(r.cfg.MachinesPerZone))
		kind := Start
		if rng.IntN(2) == 0 {
			kind = Stop
		}
		evs, err := a.events(ctx, 1)
		if err != nil {
			return err
		}
		ev := evs[0]
		m := Msg{Event: ev, Kind: kind, Object: obj, Issuer: fmt.Sprintf("controller-%d", c)}
		as := must(nil, own[obj], ev)
		if s := seen[obj]; s != own[obj] {
			as = must(as, s, ev)
		}
		if err := r.issue(ctx, a, as, m); err != nil {
			return err
		}
		own[obj] = ev
	}
	return nil
}
