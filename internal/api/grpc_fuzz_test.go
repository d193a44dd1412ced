package api

import (
	"context"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-db/weft/internal/api/apitest"
	"github.com/weft-db/weft/internal/wire/apicode"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// FuzzGRPCMessages: any bytes that decode as a request message reach the
// service's handlers without a panic, and every failure maps to one of the
// API's client-error codes.
func FuzzGRPCMessages(f *testing.F) {
	seed := func(kind byte, m proto.Message) {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(kind, b)
	}
	seed(0, &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.OpKind_CREATE_VERTEX, Vertex: "a"}}})
	seed(0, &pb.CommitRequest{Reads: []*pb.Read{{Vertex: "a", Version: []byte{1, 2}}}, Ops: []*pb.Op{{Kind: pb.OpKind_SET_VERTEX_PROP, Vertex: "a", Key: "k"}}})
	seed(1, &pb.GetVertexRequest{Vertex: &pb.VertexRef{Name: "a"}})
	seed(2, &pb.GetEdgeRequest{Src: &pb.VertexRef{Name: "a"}, Edge: "e"})
	seed(3, &pb.RunRequest{Program: "get_node", ParamsJson: `{"node":"a"}`})
	f.Add(byte(0), []byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, kind byte, b []byte) {
		g := &grpcService{svc: service{db: apitest.New()}}
		ctx := context.Background()
		var err error
		switch kind % 4 {
		case 0:
			var m pb.CommitRequest
			if proto.Unmarshal(b, &m) != nil {
				return
			}
			_, err = g.Commit(ctx, &m)
		case 1:
			var m pb.GetVertexRequest
			if proto.Unmarshal(b, &m) != nil {
				return
			}
			_, err = g.GetVertex(ctx, &m)
		case 2:
			var m pb.GetEdgeRequest
			if proto.Unmarshal(b, &m) != nil {
				return
			}
			_, err = g.GetEdge(ctx, &m)
		case 3:
			var m pb.RunRequest
			if proto.Unmarshal(b, &m) != nil {
				return
			}
			_, err = g.Run(ctx, &m)
		}
		if err == nil {
			return
		}
		// The interceptor turns handler errors into statuses by CodeOf:
		// bad input must map to a client error, never to INTERNAL.
		if code := CodeOf(err); code == apicode.CodeInternal {
			t.Fatalf("kind %d: bad input answered INTERNAL: %v", kind%4, err)
		}
		if st, ok := status.FromError(StatusError(CodeOf(err), err.Error())); !ok || st.Message() == "" {
			t.Fatalf("kind %d: %v does not cross the wire as a status", kind%4, err)
		}
	})
}
