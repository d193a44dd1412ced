package api_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

func str(s string) *pb.Value  { return &pb.Value{Kind: &pb.Value_StringValue{StringValue: s}} }
func i64(i int64) *pb.Value   { return &pb.Value{Kind: &pb.Value_IntValue{IntValue: i}} }
func f64(f float64) *pb.Value { return &pb.Value{Kind: &pb.Value_FloatValue{FloatValue: f}} }
func list(vs ...*pb.Value) *pb.Value {
	return &pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ValueList{Values: vs}}}
}

// apiError checks err is a status error with the given gRPC code and Weft
// Error detail, and returns the detail.
func apiError(t *testing.T, err error, grpcCode codes.Code, code pb.ErrorCode) *pb.Error {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != grpcCode {
		t.Fatalf("error %v: want gRPC %v", err, grpcCode)
	}
	for _, d := range st.Details() {
		if e, ok := d.(*pb.Error); ok {
			if e.Code != code || e.Message != st.Message() {
				t.Fatalf("detail %v, want code %v and the status message %q", e, code, st.Message())
			}
			return e
		}
	}
	t.Fatalf("error %v has no weft.v1.Error detail", err)
	return nil
}

func TestGRPCTransactionFlow(t *testing.T) {
	e := newEnv(t)
	c := e.grpc
	born := time.Date(1990, 5, 1, 12, 0, 0, 123456789, time.UTC).UnixNano()
	res, err := c.Commit(ctx(t), &pb.CommitRequest{Ops: []*pb.Op{
		{Kind: pb.OpKind_CREATE_VERTEX, Vertex: "a"},
		{Kind: pb.OpKind_CREATE_VERTEX, Vertex: "b"},
		{Kind: pb.OpKind_ADD_ALIAS, Vertex: "a", Alias: "alice"},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "alice", VertexAlias: true, Key: "name", Value: str("Alice")},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "age", Value: i64(42)},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "score", Value: f64(3)},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "ok", Value: &pb.Value{Kind: &pb.Value_BoolValue{BoolValue: true}}},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "born", Value: &pb.Value{Kind: &pb.Value_DatetimeUnixNanos{DatetimeUnixNanos: born}}},
		{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "tags", Value: list(str("x"), i64(1), list(&pb.Value{}))},
		{Kind: pb.OpKind_CREATE_EDGE, Vertex: "a", Edge: "knows", Dst: "b"},
		{Kind: pb.OpKind_SET_EDGE_PROP, Vertex: "a", Edge: "knows", Key: "weight", Value: f64(0.5)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Handles) != "[a b knows]" || res.Snapshot.GetToken() == "" {
		t.Fatalf("commit = %v", res)
	}
	b, err := c.Begin(ctx(t), &pb.BeginRequest{})
	if err != nil {
		t.Fatal(err)
	}
	gv, err := c.GetVertex(ctx(t), &pb.GetVertexRequest{Snapshot: b.Snapshot, Vertex: &pb.VertexRef{Name: "alice", Alias: true}})
	if err != nil {
		t.Fatal(err)
	}
	v := gv.Vertex
	if gv.Snapshot.GetToken() != b.Snapshot.Token || v.Handle != "a" || !v.Exists || fmt.Sprint(v.Aliases) != "[alice]" || len(v.Edges) != 1 {
		t.Fatalf("vertex = %v", gv)
	}
	wantProps := map[string]*pb.Value{"name": str("Alice"), "age": i64(42), "score": f64(3),
		"ok": {Kind: &pb.Value_BoolValue{BoolValue: true}}, "born": {Kind: &pb.Value_DatetimeUnixNanos{DatetimeUnixNanos: born}},
		"tags": list(str("x"), i64(1), list(&pb.Value{}))}
	for k, w := range wantProps {
		if !proto.Equal(v.Props[k], w) {
			t.Errorf("prop %s = %v, want %v", k, v.Props[k], w)
		}
	}
	if ed := v.Edges[0]; ed.Handle != "knows" || ed.Dst != "b" || len(ed.Reads) != 0 || !proto.Equal(ed.Props["weight"], f64(0.5)) {
		t.Fatalf("listed edge = %v", ed)
	}
	no := false
	part, err := c.GetVertex(ctx(t), &pb.GetVertexRequest{Vertex: &pb.VertexRef{Name: "a"}, Props: &no, Edges: &no, Aliases: &no})
	if err != nil || len(part.Vertex.Props)+len(part.Vertex.Edges)+len(part.Vertex.Aliases) != 0 || part.Snapshot.GetToken() == "" {
		t.Fatalf("parts: %v %v", part, err)
	}
	ge, err := c.GetEdge(ctx(t), &pb.GetEdgeRequest{Snapshot: b.Snapshot, Src: &pb.VertexRef{Name: "a"}, Edge: "knows"})
	if err != nil || !ge.Edge.Exists || ge.Edge.Dst != "b" || len(ge.Edge.Reads) != 1 {
		t.Fatalf("edge: %v %v", ge, err)
	}
	// Commit with the read: once, then it is stale.
	if len(v.Reads) != 2 || v.Reads[0].Vertex != "a" || v.Reads[1].Vertex != "alice" || !v.Reads[1].Alias {
		t.Fatalf("reads of a vertex named by alias = %v", v.Reads)
	}
	req := &pb.CommitRequest{Reads: v.Reads, Ops: []*pb.Op{{Kind: pb.OpKind_DELETE_VERTEX_PROP, Vertex: "a", Key: "ok"}}}
	if _, err := c.Commit(ctx(t), req); err != nil {
		t.Fatal(err)
	}
	_, err = c.Commit(ctx(t), req)
	if d := apiError(t, err, codes.Aborted, pb.ErrorCode_ABORTED); !d.Retryable {
		t.Fatal("ABORTED not retryable")
	}

	run, err := c.Run(ctx(t), &pb.RunRequest{Program: "echo", ParamsJson: `{"k": [1, 2]}`, At: b.Snapshot})
	if err != nil || run.ResultJson != `{"k": [1, 2]}` {
		t.Fatalf("run: %v %v", run, err)
	}
	if run, err := c.Run(ctx(t), &pb.RunRequest{Program: "echo"}); err != nil || run.ResultJson != "{}" {
		t.Fatalf("run without params: %v %v", run, err)
	}
	progs, err := c.Programs(ctx(t), &pb.ProgramsRequest{})
	if err != nil || len(progs.Programs) != 2 || progs.Programs[0].Name != "count" {
		t.Fatalf("programs: %v %v", progs, err)
	}
	st, err := c.Status(ctx(t), &pb.StatusRequest{})
	if err != nil || st.Vertices != 2 || st.Edges != 1 || st.Commits != 2 || st.Aborts != 1 {
		t.Fatalf("status: %v %v", st, err)
	}
}

