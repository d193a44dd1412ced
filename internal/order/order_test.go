package order

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/vclock"
)

func st(owner uint32, c ...uint64) vclock.Stamp {
	return vclock.Stamp{Clock: vclock.Clock{Epoch: 1, Counters: c}, Owner: owner}
}

func TestResolverPrefersAndCaches(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(l, 2)
	a, b, c := st(0, 1, 0), st(1, 0, 1), st(0, 2, 0)
	if before, err := r.Prefer(ctx, a, c); err != nil || !before || r.Calls != 0 {
		t.Fatalf("vector clocks decide a<c without Kronos: %v %v calls=%d", before, err, r.Calls)
	}
	if before, err := r.Prefer(ctx, b, a); err != nil || !before {
		t.Fatalf("prefer b→a: %v %v", before, err)
	}
	// The answer is final: asking the other way returns it from the cache.
	if before, err := r.Prefer(ctx, a, b); err != nil || before || r.Calls != 1 {
		t.Fatalf("a before b after b→a was established: %v %v calls=%d", before, err, r.Calls)
	}
	// Chains make it transitive in Kronos: c follows a (same gatekeeper), so
	// b → a → c, and a prefer c → b is reversed.
	if before, err := r.Prefer(ctx, c, b); err != nil || before {
		t.Fatalf("c before b, against b → a → c: %v %v", before, err)
	}
	if o, _ := l.Query(b, c); o != kronos.Before {
		t.Fatalf("b vs c: %v", o)
	}
	// A must against the established order is stale; one along it is fine.
	if err := Must(ctx, l, []vclock.Stamp{a}, b); !errors.Is(err, ErrStale) {
		t.Fatalf("must a→b against b→a: %v", err)
	}
	if err := Must(ctx, l, []vclock.Stamp{b, a}, st(1, 3, 2)); err != nil {
		t.Fatalf("must along the order: %v", err)
	}
	if err := Must(ctx, l, []vclock.Stamp{c}, a); !errors.Is(err, ErrStale) {
		t.Fatalf("must c→a against vector clocks: %v", err)
	}
}
