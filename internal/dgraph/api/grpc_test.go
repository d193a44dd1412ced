package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

const accountsSchema = `
name: string @index(exact) .
balance: int .
friend: [uid] @reverse .
`

func TestGRPCMutateCommitNowThenQuery(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	uids := f.setJSON(ctx, t, `{"uid":"_:alice","name":"Alice","balance":10,"friend":{"uid":"_:bob","name":"Bob"}}`)
	if uids["alice"] == "" || uids["bob"] == "" || uids["alice"] == uids["bob"] {
		t.Fatalf("uids %v: want distinct UIDs for alice and bob", uids)
	}
	got := f.query(ctx, t, `query q($n: string) { q(func: eq(name, $n)) { uid name balance friend { name } } }`,
		map[string]string{"$n": "Alice"})
	list := got["q"].([]any)
	if len(list) != 1 {
		t.Fatalf("got %v, want one node", got)
	}
	alice := list[0].(map[string]any)
	if alice["uid"] != uids["alice"] || alice["balance"] != float64(10) {
		t.Fatalf("got %v, want uid %s and balance 10", alice, uids["alice"])
	}
	if fr := names(alice, "friend"); !slices.Equal(fr, []string{"Bob"}) {
		t.Fatalf("friends %v, want [Bob]", fr)
	}
	// A read-only response still carries a start_ts (pydgraph merges it).
	resp, err := f.cli.Query(ctx, &pb.Request{Query: `{ q(func: eq(name, "Bob")) { name } }`})
	if err != nil || resp.Txn.GetStartTs() == 0 {
		t.Fatalf("query: %v, txn %v: want a start_ts", err, resp.GetTxn())
	}
}

func TestGRPCEmptyAndBadRequests(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	_, err := f.cli.Query(ctx, &pb.Request{})
	wantCode(t, err, codes.InvalidArgument, "empty request")
	_, err = f.cli.Query(ctx, &pb.Request{Query: `{ q(func: has(name)) { name } }`, BestEffort: true})
	wantCode(t, err, codes.InvalidArgument, "best effort")
	_, err = f.cli.Query(ctx, &pb.Request{ReadOnly: true, Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "x" .`)}}})
	wantCode(t, err, codes.InvalidArgument, "Readonly")
	_, err = f.cli.Query(ctx, &pb.Request{CommitNow: true, Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <balance> "ten" .`)}}})
	wantCode(t, err, codes.InvalidArgument, "balance")
	_, err = f.cli.CommitOrAbort(ctx, &pb.TxnContext{})
	wantCode(t, err, codes.InvalidArgument, "StartTs cannot be zero")
	_, err = f.cli.Query(ctx, &pb.Request{Query: `{ q(func: ) { name } }`})
	wantCode(t, err, codes.InvalidArgument, "dql")
	_, err = f.cli.Query(ctx, &pb.Request{Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <balance> "ten" .`)}}})
	wantCode(t, err, codes.InvalidArgument, "balance")
	if n := f.s.OpenTxns(); n != 0 {
		t.Fatalf("failed first requests left %d transactions behind", n)
	}
}

// A transaction's mutations are buffered: invisible to others until
// CommitOrAbort, and each request's blank nodes are its own.
func TestTxnBuffersUntilCommit(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	r1, err := f.cli.Query(ctx, &pb.Request{Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "Ann" .`)}}})
	if err != nil {
		t.Fatal(err)
	}
	tc := r1.Txn
	if tc.StartTs == 0 || len(tc.Keys) == 0 || !slices.Contains(tc.Preds, "0-name") || tc.CommitTs != 0 {
		t.Fatalf("txn context %v: want start_ts, keys, preds [0-name], no commit_ts", tc)
	}
	r2, err := f.cli.Query(ctx, &pb.Request{StartTs: tc.StartTs, Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "Ann" .`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Txn.StartTs != tc.StartTs || r2.Uids["a"] == r1.Uids["a"] {
		t.Fatalf("second request: start_ts %d (want %d), uid %s (want other than %s)", r2.Txn.StartTs, tc.StartTs, r2.Uids["a"], r1.Uids["a"])
	}
	q := `{ q(func: eq(name, "Ann")) { uid } }`
	if got := f.query(ctx, t, q, nil); len(got["q"].([]any)) != 0 {
		t.Fatalf("before commit another reader sees %v", got)
	}
	out, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: tc.StartTs})
	if err != nil || out.CommitTs <= tc.StartTs {
		t.Fatalf("commit: %v %v: want commit_ts > start_ts", out, err)
	}
	got := f.query(ctx, t, q, nil)
	var seen []string
	for _, e := range got["q"].([]any) {
		seen = append(seen, e.(map[string]any)["uid"].(string))
	}
	slices.Sort(seen)
	want := []string{r1.Uids["a"], r2.Uids["a"]}
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("after commit: %v, want %v", seen, want)
	}
	// The transaction is over: committing again aborts.
	_, err = f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: tc.StartTs})
	wantCode(t, err, codes.Aborted, "Please retry")
}

func TestTxnAbortDiscards(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	r, err := f.cli.Query(ctx, &pb.Request{Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "Gone" .`)}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: r.Txn.StartTs, Aborted: true})
	if err != nil || !out.Aborted {
		t.Fatalf("abort: %v %v: want aborted without error", out, err)
	}
	if n := f.s.OpenTxns(); n != 0 {
		t.Fatalf("%d transactions remembered after abort, want 0", n)
	}
	if got := f.query(ctx, t, `{ q(func: eq(name, "Gone")) { uid } }`, nil); len(got["q"].([]any)) != 0 {
		t.Fatalf("aborted mutation visible: %v", got)
	}
}

