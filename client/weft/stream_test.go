package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// Many concurrent programs over the client's streams each get their own
// answer, and a failing one fails alone.
func TestRunStreamMultiplexes(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoStream=%v", noStream), func(t *testing.T) {
			f, c := serve(t, weft.Options{Streams: 3, NoStream: noStream})
			f.AddProgram("double", func(_ *apitest.Fake, params json.RawMessage) (json.RawMessage, error) {
				var p struct{ N int }
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				return json.RawMessage(fmt.Sprintf(`{"n":%d}`, 2*p.N)), nil
			})
			ctx := t.Context()
			var wg sync.WaitGroup
			errs := make(chan error, 64*50)
			for g := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 50 {
						n := g*1000 + i
						if i%10 == 3 {
							if err := c.Run(ctx, "no_such_program", nil, nil); !errors.Is(err, weft.ErrUnknownProgram) {
								errs <- fmt.Errorf("unknown program: %v", err)
							}
							continue
						}
						var out struct{ N int }
						if err := c.Run(ctx, "double", map[string]int{"n": n}, &out); err != nil {
							errs <- err
						} else if out.N != 2*n {
							errs <- fmt.Errorf("double(%d) = %d", n, out.N)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// A caller that gives up returns at once; the stream stays usable, and the
// late answer is dropped.
func TestRunStreamCancel(t *testing.T) {
	f, c := serve(t, weft.Options{Streams: 1})
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	f.AddProgram("block", func(*apitest.Fake, json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-release
		return json.RawMessage(`{}`), nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "block", nil, nil) }()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	var out map[string]any
	if err := c.Run(t.Context(), "echo", map[string]int{"x": 1}, &out); err != nil || fmt.Sprint(out) != "map[x:1]" {
		t.Fatalf("run after a cancel: %v %v", out, err)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer dcancel()
	go func() { done <- c.Run(dctx, "block", nil, nil) }()
	<-started
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run past its deadline: %v", err)
	}
	close(release)
	if err := c.Run(t.Context(), "echo", nil, &out); err != nil {
		t.Fatalf("run after late answers: %v", err)
	}
}

// Without a deadline on its context, a call ends after Options.CallTimeout.
func TestRunStreamCallTimeout(t *testing.T) {
	f, c := serve(t, weft.Options{Streams: 1, CallTimeout: 30 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	f.AddProgram("block", func(*apitest.Fake, json.RawMessage) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	})
	if err := c.Run(context.Background(), "block", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run past CallTimeout: %v", err)
	}
	out, err := c.RunRaw(context.Background(), "", "echo", []byte(`{"k": [1, 2]}`))
	if err != nil || string(out) != `{"k": [1, 2]}` {
		t.Fatalf("RunRaw: %s %v", out, err)
	}
}

// unaryOnly is a server from before RunStream: Run only.
type unaryOnly struct{ pb.UnimplementedWeftServer }

func (unaryOnly) Run(_ context.Context, req *pb.RunRequest) (*pb.RunResponse, error) {
	return &pb.RunResponse{ResultJson: `{"program":"` + req.GetProgram() + `"}`}, nil
}

// Against a server without RunStream, Run falls back to unary calls.
func TestRunStreamFallsBackToUnary(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterWeftServer(s, unaryOnly{})
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	c, err := weft.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		var out struct{ Program string }
		if err := c.Run(t.Context(), "p", nil, &out); err != nil || out.Program != "p" {
			t.Fatalf("run %d: %+v %v", i, out, err)
		}
	}
}

// When the server goes away, calls fail with a retryable unavailable error,
// and once it is back a new stream serves them.
func TestRunStreamServerRestart(t *testing.T) {
	f := apitest.New()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	s := newServer(f)
	go s.Serve(lis)
	c, err := weft.Dial(addr, weft.Options{Streams: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Run(t.Context(), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	err = c.Run(t.Context(), "echo", nil, nil)
	if !errors.Is(err, weft.ErrUnavailable) {
		t.Fatalf("run with the server gone: %v", err)
	}
	lis2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	s2 := newServer(f)
	go s2.Serve(lis2)
	defer s2.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Run(t.Context(), "echo", nil, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, weft.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("run after the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newServer(f *apitest.Fake) *grpc.Server { return api.NewGRPCServer(f, nil) }
