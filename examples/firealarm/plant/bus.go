package plant

import (
	"math/rand/v2"
	"sync"
	"time"
)

// bus delivers every published message to each interested link after a
// random delay. Links never block: inboxes hold every message of a run.
type bus struct {
	links    []*link
	inflight sync.WaitGroup // deliveries scheduled but not arrived
}

// link is one subscriber's incoming connection.
type link struct {
	bus      *bus
	want     func(Msg) bool // messages the subscriber receives
	lag      func(Msg) bool // messages held back until release; nil for none
	delayMax time.Duration
	inbox    chan Msg

	mu      sync.Mutex
	rng     *rand.Rand // guarded by mu
	holding bool
	held    []Msg
}

func (b *bus) subscribe(want, lag func(Msg) bool, delayMax time.Duration, capacity int, seed uint64) *link {
	l := &link{bus: b, want: want, lag: lag, delayMax: delayMax, inbox: make(chan Msg, capacity),
		rng: rand.New(rand.NewPCG(seed, uint64(len(b.links)))), holding: lag != nil}
	b.links = append(b.links, l)
	return l
}

func (b *bus) publish(m Msg) {
	for _, l := range b.links {
		if l.want(m) {
			l.send(m)
		}
	}
}

// release delivers every held message, shuffled, and stops holding.
func (b *bus) release() {
	for _, l := range b.links {
		l.mu.Lock()
		held := l.held
		l.held, l.holding = nil, false
		l.rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
		for _, m := range held {
			l.schedule(m)
		}
		l.mu.Unlock()
	}
}

func (l *link) send(m Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holding && l.lag(m) {
		l.held = append(l.held, m)
		return
	}
	l.schedule(m)
}

// schedule delivers m after a random delay. Caller holds l.mu.
func (l *link) schedule(m Msg) {
	var d time.Duration
	if l.delayMax > 0 {
		d = time.Duration(l.rng.Int64N(int64(l.delayMax)))
	}
	l.bus.inflight.Add(1)
	time.AfterFunc(d, func() {
		l.inbox <- m
		l.bus.inflight.Done()
	})
}