// Two transactions read the same account and write it: the second to
// commit aborts with ABORTED and Dgraph's "Please retry" (pydgraph's
// AbortedError), and its write is lost.
func TestTxnConflictAborts(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	uid := f.setJSON(ctx, t, `{"uid":"_:a","name":"acct","balance":100}`)["a"]
	q := `{ q(func: eq(name, "acct")) { uid balance } }`
	begin := func(newBalance string) uint64 {
		r, err := f.cli.Query(ctx, &pb.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.cli.Query(ctx, &pb.Request{StartTs: r.Txn.StartTs,
			Mutations: []*pb.Mutation{{SetNquads: []byte("<" + uid + "> <balance> \"" + newBalance + "\" .")}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Txn.StartTs
	}
	t1, t2 := begin("90"), begin("80")
	if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: t2}); err != nil {
		t.Fatalf("first commit: %v", err)
	}
	_, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: t1})
	wantCode(t, err, codes.Aborted, "Transaction has been aborted. Please retry")
	got := f.query(ctx, t, q, nil)
	if b := got["q"].([]any)[0].(map[string]any)["balance"]; b != float64(80) {
		t.Fatalf("balance %v, want 80 (the committed transaction's)", b)
	}
}

// Write skew: each transaction reads both accounts and moves money out of
// a different one, keeping the sum positive by its own reads. Snapshot
// isolation (Dgraph) commits both; Weft validates reads, so one aborts.
func TestTxnWriteSkewAborts(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	uids := f.setJSON(ctx, t, `[{"uid":"_:x","name":"x","balance":50},{"uid":"_:y","name":"y","balance":50}]`)
	q := `{ q(func: eq(name, ["x", "y"])) { uid balance } }`
	begin := func(acct string) uint64 {
		r, err := f.cli.Query(ctx, &pb.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(decode(t, r.Json)["q"].([]any)); n != 2 {
			t.Fatalf("read %d accounts, want 2", n)
		}
		_, err = f.cli.Query(ctx, &pb.Request{StartTs: r.Txn.StartTs,
			Mutations: []*pb.Mutation{{SetNquads: []byte("<" + uids[acct] + "> <balance> \"-40\" .")}}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Txn.StartTs
	}
	tx, ty := begin("x"), begin("y")
	if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: tx}); err != nil {
		t.Fatal(err)
	}
	_, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: ty})
	wantCode(t, err, codes.Aborted, "Please retry")
}

