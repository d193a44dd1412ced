package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	pb "github.com/weft-db/weft/internal/wire/weftpb"
)

// env is one fake engine behind both faces, on loopback.
type env struct {
	fake    *apitest.Fake
	metrics *api.Metrics
	http    *httptest.Server
	grpc    pb.WeftClient
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOpts(t, api.HTTPOptions{})
}

func newEnvOpts(t *testing.T, opts api.HTTPOptions) *env {
	t.Helper()
	e := &env{fake: apitest.New()}
	e.metrics = api.NewMetrics(e.fake)
	e.http = httptest.NewServer(api.NewHTTPHandler(e.fake, e.metrics, opts))
	t.Cleanup(e.http.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := api.NewGRPCServer(e.fake, e.metrics)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	e.grpc = pb.NewWeftClient(conn)
	return e
}

// do sends one HTTP request and returns the status, the body decoded as JSON
// (into any) and the raw response.
func (e *env) do(t *testing.T, method, path, body string) (int, map[string]any, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %v\n%s", method, path, err, raw)
		}
	}
	return resp.StatusCode, out, resp
}

// post sends a JSON body and fails the test unless the status is 200.
func (e *env) post(t *testing.T, path, body string) map[string]any {
	t.Helper()
	st, out, _ := e.do(t, "POST", path, body)
	if st != http.StatusOK {
		t.Fatalf("POST %s %s: status %d: %v", path, body, st, out)
	}
	return out
}

// errOf extracts the error object of an error answer.
func errOf(t *testing.T, out map[string]any) (code, msg string, retryable bool) {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("answer has no error object: %v", out)
	}
	return e["code"].(string), e["message"].(string), e["retryable"].(bool)
}

func ctx(t *testing.T) context.Context { return t.Context() }
