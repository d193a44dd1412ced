package txkv

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/examples/internal/exkronos"
)

func startKronos(t *testing.T) string {
	t.Helper()
	s, err := exkronos.Start(t.TempDir(), exkronos.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s.Addr()
}

func dial(t *testing.T, addr string) *kronos.Client {
	t.Helper()
	kc, err := kronos.Dial([]string{addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kc.Close() })
	return kc
}

// TestTransactionalBank (§3.3, §4.1.2): concurrent transfers and audits over
// three partitions. Every audit sees the invariant total and no negative
// balance, conflicts abort and retry, and the committed history replays
// serially in Kronos's order to the final balances.
func TestTransactionalBank(t *testing.T) {
	const accounts, initial = 8, 100
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := startKronos(t)
	s, err := Open(addr, Config{Keys: accounts, Partitions: 3, Initial: initial,
		JitterMax: 2 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Eight clients on eight accounts make aborts near certain in one run
	// (typically 5-20, fewer under -race on a loaded machine); should a run
	// have none, a few more on the same store make them certain in practice
	// without weakening the checks, which cover every run.
	res := &BankResult{Transfers: map[uint64]Transfer{}}
	for run := uint64(1); run <= 4 && (run == 1 || s.Stats().Aborts == 0); run++ {
		r, err := RunBank(ctx, s, BankConfig{Transfers: 15, Audits: 4, Seed: run})
		if err != nil {
			t.Fatal(err)
		}
		res.History = append(res.History, r.History...)
		res.Audits = append(res.Audits, r.Audits...)
		maps.Copy(res.Transfers, r.Transfers)
	}

	for _, a := range res.Audits {
		if got := Sum(a.Read); got != accounts*initial {
			t.Fatalf("audit %d saw total %d, want %d: %v", a.Event, got, accounts*initial, a.Read)
		}
		for k, v := range a.Read {
			if v < 0 {
				t.Fatalf("audit %d saw account %d at %d", a.Event, k, v)
			}
		}
	}
	st := s.Stats()
	retried := 0
	for _, c := range res.History {
		if c.Attempts > 1 {
			retried++
		}
	}
	if st.Aborts == 0 || retried == 0 {
		t.Fatalf("no transaction aborted (%+v, %d retried): the conflict path went unexercised", st, retried)
	}

	serial, err := Verify(ctx, dial(t, addr), res.History, accounts, initial)
	if err != nil {
		t.Fatal(err)
	}
	final := res.Audits[len(res.Audits)-1].Read
	if !slices.Equal(serial.Final, final) {
		t.Fatalf("replayed writes end at %v, the final audit read %v", serial.Final, final)
	}

	// Replay the transfers' intents, not their writes, in the same order.
	bal := slices.Repeat([]int64{initial}, accounts)
	moved := 0
	for _, i := range serial.Order {
		c := res.History[i]
		tr, ok := res.Transfers[c.Event]
		if !ok {
			continue
		}
		if want := bal[tr.From] >= tr.Amount; want != (c.Wrote != nil) {
			t.Fatalf("transfer %+v (event %d) moved=%v, the serial schedule says %v", tr, c.Event, c.Wrote != nil, want)
		}
		if c.Wrote != nil {
			bal[tr.From] -= tr.Amount
			bal[tr.To] += tr.Amount
			moved++
		}
	}
	if !slices.Equal(bal, final) {
		t.Fatalf("replayed transfers end at %v, the final audit read %v", bal, final)
	}
	if moved == 0 {
		t.Fatal("no transfer moved money")
	}
	t.Logf("%d commits (%d transfers moved money, %d audits), %d aborts, %d transactions retried",
		st.Commits, moved, len(res.Audits), st.Aborts, retried)
}

// TestVerifyCatchesLostUpdate shows the checker can fail: two transfers
// that Kronos orders but that both read the initial balance are a lost
// update, not a serial history.
func TestVerifyCatchesLostUpdate(t *testing.T) {
	ctx := context.Background()
	kc := dial(t, startKronos(t))
	ids, err := kc.CreateEvents(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.AssignOrder(ctx, []kronos.Assignment{{A: kronos.ID(ids[0]), Order: kronos.Before,
		B: kronos.ID(ids[1]), Strength: kronos.Must}}); err != nil {
		t.Fatal(err)
	}
	first := Commit{Event: ids[0], Keys: []Key{0, 1}, Read: []int64{100, 100}, Wrote: []int64{90, 110}}
	good := Commit{Event: ids[1], Keys: []Key{0, 1}, Read: []int64{90, 110}, Wrote: []int64{80, 120}}
	lost := Commit{Event: ids[1], Keys: []Key{0, 1}, Read: []int64{100, 100}, Wrote: []int64{90, 110}}
	if _, err := Verify(ctx, kc, []Commit{good, first}, 2, 100); err != nil {
		t.Fatalf("serial history rejected: %v", err)
	}
	if _, err := Verify(ctx, kc, []Commit{first, lost}, 2, 100); err == nil {
		t.Fatal("lost update accepted")
	}
}

// TestConflictingOrdersAbort (§3.3, "Should the assign_order call fail, the
// transaction will abort"): two partitions that see two transactions in
// opposite orders cannot both order them; the loser's no-op entry then
// unblocks the reader behind it.
func TestConflictingOrdersAbort(t *testing.T) {
	ctx := context.Background()
	s, err := Open(startKronos(t), Config{Keys: 2, Partitions: 2, Initial: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p0, p1 := s.parts[0], s.parts[1]
	tx, err := s.createEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ux, err := s.createEvent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		p  *partition
		ev uint64
		k  Key
	}{{p0, tx, 0}, {p0, ux, 0}, {p1, ux, 1}} {
		if err := step.p.order(ctx, step.ev, []Key{step.k}, true); err != nil {
			t.Fatal(err)
		}
	}
	// p0 put T before U; p1 asking for U before T would close a cycle.
	err = p1.order(ctx, tx, []Key{1}, true)
	if !errors.Is(err, kronos.ErrMustConflict) {
		t.Fatalf("opposite order on p1: %v, want a must conflict", err)
	}
	if len(p1.chains[0]) != 2 {
		t.Fatalf("failed ordering changed p1's chain: %+v", p1.chains[0])
	}
	done := make(chan []int64, 1)
	go func() {
		v, _ := p0.read(ctx, ux, []Key{0})
		done <- v
	}()
	select {
	case v := <-done:
		t.Fatalf("U read %v before T, ordered before it, finished", v)
	case <-time.After(20 * time.Millisecond):
	}
	p0.finish(tx, []Key{0}, nil) // T aborts: a no-op entry
	if v := <-done; v[0] != 5 {
		t.Fatalf("U read %d after T aborted, want the initial 5", v[0])
	}
}

// TestReadAtChainPosition pins the version rule on one key's chain: a
// transaction reads the nearest write before its own entry, waits for a
// pending writer before it, and ignores writes after it.
func TestReadAtChainPosition(t *testing.T) {
	p := newPartition(0, 1, 100, nil)
	// genesis(100), w1 writer, r2 reader, w3 writer — as phase one would append.
	p.chains[0] = append(p.chains[0], entry{ev: 1, writer: true}, entry{ev: 2}, entry{ev: 3, writer: true})

	if _, ok := p.tryRead(2, []Key{0}); ok {
		t.Fatal("reader did not wait for the pending writer before it")
	}
	if v, ok := p.tryRead(1, []Key{0}); !ok || v[0] != 100 {
		t.Fatalf("first writer read %v %v, want 100", v, ok)
	}
	// A reader is no writer: w3 waits only for w1.
	p.finish(1, []Key{0}, []int64{70})
	if v, ok := p.tryRead(3, []Key{0}); !ok || v[0] != 70 {
		t.Fatalf("w3 read %v %v, want 70", v, ok)
	}
	p.finish(3, []Key{0}, []int64{40})
	// r2 reads after w3 wrote, but w3 is after it in Kronos order.
	if v, ok := p.tryRead(2, []Key{0}); !ok || v[0] != 70 {
		t.Fatalf("reader read %v %v, want 70 (the version before it)", v, ok)
	}
	if n := len(p.chains[0]); n != 3 {
		t.Fatalf("chain kept %d versions while r2 is pending, want 3 (w1, r2, w3)", n)
	}
	p.finish(2, []Key{0}, nil)
	if n := len(p.chains[0]); n != 1 || p.chains[0][0].val != 40 {
		t.Fatalf("chain after everything finished: %+v, want only w3's 40", p.chains[0])
	}
}

// TestReadWaitHonoursContext: a read stuck behind a pending writer returns
// when its context ends.
func TestReadWaitHonoursContext(t *testing.T) {
	p := newPartition(0, 1, 0, nil)
	p.chains[0] = append(p.chains[0], entry{ev: 1, writer: true}, entry{ev: 2, writer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.read(ctx, 2, []Key{0}); err != context.DeadlineExceeded {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
}
