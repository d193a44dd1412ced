package api

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// BenchmarkGRPCMutateCommitNow: one JSON node per request, a whole
// transaction each (prepare, commit), through gRPC over an in-memory
// connection.
func BenchmarkGRPCMutateCommitNow(b *testing.B) {
	f := newFixture(b, accountsSchema, nil)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := f.cli.Query(ctx, &pb.Request{CommitNow: true,
			Mutations: []*pb.Mutation{{SetJson: []byte(fmt.Sprintf(`{"name":"n%d","balance":%d}`, i, i))}}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGRPCTxnQueryMutateCommit: Dgraph's read-modify-write
// transaction: a query, a mutation, CommitOrAbort (three round trips).
func BenchmarkGRPCTxnQueryMutateCommit(b *testing.B) {
	f := newFixture(b, accountsSchema, nil)
	ctx := context.Background()
	uid := f.setJSON(ctx, b, `{"uid":"_:a","name":"acct","balance":0}`)["a"]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := f.cli.Query(ctx, &pb.Request{Query: `{ q(func: eq(name, "acct")) { uid balance } }`})
		if err != nil {
			b.Fatal(err)
		}
		_, err = f.cli.Query(ctx, &pb.Request{StartTs: r.Txn.StartTs,
			Mutations: []*pb.Mutation{{SetNquads: []byte(fmt.Sprintf("<%s> <balance> \"%d\" .", uid, i))}}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: r.Txn.StartTs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGRPCReadOnlyQuery: a read-only eq query with a nested field.
func BenchmarkGRPCReadOnlyQuery(b *testing.B) {
	f := newFixture(b, accountsSchema, nil)
	ctx := context.Background()
	f.setJSON(ctx, b, `{"name":"root","friend":[{"name":"f1"},{"name":"f2"},{"name":"f3"}]}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.cli.Query(ctx, &pb.Request{ReadOnly: true,
			Query: `{ q(func: eq(name, "root")) { name friend { name } } }`}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGRPCReadOnlyQueryNamespace is BenchmarkGRPCReadOnlyQuery with
// ACL on, in the galaxy and in namespace 1 (its reads renamed by
// dgraph.NamespaceView, plus a read of its registry vertex per request).
func BenchmarkGRPCReadOnlyQueryNamespace(b *testing.B) {
	f := newFixture(b, "", withACL)
	galaxy := f.benchLogin(b, 0)
	if _, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{}); err != nil {
		b.Fatal(err)
	}
	for _, ns := range []uint64{0, 1} {
		ctx := f.benchLogin(b, ns)
		if _, err := f.cli.Alter(ctx, &pb.Operation{Schema: accountsSchema}); err != nil {
			b.Fatal(err)
		}
		f.setJSON(ctx, b, `{"name":"root","friend":[{"name":"f1"},{"name":"f2"},{"name":"f3"}]}`)
		b.Run(fmt.Sprintf("ns%d", ns), func(b *testing.B) {
			for b.Loop() {
				r, err := f.cli.Query(ctx, &pb.Request{ReadOnly: true,
					Query: `{ q(func: eq(name, "root")) { name friend { name } } }`})
				if err != nil || len(r.Json) < 40 {
					b.Fatal(err, string(r.GetJson()))
				}
			}
		})
	}
}

func (f *fixture) benchLogin(b *testing.B, ns uint64) context.Context {
	resp, err := f.cli.Login(context.Background(), &pb.LoginRequest{Userid: Groot, Password: "password", Namespace: ns})
	if err != nil {
		b.Fatal(err)
	}
	jwt := &pb.Jwt{}
	if err := protoUnmarshal(resp.Json, jwt); err != nil {
		b.Fatal(err)
	}
	return withToken(context.Background(), jwt.AccessJwt)
}
