package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

func TestServerConfigValidate(t *testing.T) {
	for _, c := range []struct {
		mut  func(*api.Config)
		want string
	}{
		{func(c *api.Config) { c.GRPCAddr, c.HTTPAddr = "", "" }, "neither"},
		{func(c *api.Config) { c.RequestBytesMax = 10 }, "RequestBytesMax"},
	} {
		cfg := api.DefaultConfig()
		c.mut(&cfg)
		if _, err := api.NewServer(apitest.New(), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, c.want)
		}
	}
	cfg := api.DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Stop lets a request in flight finish on both faces, then refuses new ones.
func TestServerGracefulStop(t *testing.T) {
	f := apitest.New()
	release := make(chan struct{})
	f.AddProgram("slow", func(*apitest.Fake, json.RawMessage) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`"done"`), nil
	})
	cfg := api.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	s, err := api.NewServer(f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := pb.NewWeftClient(conn)
	if _, err := rpc.Status(t.Context(), &pb.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	httpDone := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+s.HTTPAddr()+"/v1/run/slow", "application/json", nil)
		if err != nil {
			httpDone <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		httpDone <- string(b)
	}()
	grpcDone := make(chan string, 1)
	go func() {
		r, err := rpc.Run(context.Background(), &pb.RunRequest{Program: "slow"})
		if err != nil {
			grpcDone <- err.Error()
			return
		}
		grpcDone <- r.ResultJson
	}()
	for f.CallCount("Run") < 2 {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() {
		s.Stop(context.Background())
		close(stopped)
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-stopped:
		t.Fatal("Stop returned with requests in flight")
	default:
	}
	close(release)
	if got := <-httpDone; got != "{\"result\":\"done\"}\n" {
		t.Fatalf("HTTP request in flight: %q", got)
	}
	if got := <-grpcDone; got != `"done"` {
		t.Fatalf("gRPC request in flight: %q", got)
	}
	<-stopped
	if _, err := http.Get("http://" + s.HTTPAddr() + "/healthz"); err == nil {
		t.Fatal("HTTP still served after Stop")
	}
}
