package postgres

import (
	"context"
	"testing"
	"time"
)

// TestStalledLockHolderReleased: a committer session of another process
// that stops while holding the advisory lock — idle between transactions,
// or idle inside its commit transaction — is ended by the server after
// StallTimeout, and this store's commit then goes through. Without the
// settings the commit would wait for the lock until its own deadline.
func TestStalledLockHolderReleased(t *testing.T) {
	for _, inTxn := range []bool{false, true} {
		name := "idle"
		if inTxn {
			name = "in-transaction"
		}
		t.Run(name, func(t *testing.T) {
			const stall = 2 * time.Second
			s := open(t, func(o *Options) { o.StallTimeout = stall })
			// The frozen holder: a session set up as a committer's is, which
			// takes the lock and then never sends another statement.
			holder := rawConn(t)
			ctx := context.Background()
			if err := setStallTimeout(ctx, holder, stall, true); err != nil {
				t.Fatal(err)
			}
			if inTxn {
				mustExec(t, holder, `BEGIN`)
			}
			mustExec(t, holder, `SELECT pg_advisory_lock($1)`, s.lockKey)
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			tx, err := s.Begin()
			if err != nil {
				t.Fatal(err)
			}
			tx.Set([]byte("k"), []byte("v"))
			if err := tx.Commit(cctx, nil); err != nil {
				t.Fatalf("commit behind a stalled lock holder: %v", err)
			}
			if got := readNow(t, s, "k"); got != "v" {
				t.Fatalf("k = %q after the commit", got)
			}
			// The server ended the holder's session.
			if _, err := holder.Exec(ctx, `SELECT 1`); err == nil {
				t.Fatal("the stalled holder's session is still alive")
			}
		})
	}
}

// TestStallTimeoutOffWaits: with StallTimeout 0 the server keeps an idle
// holder's session, so a commit behind it waits out its deadline (the
// behaviour the setting exists to bound).
func TestStallTimeoutOffWaits(t *testing.T) {
	s := open(t, func(o *Options) { o.StallTimeout = 0 })
	holder := rawConn(t)
	mustExec(t, holder, `SELECT pg_advisory_lock($1)`, s.lockKey)
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	tx.Set([]byte("k"), []byte("v"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := tx.Commit(ctx, nil); err == nil {
		t.Fatal("commit went through while another session held the lock")
	}
	if _, err := holder.Exec(context.Background(), `SELECT 1`); err != nil {
		t.Fatalf("the holder's session was ended without StallTimeout: %v", err)
	}
}

// TestIdleCommitterReplaced: the server ends a committer session idle for
// StallTimeout; the next commit goes through on a fresh session.
func TestIdleCommitterReplaced(t *testing.T) {
	const stall = time.Second
	s := open(t, func(o *Options) { o.StallTimeout = stall })
	mustCommit(t, s, "a", "1")
	before := s.Counters()
	time.Sleep(stall + stall/2) // the server has ended the idle session by now
	mustCommit(t, s, "b", "2")
	if after := s.Counters(); after.Reconnects != before.Reconnects+1 {
		t.Fatalf("reconnects %d → %d, want one more (the server ended the idle session)", before.Reconnects, after.Reconnects)
	}
	if a, b := readNow(t, s, "a"), readNow(t, s, "b"); a != "1" || b != "2" {
		t.Fatalf("a=%q b=%q", a, b)
	}
}
