package api

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// The table of open transactions is bounded: read-only ones are dropped
// to make room, transactions with buffered mutations are not.
func TestTxnTableBounded(t *testing.T) {
	f := newFixture(t, accountsSchema, func(c *Config) { c.TxnsMax = 2 })
	ctx := context.Background()
	mutate := func(start uint64) (*pb.Response, error) {
		return f.cli.Query(ctx, &pb.Request{StartTs: start, Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "n" .`)}}})
	}
	ro, err := f.cli.Query(ctx, &pb.Request{Query: `{ q(func: has(name)) { uid } }`, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := mutate(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mutate(0) // evicts the read-only transaction
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.cli.Query(ctx, &pb.Request{StartTs: ro.Txn.StartTs, Query: `{ q(func: has(name)) { uid } }`, ReadOnly: true})
	wantCode(t, err, codes.Aborted, "unknown, finished or expired")
	_, err = mutate(0)
	wantCode(t, err, codes.ResourceExhausted, "429 Too Many Requests")
	for _, r := range []*pb.Response{a, b} {
		if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: r.Txn.StartTs}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mutate(0); err != nil {
		t.Fatalf("after commits: %v", err)
	}
}

// An idle transaction is forgotten: its next request aborts.
func TestTxnIdleExpires(t *testing.T) {
	f := newFixture(t, accountsSchema, func(c *Config) { c.TxnIdle = time.Minute })
	ctx := context.Background()
	r, err := f.cli.Query(ctx, &pb.Request{Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "idle" .`)}}})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.advance(30 * time.Second)
	if _, err := f.cli.Query(ctx, &pb.Request{StartTs: r.Txn.StartTs, Query: `{ q(func: has(name)) { uid } }`}); err != nil {
		t.Fatalf("within the idle time: %v", err)
	}
	f.clock.advance(61 * time.Second)
	_, err = f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: r.Txn.StartTs})
	wantCode(t, err, codes.Aborted, "Please retry")
	if got := f.query(ctx, t, `{ q(func: eq(name, "idle")) { uid } }`, nil); len(got["q"].([]any)) != 0 {
		t.Fatalf("expired transaction's write visible: %v", got)
	}
}
