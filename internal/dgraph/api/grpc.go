package api

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/dgraph/dql"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// grpcService is the gRPC service pb.Dgraph over a Server.
type grpcService struct {
	pb.UnimplementedDgraphServer
	s *Server
}

// RegisterGRPC registers the service pb.Dgraph on g.
func (s *Server) RegisterGRPC(g *grpc.Server) {
	pb.RegisterDgraphServer(g, &grpcService{s: s})
}

// grpcError turns an error into a gRPC status with Dgraph's codes.
func grpcError(err error) error {
	if err == nil {
		return nil
	}
	e := classify(err)
	c := map[Code]codes.Code{CodeUnknown: codes.Unknown, CodeInvalid: codes.InvalidArgument, CodeAborted: codes.Aborted,
		CodeUnauthenticated: codes.Unauthenticated, CodePermission: codes.PermissionDenied,
		CodeOverloaded: codes.ResourceExhausted, CodeUnimplemented: codes.Unimplemented}[e.Code]
	return status.Error(c, e.Msg)
}

// principal reads the accessjwt metadata pydgraph (and dgo) send.
func (g *grpcService) principal(ctx context.Context) (principal, error) {
	var tok string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("accessjwt"); len(v) > 0 {
			tok = v[0]
		}
	}
	return g.s.acl.authorize(tok)
}

func (g *grpcService) Login(ctx context.Context, req *pb.LoginRequest) (*pb.Response, error) {
	t, err := g.s.acl.login(ctx, req.Userid, req.Password, req.RefreshToken, req.Namespace, g.s.live)
	if err != nil {
		g.s.log.Info("dgraph login refused", "user", req.Userid, "err", err)
		return nil, grpcError(err)
	}
	// Dgraph answers the tokens as a serialized Jwt message in Response.json.
	b, err := proto.Marshal(&pb.Jwt{AccessJwt: t.access, RefreshJwt: t.refresh})
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.Response{Json: b}, nil
}

func (g *grpcService) Query(ctx context.Context, req *pb.Request) (*pb.Response, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	rq := &request{startTs: req.StartTs, hash: req.Hash, readOnly: req.ReadOnly, bestEffort: req.BestEffort,
		commitNow: req.CommitNow, query: req.Query, vars: req.Vars}
	if req.RespFormat == pb.Request_RDF {
		return nil, grpcError(errorf(CodeUnimplemented, "resp_format RDF is not supported"))
	}
	for i, m := range req.Mutations {
		if err := checkQuadNamespaces(p, m); err != nil {
			return nil, grpcError(err)
		}
		dm, err := convertMutation(m, i)
		if err != nil {
			return nil, grpcError(err)
		}
		rq.muts = append(rq.muts, dm)
		rq.commitNow = rq.commitNow || m.CommitNow
	}
	out, err := g.s.do(ctx, p, rq)
	if err != nil {
		return nil, grpcError(err)
	}
	return g.response(out), nil
}

func (g *grpcService) response(out *outcome) *pb.Response {
	resp := &pb.Response{Json: out.data, Txn: out.txn, Latency: out.latency, Uids: out.uids}
	if len(resp.Json) == 0 {
		resp.Json = []byte("{}")
	}
	return resp
}

func (g *grpcService) RunDQL(ctx context.Context, req *pb.RunDQLRequest) (*pb.Response, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	if req.RespFormat == pb.Request_RDF {
		return nil, grpcError(errorf(CodeUnimplemented, "resp_format RDF is not supported"))
	}
	rq, err := dqlRequest(req.DqlQuery, req.Vars)
	if err != nil {
		return nil, grpcError(err)
	}
	rq.readOnly, rq.bestEffort = req.ReadOnly && !rq.mutating(), req.BestEffort
	out, err := g.s.do(ctx, p, rq)
	if err != nil {
		return nil, grpcError(err)
	}
	return g.response(out), nil
}

