package api_test

import (
	"encoding/json"
	"io"
	"sort"
	"testing"

	"github.com/weft-db/weft/internal/api/apitest"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// RunStream at the wire: replies echo ids, bad requests fail alone, an id
// already in flight is refused, and closing the send side still gets every
// answer before the stream ends.
func TestGRPCRunStream(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	e.fake.AddProgram("block", func(*apitest.Fake, json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-release
		return json.RawMessage(`{"blocked":true}`), nil
	})
	st, err := e.grpc.RunStream(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	send := func(r *pb.RunStreamRequest) {
		t.Helper()
		if err := st.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	send(&pb.RunStreamRequest{Id: 7, Run: &pb.RunRequest{Program: "block"}})
	<-started
	send(&pb.RunStreamRequest{Id: 7, Run: &pb.RunRequest{Program: "echo"}}) // duplicate id
	send(&pb.RunStreamRequest{Id: 8, Run: &pb.RunRequest{Program: "echo", ParamsJson: `{"a":1}`}})
	send(&pb.RunStreamRequest{Id: 9, Run: &pb.RunRequest{Program: "echo", ParamsJson: `{"a":`}})
	send(&pb.RunStreamRequest{Id: 10, Run: &pb.RunRequest{Program: "nope"}})
	send(&pb.RunStreamRequest{Id: 11, Run: &pb.RunRequest{Program: "echo"}, TimeoutMicros: 1 << 62})
	got := map[uint64]*pb.RunStreamResponse{}
	for len(got) < 5 {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got[r.GetId()] = r
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	close(release) // the blocked request still answers after CloseSend
	last, err := st.Recv()
	if err != nil || last.GetId() != 7 || last.GetResultJson() != `{"blocked":true}` {
		t.Fatalf("answer after CloseSend: %v %v", last, err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("stream end: %v", err)
	}
	want := map[uint64]pb.ErrorCode{7: pb.ErrorCode_INVALID_ARGUMENT, 9: pb.ErrorCode_INVALID_ARGUMENT, 10: pb.ErrorCode_UNKNOWN_PROGRAM}
	for id, code := range want {
		if e := got[id].GetError(); e == nil || e.GetCode() != code || e.GetMessage() == "" {
			t.Errorf("request %d: %v, want error %v", id, got[id], code)
		}
	}
	if r := got[8]; r.GetError() != nil || r.GetResultJson() != `{"a":1}` {
		t.Errorf("request 8: %v", r)
	}
	if r := got[11]; r.GetError() != nil || r.GetResultJson() != `{}` {
		t.Errorf("request 11: %v", r)
	}
	var ids []int
	for id := range got {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	if len(ids) != 5 {
		t.Errorf("answered ids %v", ids)
	}
}
