package kronos_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	kc "github.com/weft-db/weft/client/kronos"
	pb "github.com/weft-db/weft/internal/wire/kronospb"
)

// The client's codes are the wire's: same numbers, same names, and a
// sentinel per code that errors.Is matches on the code alone.
func TestCodesAreWireCodes(t *testing.T) {
	sentinels := map[kc.Code]error{
		kc.CodeUnknownEvent: kc.ErrUnknownEvent, kc.CodeSelfOrder: kc.ErrSelfOrder, kc.CodeMalformed: kc.ErrMalformed,
		kc.CodeRefUnderflow: kc.ErrUnderflow, kc.CodeRefOverflow: kc.ErrOverflow, kc.CodeMustConflict: kc.ErrMustConflict,
		kc.CodeNotLeader: kc.ErrNotLeader, kc.CodeOverloaded: kc.ErrOverloaded, kc.CodeCollected: kc.ErrCollected,
		kc.CodeClockInvalid: kc.ErrClockInvalid, kc.CodeShuttingDown: kc.ErrShuttingDown,
	}
	if len(sentinels) != len(pb.ErrorCode_name)-1 {
		t.Fatalf("%d client codes, %d wire codes besides OK", len(sentinels), len(pb.ErrorCode_name)-1)
	}
	for v, name := range pb.ErrorCode_name {
		if v == int32(pb.ErrorCode_OK) {
			continue
		}
		c := kc.Code(v)
		if c.String() != name {
			t.Errorf("wire code %d is %s, client code %d is %s", v, name, v, c)
		}
		err := error(&kc.Error{Code: c, Message: "kronos: from the server"})
		for sc, s := range sentinels {
			if errors.Is(err, s) != (sc == c) {
				t.Errorf("errors.Is(%s error, %s sentinel) = %v", c, sc, !(sc == c))
			}
		}
	}
}

// fakeKronos answers CreateEvent and AssignOrder from scripts of wire errors
// (nil: success), repeating the last entry.
type fakeKronos struct {
	pb.UnimplementedKronosServer
	mu             sync.Mutex
	creates        []*pb.Error
	assigns        []*pb.Error
	createAttempts int
}

// script replaces the scripts (nil keeps one) and returns the create
// attempts counted so far.
func (f *fakeKronos) script(creates, assigns []*pb.Error) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if creates != nil {
		f.creates, f.createAttempts = creates, 0
	}
	if assigns != nil {
		f.assigns = assigns
	}
	return f.createAttempts
}

func next(script *[]*pb.Error) *pb.Error {
	e := (*script)[0]
	if len(*script) > 1 {
		*script = (*script)[1:]
	}
	return e
}

func (f *fakeKronos) CreateEvent(context.Context, *pb.CreateEventRequest) (*pb.CreateEventResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.createAttempts++
	if e := next(&f.creates); e != nil {
		return &pb.CreateEventResponse{Error: e}, nil
	}
	return &pb.CreateEventResponse{Ids: []uint64{7}}, nil
}

func (f *fakeKronos) AssignOrder(context.Context, *pb.AssignOrderRequest) (*pb.AssignOrderResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &pb.AssignOrderResponse{Error: next(&f.assigns)}, nil
}

func serveFake(t *testing.T, f *fakeKronos) *kc.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterKronosServer(s, f)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	c, err := kc.Dial([]string{lis.Addr().String()}, kc.Options{Attempts: 5, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// NOT_LEADER, SHUTTING_DOWN and OVERLOADED are retried; when the attempts run
// out the error matches ErrUnavailable and the last code. Any other code is
// returned at once as an *Error carrying the client's Code.
func TestRetriesByCode(t *testing.T) {
	ctx := context.Background()
	f := &fakeKronos{}
	f.script([]*pb.Error{{Code: pb.ErrorCode_NOT_LEADER}, {Code: pb.ErrorCode_SHUTTING_DOWN}, {Code: pb.ErrorCode_OVERLOADED}, nil}, nil)
	c := serveFake(t, f)
	if id, err := c.CreateEvent(ctx); err != nil || id != 7 || f.script(nil, nil) != 4 {
		t.Fatalf("create after three retryable errors: %d %v (%d attempts)", id, err, f.script(nil, nil))
	}
	f.script([]*pb.Error{{Code: pb.ErrorCode_OVERLOADED, Message: "kronos: proposal queue full"}}, nil)
	_, err := c.CreateEvent(ctx)
	var ke *kc.Error
	if !errors.Is(err, kc.ErrUnavailable) || !errors.Is(err, kc.ErrOverloaded) || !errors.As(err, &ke) ||
		ke.Code != kc.CodeOverloaded || f.script(nil, nil) != 5 {
		t.Fatalf("always overloaded: %v (%d attempts)", err, f.script(nil, nil))
	}
	f.script(nil, []*pb.Error{{Code: pb.ErrorCode_MUST_CONFLICT, Message: "kronos: conflict", PairIndex: 1, Actual: pb.Order_AFTER}})
	_, err = c.AssignOrder(ctx, []kc.Assignment{{A: kc.ID(1), Order: kc.Before, B: kc.ID(2), Strength: kc.Must}})
	if !errors.As(err, &ke) || ke.Code != kc.CodeMustConflict || ke.PairIndex != 1 || ke.Actual != kc.After ||
		!errors.Is(err, kc.ErrMustConflict) || errors.Is(err, kc.ErrUnavailable) {
		t.Fatalf("must conflict: %#v", err)
	}
	if ke.Code.String() != "MUST_CONFLICT" || ke.Error() != "kronos: conflict" || kc.ErrMustConflict.Error() != "kronos: MUST_CONFLICT" {
		t.Fatalf("strings: %s, %q, %q", ke.Code, ke.Error(), kc.ErrMustConflict.Error())
	}
}
