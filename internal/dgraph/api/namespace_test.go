package api

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/weft-db/weft/internal/dgraph"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

const tenantSchema = `
name: string @index(exact) .
email: string @index(exact) @upsert .
friend: [uid] @reverse @count .
type Person { name email friend }
`

// loginNS logs user into namespace ns and returns a context carrying its
// access token.
func (f *fixture) loginNS(t *testing.T, user, password string, ns uint64) context.Context {
	t.Helper()
	resp, err := f.cli.Login(context.Background(), &pb.LoginRequest{Userid: user, Password: password, Namespace: ns})
	if err != nil {
		t.Fatalf("login %s into %d: %v", user, ns, err)
	}
	jwt := &pb.Jwt{}
	if err := protoUnmarshal(resp.Json, jwt); err != nil {
		t.Fatal(err)
	}
	return withToken(context.Background(), jwt.AccessJwt)
}

func (f *fixture) mustAlter(ctx context.Context, t *testing.T, op *pb.Operation) {
	t.Helper()
	if _, err := f.cli.Alter(ctx, op); err != nil {
		t.Fatalf("alter %v: %v", op, err)
	}
}

// fill writes the same shape of data in a namespace, tagged by who.
func (f *fixture) fill(ctx context.Context, t *testing.T, who string) {
	t.Helper()
	f.setJSON(ctx, t, fmt.Sprintf(`{"uid":"_:a","name":"alice-%[1]s","email":"a@x","dgraph.type":"Person",
		"friend":[{"uid":"_:b","name":"bob-%[1]s","dgraph.type":"Person"}]}`, who))
}

// sortedNames is names() sorted.
func sortedNames(m map[string]any, block string) []string {
	n := names(m, block)
	slices.Sort(n)
	return n
}

// TestNamespacesIsolateQueriesAndSchema: three namespaces (0 and two made
// by the galaxy's groot) with the same predicates and types hold different
// data; queries (eq, has, type, expand(_all_), reverse edges, counts),
// schema{} and upserts see only their own namespace's.
func TestNamespacesIsolateQueriesAndSchema(t *testing.T) {
	for _, placement := range []string{dgraph.PlacementVertex, dgraph.PlacementPredicate} {
		t.Run(placement, func(t *testing.T) {
			testNamespacesIsolate(t, newFixtureWith(t, "", withACL, func(c *dgraph.Config) { c.Placement = placement }))
		})
	}
}