func TestGRPCErrorMapping(t *testing.T) {
	cases := []struct {
		err   error
		grpc  codes.Code
		code  pb.ErrorCode
		retry bool
	}{
		{fmt.Errorf("x: %w", engine.ErrAborted), codes.Aborted, pb.ErrorCode_ABORTED, true},
		{fmt.Errorf("x: %w", engine.ErrSnapshotTooOld), codes.Aborted, pb.ErrorCode_SNAPSHOT_TOO_OLD, true},
		{engine.ErrOverloaded, codes.ResourceExhausted, pb.ErrorCode_OVERLOADED, true},
		{engine.ErrClosed, codes.Unavailable, pb.ErrorCode_UNAVAILABLE, false},
		{engine.ErrUnknownProgram, codes.NotFound, pb.ErrorCode_UNKNOWN_PROGRAM, false},
		{txn.ErrNotFound, codes.NotFound, pb.ErrorCode_NOT_FOUND, false},
		{txn.ErrExists, codes.AlreadyExists, pb.ErrorCode_ALREADY_EXISTS, false},
		{txn.ErrInvalid, codes.InvalidArgument, pb.ErrorCode_INVALID_ARGUMENT, false},
		{txn.ErrTooLarge, codes.InvalidArgument, pb.ErrorCode_TOO_LARGE, false},
		{engine.ErrBadRequest, codes.InvalidArgument, pb.ErrorCode_INVALID_ARGUMENT, false},
		{context.DeadlineExceeded, codes.DeadlineExceeded, pb.ErrorCode_DEADLINE_EXCEEDED, false},
		{context.Canceled, codes.Canceled, pb.ErrorCode_CANCELLED, false},
		{errors.New("disk on fire"), codes.Internal, pb.ErrorCode_INTERNAL, false},
	}
	e := newEnv(t)
	c := e.grpc
	calls := map[string]func() error{
		"Begin": func() error { _, err := c.Begin(ctx(t), &pb.BeginRequest{}); return err },
		"GetVertex": func() error {
			_, err := c.GetVertex(ctx(t), &pb.GetVertexRequest{Snapshot: &pb.Snapshot{Token: "s0"}, Vertex: &pb.VertexRef{Name: "a"}})
			return err
		},
		"GetEdge": func() error {
			_, err := c.GetEdge(ctx(t), &pb.GetEdgeRequest{Snapshot: &pb.Snapshot{Token: "s0"}, Src: &pb.VertexRef{Name: "a"}, Edge: "e"})
			return err
		},
		"Commit": func() error {
			_, err := c.Commit(ctx(t), &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_CREATE_VERTEX}}})
			return err
		},
		"Run":    func() error { _, err := c.Run(ctx(t), &pb.RunRequest{Program: "echo"}); return err },
		"Status": func() error { _, err := c.Status(ctx(t), &pb.StatusRequest{}); return err },
	}
	for _, tc := range cases {
		for method, call := range calls {
			e.fake.Inject(method, tc.err)
			err := call()
			st, _ := status.FromError(err)
			if st.Code() != tc.grpc {
				t.Errorf("%s with %v: gRPC %v, want %v", method, tc.err, st.Code(), tc.grpc)
				continue
			}
			if d := apiError(t, err, tc.grpc, tc.code); d.Retryable != tc.retry || d.Message != tc.err.Error() {
				t.Errorf("%s with %v: detail %v", method, tc.err, d)
			}
		}
	}
}

