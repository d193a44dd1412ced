package plant

import (
	"context"
	"fmt"
	"slices"

	"github.com/weft-db/weft/client/kronos"
)

// Kind is what a message says.
type Kind uint8

// Message kinds.
const (
	Fire    Kind = iota + 1 // a zone's alarm went off
	FireOut                 // the fire it Refers to is out
	Start                   // start a machine
	Stop                    // stop a machine
)

func (k Kind) String() string {
	return [...]string{"?", "fire", "fire out", "start", "stop"}[k]
}

// Msg is one message; its Kronos event is its identity.
type Msg struct {
	Event  uint64 // Kronos event
	Kind   Kind
	Object string // the zone or machine it is about
	Refers uint64 // FireOut: its Fire; fail-safe Start: its FireOut; else 0
	Issuer string
}

// Observer orders the messages it receives by Kronos, per object.
type Observer struct {
	Name string
	kc   *kronos.Client

	views    map[string][]Msg // object → messages in Kronos order
	arrivals []Msg

	// Reversals counts preferences Kronos turned down: messages whose
	// arrival order contradicted an order already committed.
	Reversals int
	// OutBeforeFire counts the times a view held a fire out before the fire
	// it answers. Kronos order makes it impossible; it must stay 0.
	OutBeforeFire int
}

func newObserver(name string, kc *kronos.Client) *Observer {
	return &Observer{Name: name, kc: kc, views: map[string][]Msg{}}
}

// receive places m in its object's view with one assign_order batch that
// prefers every message already held before m.
func (o *Observer) receive(ctx context.Context, m Msg) error {
	o.arrivals = append(o.arrivals, m)
	view := o.views[m.Object]
	pos := 0
	if len(view) > 0 {
		as := make([]kronos.Assignment, len(view))
		for i, d := range view {
			as[i] = kronos.Assignment{A: kronos.ID(d.Event), Order: kronos.Before, B: kronos.ID(m.Event), Strength: kronos.Prefer}
		}
		res, err := o.kc.AssignOrder(ctx, as)
		if err != nil {
			return err
		}
		if pos, err = position(res); err != nil {
			return fmt.Errorf("plant: %s placing %d on %s: %w", o.Name, m.Event, m.Object, err)
		}
		for _, r := range res {
			if r.Reversed {
				o.Reversals++
			}
		}
	}
	view = slices.Insert(view, pos, m)
	o.views[m.Object] = view
	o.OutBeforeFire += outsBeforeFires(view)
	return nil
}

// position returns where a new message goes in a view given its order
// against each message of the view: after a prefix ordered before it and
// before the rest. Kronos answers a total, acyclic order here (every pair is
// ordered by the batch), so anything else is an error.
func position(res []kronos.AssignResult) (int, error) {
	pos := 0
	for pos < len(res) && res[pos].Order == kronos.Before {
		pos++
	}
	for i, r := range res[pos:] {
		if r.Order != kronos.After {
			return 0, fmt.Errorf("order %d is %v after the prefix of %d before it", pos+i, r.Order, pos)
		}
	}
	return pos, nil
}

// outsBeforeFires counts fire outs placed before the fire they answer.
func outsBeforeFires(view []Msg) int {
	at := map[uint64]int{}
	for i, m := range view {
		at[m.Event] = i
	}
	n := 0
	for i, m := range view {
		if j, ok := at[m.Refers]; ok && m.Kind == FireOut && j > i {
			n++
		}
	}
	return n
}

// View returns object's messages in Kronos order.
func (o *Observer) View(object string) []Msg { return o.views[object] }

// Arrivals returns every message in arrival order.
func (o *Observer) Arrivals() []Msg { return o.arrivals }

// State is every object's state by its view: its last message decides.
func (o *Observer) State() map[string]string {
	st := map[string]string{}
	for obj, v := range o.views {
		st[obj] = stateOf(v[len(v)-1].Kind)
	}
	return st
}

// ArrivalState is what the observer would conclude trusting arrival order:
// each object's last message to arrive decides (the CATOCS failure).
func (o *Observer) ArrivalState() map[string]string {
	st := map[string]string{}
	for _, m := range o.arrivals {
		st[m.Object] = stateOf(m.Kind)
	}
	return st
}

// ArrivalOutsBeforeFires counts the fire outs that arrived before their
// fire: each one an observer trusting arrival order would apply first.
func (o *Observer) ArrivalOutsBeforeFires() int { return outsBeforeFires(o.arrivals) }

func stateOf(k Kind) string {
	switch k {
	case Fire:
		return "burning"
	case FireOut:
		return "safe"
	case Start:
		return "running"
	}
	return "stopped"
}
