package api

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engine"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// testSecret is an ACL secret for tests (32 bytes).
var testSecret = []byte("0123456789abcdef0123456789abcdef")

// clock is a settable clock for token and transaction expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	s     *Server
	g     *dgraph.Graph
	clock *clock
	cli   pb.DgraphClient
}

// newFixture starts a Server over an in-memory engine with the real
// executor, serving gRPC over an in-memory connection. edit adjusts the
// config (ACL, bounds) before New.
func newFixture(t testing.TB, schemaText string, edit func(*Config)) *fixture {
	t.Helper()
	return newFixtureWith(t, schemaText, edit, nil)
}

// newFixtureWith is newFixture with gedit adjusting the Graph's config
// (the placement).
func newFixtureWith(t testing.TB, schemaText string, edit func(*Config), gedit func(*dgraph.Config)) *fixture {
	t.Helper()
	ecfg := engine.DefaultConfig()
	ecfg.Sync, ecfg.DataDir = false, ""
	db, err := engine.Open(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	gcfg := dgraph.DefaultConfig()
	gcfg.LeaseSize = 64
	if gedit != nil {
		gedit(&gcfg)
	}
	ctx := context.Background()
	g, err := dgraph.Open(ctx, db, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	if schemaText != "" {
		if _, err := g.Alter(ctx, schemaText); err != nil {
			t.Fatal(err)
		}
	}
	ck := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now = ck.now
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(g, NewExecutor(g), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	s.RegisterGRPC(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fixture{s: s, g: g, clock: ck, cli: pb.NewDgraphClient(conn)}
}

func withACL(c *Config) { c.ACL.Secret = testSecret }

// withToken returns ctx carrying an access JWT as pydgraph sends it.
func withToken(ctx context.Context, tok string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "accessjwt", tok)
}

func (f *fixture) login(t *testing.T, user, password string) *pb.Jwt {
	t.Helper()
	resp, err := f.cli.Login(context.Background(), &pb.LoginRequest{Userid: user, Password: password})
	if err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	jwt := &pb.Jwt{}
	if err := protoUnmarshal(resp.Json, jwt); err != nil {
		t.Fatal(err)
	}
	return jwt
}

// setJSON commits one JSON mutation at once and returns the blank-node UIDs.
func (f *fixture) setJSON(ctx context.Context, t testing.TB, js string) map[string]string {
	t.Helper()
	resp, err := f.cli.Query(ctx, &pb.Request{CommitNow: true, Mutations: []*pb.Mutation{{SetJson: []byte(js)}}})
	if err != nil {
		t.Fatalf("mutation %s: %v", js, err)
	}
	return resp.Uids
}

// query runs a read-only query and decodes its JSON.
func (f *fixture) query(ctx context.Context, t *testing.T, q string, vars map[string]string) map[string]any {
	t.Helper()
	resp, err := f.cli.Query(ctx, &pb.Request{Query: q, Vars: vars, ReadOnly: true})
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	return decode(t, resp.Json)
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	return m
}

// wantCode checks a gRPC error's code and that its message contains sub.
func wantCode(t *testing.T, err error, c codes.Code, sub string) {
	t.Helper()
	st, ok := status.FromError(err)
	if err == nil || !ok || st.Code() != c || !strings.Contains(st.Message(), sub) {
		t.Fatalf("got error %v, want code %v containing %q", err, c, sub)
	}
}

// names returns the "name" values of block q of a result, in order.
func names(m map[string]any, block string) []string {
	var out []string
	list, _ := m[block].([]any)
	for _, e := range list {
		if o, ok := e.(map[string]any); ok {
			s, _ := o["name"].(string)
			out = append(out, s)
		}
	}
	return out
}

func protoUnmarshal(b []byte, m *pb.Jwt) error { return proto.Unmarshal(b, m) }