// Upsert blocks through RunDQL: the second run finds the node and does not
// create another.
func TestRunDQLUpsert(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	up := `upsert {
	  query { v as var(func: eq(name, "Zed")) }
	  mutation @if(eq(len(v), 0)) { set {
	    _:z <name> "Zed" .
	    _:z <balance> "1" .
	  } }
	  mutation @if(eq(len(v), 1)) { set { uid(v) <balance> "2" . } }
	}`
	for i := 0; i < 2; i++ {
		if _, err := f.cli.RunDQL(ctx, &pb.RunDQLRequest{DqlQuery: up}); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	resp, err := f.cli.RunDQL(ctx, &pb.RunDQLRequest{DqlQuery: `query q($n: string) { q(func: eq(name, $n)) { balance } }`,
		Vars: map[string]string{"$n": "Zed"}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	list := decode(t, resp.Json)["q"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["balance"] != float64(2) {
		t.Fatalf("got %s, want one Zed with balance 2", resp.Json)
	}
}

// An upsert as a Request: query plus a conditional mutation (pydgraph's
// txn.do_request), in a transaction committed later.
func TestRequestUpsertInTxn(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	req := &pb.Request{Query: `{ v as var(func: eq(name, "Yan")) }`,
		Mutations: []*pb.Mutation{{Cond: `@if(eq(len(v), 0))`, SetNquads: []byte(`_:n <name> "Yan" .`)}}}
	r, err := f.cli.Query(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Uids["n"] == "" && r.Uids["uid(v)"] == "" {
		t.Fatalf("uids %v: want the new node's uid", r.Uids)
	}
	if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: r.Txn.StartTs}); err != nil {
		t.Fatal(err)
	}
	req.CommitNow = true
	if _, err := f.cli.Query(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := f.query(ctx, t, `{ q(func: eq(name, "Yan")) { uid } }`, nil)
	if n := len(got["q"].([]any)); n != 1 {
		t.Fatalf("%d nodes named Yan, want 1", n)
	}
}

func TestAlterDropAttrAndCheckVersion(t *testing.T) {
	f := newFixture(t, "", nil)
	ctx := context.Background()
	if _, err := f.cli.Alter(ctx, &pb.Operation{Schema: `nick: string @index(exact) .`}); err != nil {
		t.Fatal(err)
	}
	f.setJSON(ctx, t, `{"nick":"zz"}`)
	if got := f.query(ctx, t, `{ q(func: eq(nick, "zz")) { nick } }`, nil); len(got["q"].([]any)) != 1 {
		t.Fatalf("got %v, want the node", got)
	}
	if _, err := f.cli.Alter(ctx, &pb.Operation{DropOp: pb.Operation_ATTR, DropValue: "nick"}); err != nil {
		t.Fatal(err)
	}
	sch, err := f.g.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sch.Predicate("nick"); ok {
		t.Fatal("nick still in the schema after drop_attr")
	}
	_, err = f.cli.Alter(ctx, &pb.Operation{})
	wantCode(t, err, codes.InvalidArgument, "empty")
	v, err := f.cli.CheckVersion(ctx, &pb.Check{})
	if err != nil || v.Tag != DefaultConfig().Version {
		t.Fatalf("version %v %v", v, err)
	}
}

func TestAllocateIDs(t *testing.T) {
	f := newFixture(t, "", nil)
	ctx := context.Background()
	a, err := f.cli.AllocateIDs(ctx, &pb.AllocateIDsRequest{HowMany: 10, LeaseType: pb.LeaseType_UID})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.cli.AllocateIDs(ctx, &pb.AllocateIDsRequest{HowMany: 5, LeaseType: pb.LeaseType_UID})
	if err != nil {
		t.Fatal(err)
	}
	if a.End-a.Start+1 != 10 || b.End-b.Start+1 != 5 || b.Start <= a.End {
		t.Fatalf("leases %v and %v: want 10 then 5 ids, disjoint, end inclusive", a, b)
	}
	_, err = f.cli.AllocateIDs(ctx, &pb.AllocateIDsRequest{HowMany: 1, LeaseType: pb.LeaseType_NS})
	wantCode(t, err, codes.Unimplemented, "namespace")
}

func TestAlterDropDataAndAll(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	f.setJSON(ctx, t, `{"name":"dropme","balance":3}`)
	q := `{ q(func: eq(name, "dropme")) { name } }`
	if _, err := f.cli.Alter(ctx, &pb.Operation{DropOp: pb.Operation_DATA}); err != nil {
		t.Fatal(err)
	}
	if got := f.query(ctx, t, q, nil); len(names(got, "q")) != 0 {
		t.Fatalf("after DROP DATA: %v", got)
	}
	sch, err := f.g.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if P, ok := sch.Predicate("name"); !ok || len(P.Index) == 0 {
		t.Fatalf("DROP DATA lost the schema of name: %+v %v", P, ok)
	}
	f.setJSON(ctx, t, `{"name":"dropme"}`)
	if _, err := f.cli.Alter(ctx, &pb.Operation{DropAll: true}); err != nil {
		t.Fatal(err)
	}
	if sch, err = f.g.Schema(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := sch.Predicate("name"); ok {
		t.Fatal("DROP ALL kept the predicate name")
	}
	_, err = f.cli.Query(ctx, &pb.Request{Query: `{ q(func: eq(name, "dropme")) { name } }`})
	if err == nil {
		if got := f.query(ctx, t, q, nil); len(names(got, "q")) != 0 {
			t.Fatalf("after DROP ALL: %v", got)
		}
	}
}

// Queries inside a transaction see its own buffered mutations — values,
// index entries, reverse edges, new predicates — and nobody else does.
func TestTxnSeesOwnWrites(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	ctx := context.Background()
	r, err := f.cli.Query(ctx, &pb.Request{Mutations: []*pb.Mutation{{
		SetJson: []byte(`{"uid":"_:a","name":"Own","balance":5,"nick":"o","friend":{"uid":"_:b","name":"Pal"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	start := r.Txn.StartTs
	q := `{ q(func: eq(name, "Own")) { name balance nick friend { name ~friend { name } } } }`
	in, err := f.cli.Query(ctx, &pb.Request{StartTs: start, Query: q})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"q":[{"name":"Own","balance":5,"nick":"o","friend":[{"name":"Pal","~friend":[{"name":"Own"}]}]}]}`
	if !jsonEqual(t, in.Json, want) {
		t.Fatalf("inside the transaction: %s, want %s", in.Json, want)
	}
	if got := f.query(ctx, t, q, nil); len(got["q"].([]any)) != 0 {
		t.Fatalf("outside the transaction: %v", got)
	}
	// An upsert in the same transaction finds the node it created.
	up := &pb.Request{StartTs: start, Query: `{ v as var(func: eq(name, "Own")) }`,
		Mutations: []*pb.Mutation{{Cond: `@if(eq(len(v), 0))`, SetNquads: []byte(`_:n <name> "Own" .`)}}}
	if _, err := f.cli.Query(ctx, up); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: start}); err != nil {
		t.Fatal(err)
	}
	if got := f.query(ctx, t, `{ q(func: eq(name, "Own")) { uid } }`, nil); len(got["q"].([]any)) != 1 {
		t.Fatalf("after commit: %v, want one node named Own", got)
	}
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}

// Jepsen's upsert workload: concurrent upserts of one key (each a whole
// transaction, retried by the server on conflicts) create one node.
func TestConcurrentUpsertsCreateOne(t *testing.T) {
	f := newFixture(t, "email: string @index(exact) .\nhits: [int] .", nil)
	ctx := context.Background()
	const workers = 6
	errc := make(chan error, workers)
	for w := range workers {
		go func() {
			_, err := f.cli.Query(ctx, &pb.Request{CommitNow: true,
				Query: `{ v as var(func: eq(email, "k@x")) }`,
				Mutations: []*pb.Mutation{
					{Cond: `@if(eq(len(v), 0))`, SetNquads: []byte(fmt.Sprintf("_:n <email> \"k@x\" .\n_:n <hits> \"%d\" .", w))},
					{Cond: `@if(eq(len(v), 1))`, SetNquads: []byte(fmt.Sprintf("uid(v) <hits> \"%d\" .", w))},
				}})
			errc <- err
		}()
	}
	for range workers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	got := f.query(ctx, t, `{ q(func: eq(email, "k@x")) { uid hits } }`, nil)
	list := got["q"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d nodes for one key: %v", len(list), got)
	}
	if hits := list[0].(map[string]any)["hits"].([]any); len(hits) != workers {
		t.Fatalf("hits %v: want one per upsert (%d)", hits, workers)
	}
}