func testNamespacesIsolate(t *testing.T, f *fixture) {
	galaxy := f.loginNS(t, Groot, "password", 0)
	r1, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Namespace != 1 || r2.Namespace != 2 {
		t.Fatalf("namespace ids %d, %d; want 1, 2", r1.Namespace, r2.Namespace)
	}
	ctxs := []context.Context{galaxy, f.loginNS(t, Groot, "password", 1), f.loginNS(t, Groot, "password", 2)}
	whos := []string{"zero", "one", "two"}
	f.mustAlter(ctxs[0], t, &pb.Operation{Schema: tenantSchema})
	f.mustAlter(ctxs[1], t, &pb.Operation{Schema: tenantSchema})
	f.mustAlter(ctxs[2], t, &pb.Operation{Schema: tenantSchema + "only2: int .\n"})
	for i, ctx := range ctxs {
		f.fill(ctx, t, whos[i])
	}
	for i, ctx := range ctxs {
		who := whos[i]
		got := f.query(ctx, t, `{
			eq(func: eq(name, "alice-`+who+`")) { name friend { name ~friend { name } } count(friend) }
			other(func: eq(name, "alice-one")) { name }
			has(func: has(name)) { name }
			typ(func: type(Person)) { name }
			all(func: eq(email, "a@x")) { expand(_all_) }
		}`, nil)
		want := []string{"alice-" + who, "bob-" + who}
		if n := sortedNames(got, "has"); !slices.Equal(n, want) {
			t.Errorf("ns %d: has(name) = %v, want %v", i, n, want)
		}
		if n := sortedNames(got, "typ"); !slices.Equal(n, want) {
			t.Errorf("ns %d: type(Person) = %v, want %v", i, n, want)
		}
		if n := names(got, "other"); (i == 1) != (len(n) == 1) {
			t.Errorf("ns %d: eq(name, alice-one) = %v", i, n)
		}
		b, _ := json.Marshal(got["eq"])
		wantEq := fmt.Sprintf(`[{"count(friend)":1,"friend":[{"name":"bob-%[1]s","~friend":[{"name":"alice-%[1]s"}]}],"name":"alice-%[1]s"}]`, who)
		if string(b) != wantEq {
			t.Errorf("ns %d: eq block %s, want %s", i, b, wantEq)
		}
		all, _ := got["all"].([]any)
		if len(all) != 1 || all[0].(map[string]any)["name"] != "alice-"+who {
			t.Errorf("ns %d: expand(_all_) = %v", i, got["all"])
		}
		sch := f.query(ctx, t, `schema(pred: [name, only2]) { type }`, nil)
		preds, _ := sch["schema"].([]any)
		if want := map[bool]int{true: 2, false: 1}[i == 2]; len(preds) != want {
			t.Errorf("ns %d: schema(pred: [name, only2]) = %v, want %d predicates", i, sch, want)
		}
	}
	// An upsert keyed on email finds only its namespace's node.
	up := `upsert { query { v as var(func: eq(email, "a@x")) }
		mutation @if(eq(len(v), 1)) { set { uid(v) <name> "alice-upserted" . } } }`
	if _, err := f.cli.Query(ctxs[1], &pb.Request{Query: "", CommitNow: true, Mutations: nil}); err == nil {
		t.Fatal("an empty request succeeded")
	}
	if _, err := f.cli.RunDQL(ctxs[1], &pb.RunDQLRequest{DqlQuery: up}); err != nil {
		t.Fatal(err)
	}
	for i, ctx := range ctxs {
		got := names(f.query(ctx, t, `{ q(func: eq(email, "a@x")) { name } }`, nil), "q")
		want := "alice-" + whos[i]
		if i == 1 {
			want = "alice-upserted"
		}
		if !slices.Equal(got, []string{want}) {
			t.Errorf("ns %d after ns 1's upsert: %v, want [%s]", i, got, want)
		}
	}
	// drop_all in namespace 2 drops only its data.
	f.mustAlter(ctxs[2], t, &pb.Operation{DropAll: true})
	for i, ctx := range ctxs {
		got := names(f.query(ctx, t, `{ q(func: has(email)) { name } }`, nil), "q")
		if (i == 2) != (len(got) == 0) {
			t.Errorf("ns %d after ns 2's drop_all: %v", i, got)
		}
	}
	sch := f.query(ctxs[2], t, `schema(pred: [only2]) { type }`, nil)
	if preds, _ := sch["schema"].([]any); len(preds) != 0 {
		t.Errorf("ns 2's schema after its drop_all: %v", sch)
	}
	// drop_all by the galaxy's guardian drops every namespace's data.
	f.mustAlter(ctxs[0], t, &pb.Operation{DropAll: true})
	for i, ctx := range ctxs {
		if got := names(f.query(ctx, t, `{ q(func: has(email)) { name } }`, nil), "q"); len(got) != 0 {
			t.Errorf("ns %d after the galaxy's drop_all: %v", i, got)
		}
	}
}