func TestGRPCMalformedInput(t *testing.T) {
	e := newEnv(t)
	c := e.grpc
	deep := &pb.Value{}
	for range 10 {
		deep = list(deep)
	}
	tooMany := make([]*pb.Op, txn.OpsMax+1)
	for i := range tooMany {
		tooMany[i] = &pb.Op{Kind: pb.OpKind_CREATE_VERTEX}
	}
	commits := []struct {
		req  *pb.CommitRequest
		code pb.ErrorCode
		msg  string
	}{
		{&pb.CommitRequest{Ops: []*pb.Op{{}}}, pb.ErrorCode_INVALID_ARGUMENT, "ops[0]: unknown operation kind 0"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: 257}}}, pb.ErrorCode_INVALID_ARGUMENT, "ops[0]: unknown operation kind 257"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: -1}}}, pb.ErrorCode_INVALID_ARGUMENT, "unknown operation kind -1"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_CREATE_VERTEX, Key: "k"}}}, pb.ErrorCode_INVALID_ARGUMENT, "field key is not used by create_vertex"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_DELETE_EDGE, Vertex: "a", Edge: "e", Dst: "b", DstAlias: true}}}, pb.ErrorCode_INVALID_ARGUMENT, "field dst, dst_alias is not used by delete_edge"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_SET_EDGE_PROP, Vertex: "a", Edge: "e", Key: "k"}}}, pb.ErrorCode_INVALID_ARGUMENT, "missing value (to remove a property, use delete_edge_prop)"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "k", Value: f64(math.NaN())}}}, pb.ErrorCode_INVALID_ARGUMENT, "ops[0] (set_vertex_prop): value: malformed: float value NaN is not finite"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "k", Value: list(f64(math.Inf(1)))}}}, pb.ErrorCode_INVALID_ARGUMENT, "not finite"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "k", Value: deep}}}, pb.ErrorCode_INVALID_ARGUMENT, "lists nest deeper than 8"},
		{&pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_ADD_ALIAS, Vertex: "a"}}}, pb.ErrorCode_INVALID_ARGUMENT, "empty alias"},
		{&pb.CommitRequest{Reads: []*pb.Read{{}}}, pb.ErrorCode_INVALID_ARGUMENT, "reads[0]: txn: invalid operation: empty vertex"},
		{&pb.CommitRequest{Ops: tooMany}, pb.ErrorCode_TOO_LARGE, "10001 operations, at most 10000"},
	}
	for _, tc := range commits {
		_, err := c.Commit(ctx(t), tc.req)
		st, _ := status.FromError(err)
		if d := apiError(t, err, st.Code(), tc.code); !strings.Contains(d.Message, tc.msg) || st.Code() != codes.InvalidArgument {
			t.Errorf("commit %.80v: %v, want %v containing %q", tc.req, err, tc.code, tc.msg)
		}
	}
	if n := e.fake.CallCount("Commit"); n != 0 {
		t.Fatalf("malformed commits reached the engine %d times", n)
	}
	for name, call := range map[string]func() error{
		"vertex without name": func() error { _, err := c.GetVertex(ctx(t), &pb.GetVertexRequest{}); return err },
		"edge without handle": func() error {
			_, err := c.GetEdge(ctx(t), &pb.GetEdgeRequest{Src: &pb.VertexRef{Name: "a"}})
			return err
		},
		"run bad params": func() error {
			_, err := c.Run(ctx(t), &pb.RunRequest{Program: "echo", ParamsJson: "{"})
			return err
		},
		"run no program": func() error { _, err := c.Run(ctx(t), &pb.RunRequest{}); return err },
		"bad snapshot": func() error {
			_, err := c.GetVertex(ctx(t), &pb.GetVertexRequest{Snapshot: &pb.Snapshot{Token: "?"}, Vertex: &pb.VertexRef{Name: "a"}})
			return err
		},
	} {
		if err := call(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		} else {
			apiError(t, err, codes.InvalidArgument, pb.ErrorCode_INVALID_ARGUMENT)
		}
	}
	if st, _ := e.fake.Status(context.Background()); st.Vertices != 0 {
		t.Fatalf("%d vertices after rejected requests", st.Vertices)
	}
}

