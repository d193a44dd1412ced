package roles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/coord"
	pb "github.com/weft-db/weft/internal/wire/coordpb"
)

// journal records what the member did with its engines, in order.
type journal struct {
	mu     sync.Mutex
	events []string
	live   map[uint64]bool // engines serving, by coordinator epoch
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, fmt.Sprintf(format, args...))
}

func (j *journal) serving() []uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []uint64
	for e, ok := range j.live {
		if ok {
			out = append(out, e)
		}
	}
	return out
}

func config(epoch, active uint64, filled bool) *pb.Config {
	member := uint64(0)
	if filled {
		member = 7
	}
	return &pb.Config{Epoch: epoch, ActiveEpoch: active,
		Gatekeepers: []*pb.Endpoint{{Slot: 0, Member: member, Address: "g0"}},
		Shards:      []*pb.Endpoint{{Slot: 0, Member: 7, Address: "s0"}}}
}

func newTestMember(t *testing.T, j *journal, buildErr func(epoch uint64) error, buildDelay time.Duration) *member {
	const base = 1000
	build := func(ctx context.Context, conf *pb.Config, slot int, epoch uint64, _ *coord.LeaseState) (*epochEngine, error) {
		if epoch != base+conf.GetEpoch() {
			t.Errorf("clock epoch %d for coordinator epoch %d", epoch, conf.GetEpoch())
		}
		time.Sleep(buildDelay)
		if err := buildErr(conf.GetEpoch()); err != nil {
			return nil, err
		}
		e := conf.GetEpoch()
		j.add("built %d", e)
		return &epochEngine{
			install: func() {
				j.mu.Lock()
				j.live[e] = true
				j.mu.Unlock()
				j.add("installed %d", e)
			},
			stop: func() error {
				j.mu.Lock()
				j.live[e] = false
				j.mu.Unlock()
				j.add("stopped %d", e)
				return nil
			},
		}, nil
	}
	return newMember(base, build, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func sameEpochs(got []uint64, want ...uint64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// An engine is built only for an active configuration with every slot held
// and a slot of the member's own; a new epoch stops it before onConfig
// returns (before the acknowledgement); a slot lost stops it for good.
func TestMemberFollowsEpochs(t *testing.T) {
	j := &journal{live: map[uint64]bool{}}
	m := newTestMember(t, j, func(uint64) error { return nil }, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.loop(ctx) }()
	self := func(slot int32) *pb.Member { return &pb.Member{Id: 7, Slot: slot} }

	// A backup, and then a slot in an epoch not yet active or not filled:
	// nothing is built.
	for _, c := range []struct {
		conf *pb.Config
		slot int32
	}{{config(1, 1, true), -1}, {config(2, 1, true), 0}, {config(2, 2, false), 0}} {
		if err := m.onConfig(ctx, c.conf, self(c.slot)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if s := j.serving(); len(s) != 0 {
			t.Fatalf("serving %v for epoch %d active %d slot %d", s, c.conf.GetEpoch(), c.conf.GetActiveEpoch(), c.slot)
		}
	}
	// Active and filled: built and installed.
	if err := m.onConfig(ctx, config(2, 2, true), self(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "epoch 2 serving", func() bool { return sameEpochs(j.serving(), 2) })
	// Epoch 3 announced: epoch 2's engine stops before onConfig returns.
	if err := m.onConfig(ctx, config(3, 2, true), self(0)); err != nil {
		t.Fatal(err)
	}
	if s := j.serving(); len(s) != 0 {
		t.Fatalf("epoch 2's engine still serving after the member acknowledged epoch 3: %v", s)
	}
	if err := m.onConfig(ctx, config(3, 3, true), self(0)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "epoch 3 serving", func() bool { return sameEpochs(j.serving(), 3) })
	// The slot taken away (fenced or demoted) in epoch 4: stopped, nothing new.
	if err := m.onConfig(ctx, config(4, 4, true), self(-1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if s := j.serving(); len(s) != 0 {
		t.Fatalf("serving %v without a slot", s)
	}
	cancel()
	<-done
	j.mu.Lock()
	defer j.mu.Unlock()
	want := []string{"built 2", "installed 2", "stopped 2", "built 3", "installed 3", "stopped 3"}
	if fmt.Sprint(j.events) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", j.events, want)
	}
}

// A build that fails is retried; an engine whose epoch passed while it was
// being built is stopped, never installed; the loop's end stops the
// serving engine.
func TestMemberRetriesAndDiscardsStaleBuilds(t *testing.T) {
	j := &journal{live: map[uint64]bool{}}
	var mu sync.Mutex
	fails := 2
	building2, release2 := make(chan struct{}), make(chan struct{})
	m := newTestMember(t, j, func(e uint64) error {
		if e == 2 {
			close(building2)
			<-release2 // epoch 3 arrives while epoch 2's engine is being built
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if e == 1 && fails > 0 {
			fails--
			return errors.New("shards not serving yet")
		}
		return nil
	}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.loop(ctx) }()
	self := &pb.Member{Id: 7, Slot: 0}
	if err := m.onConfig(ctx, config(1, 1, true), self); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "epoch 1 serving after two failed builds", func() bool { return sameEpochs(j.serving(), 1) })
	// Epoch 2 active at once; while its engine builds, epoch 3 comes.
	if err := m.onConfig(ctx, config(2, 2, true), self); err != nil {
		t.Fatal(err)
	}
	<-building2
	if err := m.onConfig(ctx, config(3, 3, true), self); err != nil {
		t.Fatal(err)
	}
	close(release2)
	waitFor(t, "epoch 3 serving", func() bool { return sameEpochs(j.serving(), 3) })
	cancel()
	<-done
	if s := j.serving(); len(s) != 0 {
		t.Fatalf("serving %v after the loop ended", s)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	want := []string{"built 1", "installed 1", "stopped 1", "built 2", "stopped 2", "built 3", "installed 3", "stopped 3"}
	if fmt.Sprint(j.events) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v (epoch 2's engine, built after epoch 3 came, must be stopped, never installed)", j.events, want)
	}
}

func TestReady(t *testing.T) {
	for _, c := range []struct {
		conf *pb.Config
		slot int32
		want bool
	}{
		{nil, 0, false},
		{config(3, 3, true), 0, true},
		{config(3, 3, true), -1, false},
		{config(3, 2, true), 0, false},
		{config(3, 3, false), 0, false},
		{&pb.Config{Epoch: 1, ActiveEpoch: 1, Shards: []*pb.Endpoint{{Member: 1, Address: "s"}}}, 0, false},
	} {
		if got := ready(c.conf, c.slot); got != c.want {
			t.Errorf("ready(%v, %d) = %v, want %v", c.conf, c.slot, got, c.want)
		}
	}
}

// An engine that stops on an error and is not rebuilt by a new epoch within
// the grace makes the member leave (rejoin), stopping the engine.
func TestMemberRejoinsWhenItsEngineFails(t *testing.T) {
	j := &journal{live: map[uint64]bool{}}
	var failed atomic.Bool
	build := func(ctx context.Context, conf *pb.Config, slot int, epoch uint64, _ *coord.LeaseState) (*epochEngine, error) {
		return &epochEngine{
			install: func() { j.add("installed %d", conf.GetEpoch()) },
			stop:    func() error { j.add("stopped %d", conf.GetEpoch()); return nil },
			err: func() error {
				if failed.Load() {
					return errors.New("FIFO stream broke")
				}
				return nil
			},
		}, nil
	}
	m := newMember(1000, build, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.grace = 300 * time.Millisecond
	rejoined := make(chan struct{})
	m.rejoin = func() { close(rejoined) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); m.loop(ctx) }()
	if err := m.onConfig(ctx, config(1, 1, true), &pb.Member{Id: 7, Slot: 0}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "epoch 1 installed", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.events) == 1
	})
	failed.Store(true)
	t0 := time.Now()
	select {
	case <-rejoined:
	case <-time.After(10 * time.Second):
		t.Fatal("the member never left after its engine failed")
	}
	if d := time.Since(t0); d < m.grace {
		t.Fatalf("left after %v, before the grace of %v (a new epoch might still have come)", d, m.grace)
	}
	<-done
	j.mu.Lock()
	defer j.mu.Unlock()
	if fmt.Sprint(j.events) != "[installed 1 stopped 1]" {
		t.Fatalf("events %v, want the failed engine stopped", j.events)
	}
}
