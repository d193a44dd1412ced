package api

import (
	"context"
	"path"
	"runtime"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/wire/apicode"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// grpcService implements pb.WeftServer. Its methods return plain errors; the
// interceptor turns them into status errors with an Error detail, so the
// mapping lives in one place (internal/wire/apicode, errors.go classifying).
type grpcService struct {
	pb.UnimplementedWeftServer
	svc service
	m   *Metrics // RunStream records each request (unary calls: the interceptor)
}

// NewGRPCServer returns a gRPC server serving the Weft service over db, with
// metrics recorded in m (nil: none). opts are added to the server's options.
func NewGRPCServer(db engine.API, m *Metrics, opts ...grpc.ServerOption) *grpc.Server {
	// Stream workers serve RPCs on long-lived goroutines whose stacks have
	// already grown, instead of a fresh goroutine (and stack copies) per
	// call; when all are busy gRPC starts a goroutine as before.
	opts = append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(unaryInterceptor(m)),
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0)))}, opts...)
	s := grpc.NewServer(opts...)
	pb.RegisterWeftServer(s, &grpcService{svc: service{db: db}, m: m})
	reflection.Register(s) // for grpcurl and friends
	return s
}

// grpcOps names each method as the metrics and HTTP API do.
var grpcOps = map[string]string{
	"Begin": "begin", "GetVertex": "get_vertex", "GetEdge": "get_edge", "Commit": "commit",
	"Run": "run", "Programs": "programs", "Status": "status", "RunStream": "run_stream",
}

func unaryInterceptor(m *Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		code := CodeOf(err)
		op, ok := grpcOps[path.Base(info.FullMethod)]
		if !ok {
			op = "unknown"
		}
		m.observe("grpc", op, code, err, time.Since(start))
		if err != nil {
			return nil, StatusError(code, err.Error())
		}
		return resp, nil
	}
}

// StatusError builds the gRPC status error for an API error (a code the
// table does not know answers as INTERNAL).
func StatusError(code apicode.Code, msg string) error {
	if !code.Known() {
		code = apicode.CodeInternal
	}
	st := status.New(code.GRPC(), msg)
	if d, err := st.WithDetails(errorPB(code, msg)); err == nil {
		st = d
	}
	return st.Err()
}

// errorPB is the Error detail for an API error (RunStream's per-request
// errors carry it in the reply instead of a status).
func errorPB(code apicode.Code, msg string) *pb.Error {
	return &pb.Error{Code: code.PB(), Message: msg, Retryable: code.Retryable()}
}

func snapPB(s engine.Snapshot) *pb.Snapshot { return &pb.Snapshot{Token: s.Token} }

func refFromPB(r *pb.VertexRef) engine.VertexRef {
	return engine.VertexRef{Name: r.GetName(), Alias: r.GetAlias()}
}

func (g *grpcService) Begin(ctx context.Context, _ *pb.BeginRequest) (*pb.BeginResponse, error) {
	snap, err := g.svc.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.BeginResponse{Snapshot: snapPB(snap)}, nil
}

func (g *grpcService) GetVertex(ctx context.Context, req *pb.GetVertexRequest) (*pb.GetVertexResponse, error) {
	opts := readOptions(req.Props, req.Edges, req.Aliases, int(req.GetEdgesMax()))
	v, snap, err := g.svc.getVertex(ctx, req.GetSnapshot().GetToken(), refFromPB(req.GetVertex()), opts)
	if err != nil {
		return nil, err
	}
	return &pb.GetVertexResponse{Vertex: vertexToPB(v), Snapshot: snapPB(snap)}, nil
}

func (g *grpcService) GetVertices(ctx context.Context, req *pb.GetVerticesRequest) (*pb.GetVerticesResponse, error) {
	if n := len(req.GetVertices()); n > VerticesMax {
		return nil, tooManyVertices(n) // before converting a huge request
	}
	refs := make([]engine.VertexRef, len(req.GetVertices()))
	for i, r := range req.GetVertices() {
		refs[i] = refFromPB(r)
	}
	opts := readOptions(req.Props, req.Edges, req.Aliases, int(req.GetEdgesMax()))
	vs, snap, err := g.svc.getVertices(ctx, req.GetSnapshot().GetToken(), refs, opts)
	if err != nil {
		return nil, err
	}
	out := &pb.GetVerticesResponse{Snapshot: snapPB(snap), Vertices: make([]*pb.Vertex, len(vs))}
	for i, v := range vs {
		out.Vertices[i] = vertexToPB(v)
	}
	return out, nil
}

func (g *grpcService) GetEdge(ctx context.Context, req *pb.GetEdgeRequest) (*pb.GetEdgeResponse, error) {
	e, snap, err := g.svc.getEdge(ctx, req.GetSnapshot().GetToken(), refFromPB(req.GetSrc()), req.GetEdge())
	if err != nil {
		return nil, err
	}
	return &pb.GetEdgeResponse{Edge: edgeToPB(e, true), Snapshot: snapPB(snap)}, nil
}

func (g *grpcService) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	if err := checkSizes(len(req.GetReads()), len(req.GetOps())); err != nil {
		return nil, err // before converting a huge request
	}
	reads := make([]txn.Read, len(req.GetReads()))
	for i, r := range req.GetReads() {
		reads[i] = readFromPB(r)
	}
	ops := make([]txn.Op, len(req.GetOps()))
	for i, o := range req.GetOps() {
		var err error
		if ops[i], err = opFromPB(i, o); err != nil {
			return nil, err
		}
	}
	res, err := g.svc.commit(ctx, reads, ops)
	if err != nil {
		return nil, err
	}
	return &pb.CommitResponse{Handles: res.Handles, Snapshot: snapPB(res.Snapshot)}, nil
}

func (g *grpcService) Run(ctx context.Context, req *pb.RunRequest) (*pb.RunResponse, error) {
	out, err := g.svc.run(ctx, req.GetProgram(), []byte(req.GetParamsJson()), req.GetAt().GetToken())
	if err != nil {
		return nil, err
	}
	return &pb.RunResponse{ResultJson: string(out)}, nil
}

func (g *grpcService) Programs(context.Context, *pb.ProgramsRequest) (*pb.ProgramsResponse, error) {
	var out pb.ProgramsResponse
	for _, p := range g.svc.db.Programs() {
		out.Programs = append(out.Programs, &pb.ProgramInfo{Name: p.Name, Description: p.Description})
	}
	return &out, nil
}

func (g *grpcService) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	st, err := g.svc.status(ctx)
	if err != nil {
		return nil, err
	}
	return statusToPB(st), nil
}