// OpKind values are txn.Kind values, and error codes are the Code names.
func TestWireEnumsMatch(t *testing.T) {
	for k := txn.CreateVertex; k <= txn.RemoveAlias; k++ {
		if got := pb.OpKind(k).String(); got != strings.ToUpper(k.String()) {
			t.Errorf("OpKind %d is %s, txn.Kind is %s", k, got, k)
		}
	}
	if len(pb.OpKind_name) != int(txn.RemoveAlias)+1 {
		t.Errorf("OpKind has %d values, txn.Kind %d", len(pb.OpKind_name), txn.RemoveAlias+1)
	}
}

func TestGRPCMetrics(t *testing.T) {
	e := newEnv(t)
	if _, err := e.grpc.Begin(ctx(t), &pb.BeginRequest{}); err != nil {
		t.Fatal(err)
	}
	e.fake.Inject("Commit", engine.ErrAborted)
	e.grpc.Commit(ctx(t), &pb.CommitRequest{})
	mfs, err := e.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "weft_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var l []string
			for _, lp := range m.GetLabel() {
				l = append(l, lp.GetValue())
			}
			got[strings.Join(l, " ")] = m.GetCounter().GetValue()
		}
	}
	if got["grpc OK begin"] != 1 || got["grpc ABORTED commit"] != 1 {
		t.Fatalf("weft_requests_total = %v", got)
	}
}
