package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

func TestACLLoginAndTokens(t *testing.T) {
	f := newFixture(t, accountsSchema, withACL)
	ctx := context.Background()
	// Without a token nothing but Login and CheckVersion works.
	_, err := f.cli.Query(ctx, &pb.Request{Query: `{ q(func: has(name)) { name } }`})
	wantCode(t, err, codes.Unauthenticated, "no accessJwt")
	if _, err := f.cli.CheckVersion(ctx, &pb.Check{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.cli.Login(ctx, &pb.LoginRequest{Userid: Groot, Password: "wrong-password"})
	wantCode(t, err, codes.Unauthenticated, "invalid username or password")
	_, err = f.cli.Login(ctx, &pb.LoginRequest{Userid: "nobody", Password: "password"})
	wantCode(t, err, codes.Unauthenticated, "invalid username or password")

	jwt := f.login(t, Groot, "password")
	if strings.Count(jwt.AccessJwt, ".") != 2 || jwt.RefreshJwt == "" {
		t.Fatalf("tokens %q / %q: want two JWTs", jwt.AccessJwt, jwt.RefreshJwt)
	}
	actx := withToken(ctx, jwt.AccessJwt)
	f.setJSON(actx, t, `{"name":"Guarded"}`)
	if got := f.query(actx, t, `{ q(func: eq(name, "Guarded")) { name } }`, nil); len(names(got, "q")) != 1 {
		t.Fatalf("got %v", got)
	}
	// A refresh token is not an access token, and a forged one fails.
	_, err = f.cli.Query(withToken(ctx, jwt.RefreshJwt), &pb.Request{Query: `{ q(func: has(name)) { name } }`})
	wantCode(t, err, codes.Unauthenticated, "refresh token")
	forged := jwt.AccessJwt[:len(jwt.AccessJwt)-4] + "AAAA"
	_, err = f.cli.Query(withToken(ctx, forged), &pb.Request{Query: `{ q(func: has(name)) { name } }`})
	wantCode(t, err, codes.Unauthenticated, "signature")

	// Past the access token's lifetime: "Token is expired" (pydgraph then
	// logs in again with its refresh token), and the refresh token works.
	f.clock.advance(DefaultConfig().ACL.AccessTTL + time.Second)
	_, err = f.cli.Query(actx, &pb.Request{Query: `{ q(func: has(name)) { name } }`})
	wantCode(t, err, codes.Unauthenticated, "Token is expired")
	resp, err := f.cli.Login(ctx, &pb.LoginRequest{RefreshToken: jwt.RefreshJwt})
	if err != nil {
		t.Fatal(err)
	}
	jwt2 := &pb.Jwt{}
	if err := protoUnmarshal(resp.Json, jwt2); err != nil {
		t.Fatal(err)
	}
	f.query(withToken(ctx, jwt2.AccessJwt), t, `{ q(func: has(name)) { name } }`, nil)
	// Past the refresh token's lifetime, only the password helps.
	f.clock.advance(DefaultConfig().ACL.RefreshTTL)
	_, err = f.cli.Login(ctx, &pb.LoginRequest{RefreshToken: jwt.RefreshJwt})
	wantCode(t, err, codes.Unauthenticated, "Token is expired")
}

func TestACLGuardiansOnlyAlter(t *testing.T) {
	f := newFixture(t, accountsSchema, withACL)
	ctx := context.Background()
	if err := f.s.SetUser(ctx, "alice", "alicepw", []string{"dev"}); err != nil {
		t.Fatal(err)
	}
	actx := withToken(ctx, f.login(t, "alice", "alicepw").AccessJwt)
	_, err := f.cli.Alter(actx, &pb.Operation{Schema: `x: int .`})
	wantCode(t, err, codes.PermissionDenied, "guardians")
	_, err = f.cli.AllocateIDs(actx, &pb.AllocateIDsRequest{HowMany: 1, LeaseType: pb.LeaseType_UID})
	wantCode(t, err, codes.PermissionDenied, "guardians")
	// Alice may mutate; her transaction is hers: groot cannot commit it,
	// nor can she with a wrong hash.
	r, err := f.cli.Query(actx, &pb.Request{Mutations: []*pb.Mutation{{SetNquads: []byte(`_:a <name> "A" .`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Txn.Hash == "" {
		t.Fatal("no hash in the transaction context with ACL on")
	}
	gctx := withToken(ctx, f.login(t, Groot, "password").AccessJwt)
	_, err = f.cli.CommitOrAbort(gctx, &pb.TxnContext{StartTs: r.Txn.StartTs, Hash: r.Txn.Hash})
	wantCode(t, err, codes.PermissionDenied, "another user")
	_, err = f.cli.CommitOrAbort(actx, &pb.TxnContext{StartTs: r.Txn.StartTs, Hash: "00"})
	wantCode(t, err, codes.PermissionDenied, "hash mismatch")
	if _, err := f.cli.CommitOrAbort(actx, &pb.TxnContext{StartTs: r.Txn.StartTs, Hash: r.Txn.Hash}); err != nil {
		t.Fatal(err)
	}
	// Re-running Init keeps a changed groot password.
	if err := f.s.SetUser(ctx, Groot, "newsecret", []string{Guardians}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.cli.Login(ctx, &pb.LoginRequest{Userid: Groot, Password: "password"})
	wantCode(t, err, codes.Unauthenticated, "invalid")
	f.login(t, Groot, "newsecret")
}

// With ACL off, Login succeeds for anyone (pydgraph's set-up logs in
// first) and tokens are not needed.
func TestACLOffLoginAccepted(t *testing.T) {
	f := newFixture(t, accountsSchema, nil)
	jwt := f.login(t, Groot, "anything")
	if jwt.AccessJwt == "" {
		t.Fatal("no access token")
	}
	f.query(context.Background(), t, `{ q(func: has(name)) { name } }`, nil)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.TxnsMax = 0 }, "TxnsMax"},
		{func(c *Config) { c.ACL.Secret = []byte("short") }, "at least 32"},
		{func(c *Config) { c.ACL.Secret, c.ACL.GrootPassword = testSecret, "abc" }, "groot password"},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an error about %s", err, tc.want)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