// dqlRequest reads DQL text that is a query, a { set … delete … } block or
// an upsert block. Mutations commit at once, as Dgraph's RunDQL does.
func dqlRequest(text string, vars map[string]string) (*request, error) {
	if looksLikeMutation(text) {
		u, err := dql.ParseMutation(text)
		if err != nil {
			return nil, err
		}
		return &request{upsert: u, commitNow: true, vars: vars}, nil
	}
	return &request{query: text, vars: vars}, nil
}

// looksLikeMutation: an upsert block, or a block whose first word is set
// or delete.
func looksLikeMutation(text string) bool {
	f := fieldsN(text, 3)
	switch {
	case len(f) == 0:
		return false
	case f[0] == "upsert" || f[0] == "upsert{":
		return true
	case f[0] == "{" && len(f) > 1:
		return f[1] == "set" || f[1] == "delete" || f[1] == "set{" || f[1] == "delete{"
	case f[0] == "{set" || f[0] == "{delete" || f[0] == "{set{" || f[0] == "{delete{":
		return true
	}
	return false
}

func (g *grpcService) Alter(ctx context.Context, op *pb.Operation) (*pb.Payload, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	if err := g.s.alter(ctx, p, op); err != nil {
		return nil, grpcError(err)
	}
	return &pb.Payload{Data: []byte(`{"code":"Success","message":"Done"}`)}, nil
}

func (g *grpcService) CommitOrAbort(ctx context.Context, tc *pb.TxnContext) (*pb.TxnContext, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	out, err := g.s.commitOrAbort(ctx, p, tc.StartTs, tc.Hash, tc.Aborted)
	return out, grpcError(err)
}

func (g *grpcService) CheckVersion(context.Context, *pb.Check) (*pb.Version, error) {
	return &pb.Version{Tag: g.s.cfg.Version}, nil
}

func (g *grpcService) AllocateIDs(ctx context.Context, req *pb.AllocateIDsRequest) (*pb.AllocateIDsResponse, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	start, end, err := g.s.allocate(ctx, p, req.HowMany, req.LeaseType)
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.AllocateIDsResponse{Start: start, End: end}, nil
}

// CreateNamespace is Dgraph v25's namespace creation (pydgraph's
// create_namespace): for guardians of the galaxy; groot of the new
// namespace gets DefaultNamespacePassword.
func (g *grpcService) CreateNamespace(ctx context.Context, _ *pb.CreateNamespaceRequest) (*pb.CreateNamespaceResponse, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	ns, err := g.s.createNamespace(ctx, p, "")
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.CreateNamespaceResponse{Namespace: ns}, nil
}

// DropNamespace deletes a namespace (guardians of the galaxy).
func (g *grpcService) DropNamespace(ctx context.Context, req *pb.DropNamespaceRequest) (*pb.DropNamespaceResponse, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	if err := g.s.deleteNamespace(ctx, p, req.Namespace); err != nil {
		return nil, grpcError(err)
	}
	return &pb.DropNamespaceResponse{}, nil
}

// ListNamespaces lists the live namespaces, 0 included (guardians of the
// galaxy).
func (g *grpcService) ListNamespaces(ctx context.Context, _ *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	p, err := g.principal(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	ids, err := g.s.listNamespaces(ctx, p)
	if err != nil {
		return nil, grpcError(err)
	}
	out := &pb.ListNamespacesResponse{Namespaces: map[uint64]*pb.Namespace{}}
	for _, id := range ids {
		out.Namespaces[id] = &pb.Namespace{Id: id}
	}
	return out, nil
}

// checkQuadNamespaces refuses NQuads naming another namespace than the
// caller's (Dgraph lets a guardian of the galaxy write into any namespace
// that way; Weft does not).
func checkQuadNamespaces(p principal, m *pb.Mutation) error {
	for _, nq := range append(slices.Clone(m.Set), m.Del...) {
		if nq.Namespace != 0 && nq.Namespace != p.ns {
			return errorf(CodeUnimplemented, "NQuad namespace %d: a mutation writes into its caller's namespace (%d) only", nq.Namespace, p.ns)
		}
	}
	return nil
}