// TestNamespaceTransactionsAndPreds: a transaction spanning requests acts
// in its namespace, reports "<ns>-<pred>" and belongs to its namespace.
func TestNamespaceTransactionsAndPreds(t *testing.T) {
	f := newFixture(t, "", withACL)
	galaxy := f.loginNS(t, Groot, "password", 0)
	if _, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{}); err != nil {
		t.Fatal(err)
	}
	ns1 := f.loginNS(t, Groot, "password", 1)
	f.mustAlter(ns1, t, &pb.Operation{Schema: tenantSchema})
	resp, err := f.cli.Query(ns1, &pb.Request{Mutations: []*pb.Mutation{{SetJson: []byte(`{"name":"t1","email":"t@x"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(resp.Txn.Preds, "1-name") {
		t.Fatalf("preds %v, want 1-name", resp.Txn.Preds)
	}
	// NQuads naming another namespace are refused.
	_, err = f.cli.Query(ns1, &pb.Request{CommitNow: true, Mutations: []*pb.Mutation{{Set: []*pb.NQuad{
		{Subject: "_:x", Predicate: "name", ObjectValue: &pb.Value{Val: &pb.Value_StrVal{StrVal: "n"}}, Namespace: 2}}}}})
	wantCode(t, err, codes.Unimplemented, "NQuad namespace 2")
	// The transaction sees its own write, in its namespace.
	own, err := f.cli.Query(ns1, &pb.Request{StartTs: resp.Txn.StartTs, Hash: resp.Txn.Hash,
		Query: `{ q(func: eq(name, "t1")) { name } }`})
	if err != nil || fmt.Sprint(decode(t, own.Json)) != "map[q:[map[name:t1]]]" {
		t.Fatalf("own write in namespace 1: %v, %v", own, err)
	}
	// The galaxy's groot cannot commit namespace 1's transaction.
	_, err = f.cli.CommitOrAbort(galaxy, resp.Txn)
	wantCode(t, err, codes.PermissionDenied, "another user")
	in := f.query(ns1, t, `{ q(func: eq(name, "t1")) { name } }`, nil)
	if len(names(in, "q")) != 0 {
		t.Fatalf("uncommitted data visible: %v", in)
	}
	if _, err := f.cli.CommitOrAbort(ns1, resp.Txn); err != nil {
		t.Fatal(err)
	}
	if got := names(f.query(ns1, t, `{ q(func: eq(name, "t1")) { name } }`, nil), "q"); len(got) != 1 {
		t.Fatalf("after commit: %v", got)
	}
	f.mustAlter(galaxy, t, &pb.Operation{Schema: tenantSchema})
	if got := names(f.query(galaxy, t, `{ q(func: eq(name, "t1")) { name } }`, nil), "q"); len(got) != 0 {
		t.Fatalf("namespace 0 sees namespace 1's data: %v", got)
	}
	// Namespace 1's node, named by its UID in namespace 0, shows nothing;
	// writing to it there keeps the two namespaces' values apart.
	t1 := f.query(ns1, t, `{ q(func: eq(name, "t1")) { uid } }`, nil)["q"].([]any)[0].(map[string]any)["uid"].(string)
	if got := f.query(galaxy, t, `{ q(func: uid(`+t1+`)) { name email } }`, nil); fmt.Sprint(got) != "map[q:[]]" {
		t.Fatalf("namespace 0 reads namespace 1's node %s as %v", t1, got)
	}
	if _, err := f.cli.Query(galaxy, &pb.Request{CommitNow: true,
		Mutations: []*pb.Mutation{{SetNquads: []byte(`<` + t1 + `> <name> "zero's" .`)}}}); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[context.Context]string{galaxy: "zero's", ns1: "t1"} {
		got := f.query(c, t, `{ q(func: uid(`+t1+`)) { name } }`, nil)
		if !slices.Equal(names(got, "q"), []string{want}) {
			t.Fatalf("node %s: %v, want name %q", t1, got, want)
		}
	}
	// Reads in a namespace join the read set: of two transactions that
	// read t1's email and both write it, the second to commit aborts.
	var txns []*pb.TxnContext
	for _, v := range []string{"x", "y"} {
		r, err := f.cli.Query(ns1, &pb.Request{Query: `{ q(func: eq(name, "t1")) { v as uid email } }`,
			Mutations: []*pb.Mutation{{SetNquads: []byte(`uid(v) <email> "` + v + `@x" .`)}}})
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, r.Txn)
	}
	if _, err := f.cli.CommitOrAbort(ns1, txns[0]); err != nil {
		t.Fatal(err)
	}
	_, err = f.cli.CommitOrAbort(ns1, txns[1])
	wantCode(t, err, codes.Aborted, "Please retry")
	// HTTP /login takes the namespace too; its token acts in it.
	h := newHTTP(t, f)
	out := h.post("/login", "application/json", `{"userid":"groot","password":"password","namespace":1}`)
	data, _ := out["data"].(map[string]any)
	h.token, _ = data["accessJWT"].(string)
	out = h.post("/query", "application/dql", `{ q(func: has(email)) { email } }`)
	if fmt.Sprint(out["data"]) != "map[q:[map[email:x@x]]]" {
		t.Fatalf("HTTP query in namespace 1: %v", out)
	}
}

// TestNamespaceAccessControl: who may log in where, and who may create and
// delete namespaces; deleted namespaces refuse logins and abort their
// transactions; ids are not reused.
func TestNamespaceAccessControl(t *testing.T) {
	f := newFixture(t, "", withACL)
	ctx := context.Background()
	galaxy := f.loginNS(t, Groot, "password", 0)
	h := newHTTP(t, f)
	h.token = galaxyToken(t, f)
	out := h.post("/admin", "application/json",
		`{"query":"mutation($pw: String!) { addNamespace(input: {password: $pw}) { namespaceId message } }","variables":{"pw":"secret-one"}}`)
	if fmt.Sprint(out["data"]) != "map[addNamespace:map[message:Created namespace successfully namespaceId:1]]" {
		t.Fatalf("addNamespace answered %v", out)
	}
	out = h.post("/admin", "application/graphql", `mutation { addNamespace(input: {}) { namespaceId } }`)
	if fmt.Sprint(out["data"]) != "map[addNamespace:map[namespaceId:2]]" {
		t.Fatalf("addNamespace answered %v", out)
	}
	ns1 := f.loginNS(t, Groot, "secret-one", 1)
	_, err := f.cli.Login(ctx, &pb.LoginRequest{Userid: Groot, Password: "password", Namespace: 1})
	wantCode(t, err, codes.Unauthenticated, "invalid username or password")
	f.loginNS(t, Groot, "password", 2)
	// A user of namespace 1 cannot log into namespace 2 (nor 0).
	if err := f.s.SetNamespaceUser(ctx, 1, "alice", "alice-pw", []string{"dev"}); err != nil {
		t.Fatal(err)
	}
	alice := f.loginNS(t, "alice", "alice-pw", 1)
	for _, ns := range []uint64{0, 2} {
		_, err := f.cli.Login(ctx, &pb.LoginRequest{Userid: "alice", Password: "alice-pw", Namespace: ns})
		wantCode(t, err, codes.Unauthenticated, "invalid username or password")
	}
	_, err = f.cli.Login(ctx, &pb.LoginRequest{Userid: Groot, Password: "password", Namespace: 9})
	wantCode(t, err, codes.InvalidArgument, "does not exist")
	// Only guardians of the galaxy manage namespaces.
	if err := f.s.SetUser(ctx, "bob", "bob-pw", []string{"dev"}); err != nil {
		t.Fatal(err)
	}
	bob := f.loginNS(t, "bob", "bob-pw", 0)
	for name, c := range map[string]context.Context{"a non-guardian of 0": bob, "groot of 1": ns1, "a user of 1": alice} {
		_, err := f.cli.CreateNamespace(c, &pb.CreateNamespaceRequest{})
		wantCode(t, err, codes.PermissionDenied, "guardians of the galaxy")
		_, err = f.cli.DropNamespace(c, &pb.DropNamespaceRequest{Namespace: 2})
		wantCode(t, err, codes.PermissionDenied, "guardians of the galaxy")
		_ = name
	}
	// A guardian of namespace 1 alters its own namespace; alice may not.
	f.mustAlter(ns1, t, &pb.Operation{Schema: tenantSchema})
	_, err = f.cli.Alter(alice, &pb.Operation{Schema: tenantSchema})
	wantCode(t, err, codes.PermissionDenied, "alter")
	f.setJSON(alice, t, `{"name":"by-alice"}`)
	// Delete namespace 1 over /admin while alice has a transaction open.
	open, err := f.cli.Query(alice, &pb.Request{Mutations: []*pb.Mutation{{SetJson: []byte(`{"name":"late"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	out = h.post("/admin", "application/json", `{"query":"mutation { deleteNamespace(input: {namespaceId: 1}) { namespaceId message } }"}`)
	if fmt.Sprint(out["data"]) != "map[deleteNamespace:map[message:Deleted namespace successfully namespaceId:1]]" {
		t.Fatalf("deleteNamespace answered %v", out)
	}
	_, err = f.cli.CommitOrAbort(alice, open.Txn)
	wantCode(t, err, codes.InvalidArgument, "namespace 0x1 was deleted")
	_, err = f.cli.Login(ctx, &pb.LoginRequest{Userid: Groot, Password: "secret-one", Namespace: 1})
	wantCode(t, err, codes.InvalidArgument, "was deleted")
	_, err = f.cli.Query(ns1, &pb.Request{Query: `{ q(func: has(name)) { name } }`})
	wantCode(t, err, codes.InvalidArgument, "was deleted")
	_, err = f.cli.DropNamespace(galaxy, &pb.DropNamespaceRequest{Namespace: 1})
	wantCode(t, err, codes.InvalidArgument, "was deleted")
	_, err = f.cli.DropNamespace(galaxy, &pb.DropNamespaceRequest{Namespace: 0})
	wantCode(t, err, codes.InvalidArgument, "cannot be deleted")
	// Ids are never reused; the list shows the live ones.
	r, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{})
	if err != nil || r.Namespace != 3 {
		t.Fatalf("create after a delete: %v, %v; want namespace 3", r, err)
	}
	list, err := f.cli.ListNamespaces(galaxy, &pb.ListNamespacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for id := range list.Namespaces {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []uint64{0, 2, 3}) {
		t.Fatalf("live namespaces %v, want [0 2 3]", ids)
	}
	f.s.spaces.mu.Lock()
	_, cached := f.s.spaces.m[1]
	f.s.spaces.mu.Unlock()
	if cached {
		t.Fatal("the deleted namespace stays open")
	}
}

// galaxyToken is groot's access token in namespace 0, for HTTP.
func galaxyToken(t *testing.T, f *fixture) string {
	return f.login(t, Groot, "password").AccessJwt
}

// TestAdminGraphQLErrors: /admin answers GraphQL errors naming what it
// supports, and refuses namespaces without ACL.
func TestAdminGraphQLErrors(t *testing.T) {
	f := newFixture(t, "", withACL)
	h := newHTTP(t, f)
	h.token = galaxyToken(t, f)
	for _, q := range []string{
		`{ state { groups { id } } }`,
		`query { health { status } }`,
		`mutation { addUser(input: [{name: "x", password: "yyyyyy"}]) { user { name } } }`,
		`mutation { addNamespace(input: {password: "pppppp"}) { namespaceId nope } }`,
		`mutation { addNamespace(input: {password: "pppppp"}) { namespaceId } } query { x }`,
		`mutation { addNamespace(input: {password: "pppppp}) { namespaceId } }`,
	} {
		out := h.post("/admin", "application/graphql", q)
		errs, _ := out["errors"].([]any)
		if len(errs) != 1 || out["data"] != nil {
			t.Fatalf("%s: answered %v", q, out)
		}
		msg, _ := errs[0].(map[string]any)["message"].(string)
		if !strings.Contains(msg, "addNamespace") && !strings.Contains(msg, "GraphQL syntax") {
			t.Errorf("%s: message %q names no supported operation", q, msg)
		}
	}
	h.token = ""
	out := h.post("/admin", "application/graphql", `mutation { addNamespace(input: {}) { namespaceId } }`)
	if errs, _ := out["errors"].([]any); len(errs) != 1 {
		t.Fatalf("addNamespace without a token: %v", out)
	}

	off := newFixture(t, "", nil)
	_, err := off.cli.CreateNamespace(context.Background(), &pb.CreateNamespaceRequest{})
	wantCode(t, err, codes.InvalidArgument, "access control")
}

// TestNamespaceIDsConcurrent: namespaces created concurrently get distinct
// ids, 1..n, each with its own groot.
func TestNamespaceIDsConcurrent(t *testing.T) {
	f := newFixture(t, "", withACL)
	galaxy := f.loginNS(t, Groot, "password", 0)
	const n = 8
	ids := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.cli.CreateNamespace(galaxy, &pb.CreateNamespaceRequest{})
			ids[i], errs[i] = r.GetNamespace(), err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != uint64(i+1) {
			t.Fatalf("ids %v, want 1..%d", ids, n)
		}
	}
	for _, id := range ids {
		f.loginNS(t, Groot, "password", id)
	}
}
