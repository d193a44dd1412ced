package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
)

// serve starts the gRPC adapter over a fake engine on loopback.
func serve(t *testing.T, opts ...weft.Options) (*apitest.Fake, *weft.Client) {
	t.Helper()
	f := apitest.New()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := api.NewGRPCServer(f, nil)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	c, err := weft.Dial(lis.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return f, c
}

func TestTransactionRoundTrip(t *testing.T) {
	_, c := serve(t)
	ctx := t.Context()
	born := time.Date(1990, 5, 1, 12, 0, 0, 123456789, time.UTC)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.CreateVertex("a")
	tx.CreateVertex("b")
	tx.CreateVertex("")
	tx.AddAlias(weft.Handle("a"), "alice")
	tx.SetVertexProp(weft.Alias("alice"), "name", "Alice")
	tx.SetVertexProp(weft.Handle("a"), "age", 42)
	tx.SetVertexProp(weft.Handle("a"), "small", uint8(7))
	tx.SetVertexProp(weft.Handle("a"), "score", 3.0)
	tx.SetVertexProp(weft.Handle("a"), "ok", true)
	tx.SetVertexProp(weft.Handle("a"), "born", born)
	tx.SetVertexProp(weft.Handle("a"), "tags", []any{"x", int64(1), 2.5, []string{"y"}, nil})
	tx.CreateEdge(weft.Alias("alice"), "knows", weft.Handle("b"))
	tx.SetEdgeProp(weft.Handle("a"), "knows", "weight", float32(0.5))
	res, err := tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Handles) != 4 || res.Handles[0] != "a" || res.Handles[2] == "" || res.Handles[3] != "knows" || res.Snapshot == "" {
		t.Fatalf("commit = %+v", res)
	}
	if _, err := tx.Commit(ctx); !errors.Is(err, weft.ErrTxDone) {
		t.Fatalf("second commit: %v", err)
	}

	tx, _ = c.Begin(ctx)
	v, err := tx.GetVertex(ctx, weft.Alias("alice"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Alice", "age": int64(42), "small": int64(7), "score": 3.0, "ok": true, "born": born,
		"tags": []any{"x", int64(1), 2.5, []any{"y"}, nil}}
	if !reflect.DeepEqual(v.Props, want) || v.Handle != "a" || !v.Exists || fmt.Sprint(v.Aliases) != "[alice]" {
		t.Fatalf("vertex = %+v", v)
	}
	if len(v.Edges) != 1 || v.Edges[0].Dst != "b" || v.Edges[0].Props["weight"] != 0.5 {
		t.Fatalf("edges = %+v", v.Edges)
	}
	part, err := tx.GetVertex(ctx, weft.Handle("a"), weft.ReadOptions{NoProps: true, NoEdges: true})
	if err != nil || len(part.Props) != 0 || len(part.Edges) != 0 || len(part.Aliases) != 1 {
		t.Fatalf("parts: %+v %v", part, err)
	}
	e, err := tx.GetEdge(ctx, weft.Handle("a"), "knows")
	if err != nil || !e.Exists || e.Src != "a" || e.Dst != "b" {
		t.Fatalf("edge: %+v %v", e, err)
	}
	missing, err := tx.GetVertex(ctx, weft.Handle("nobody"))
	if err != nil || missing.Exists {
		t.Fatalf("missing: %+v %v", missing, err)
	}
	// A read-only commit sends nothing and succeeds.
	if res, err := tx.Commit(ctx); err != nil || res.Snapshot != tx.Snapshot() {
		t.Fatalf("read-only commit: %+v %v", res, err)
	}
}

// A stale read aborts the commit, and nothing is written.
func TestCommitAbortsOnStaleRead(t *testing.T) {
	f, c := serve(t)
	ctx := t.Context()
	setup, _ := c.Begin(ctx)
	setup.CreateVertex("a")
	if _, err := setup.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	t1, _ := c.Begin(ctx)
	if _, err := t1.GetVertex(ctx, weft.Handle("a")); err != nil {
		t.Fatal(err)
	}
	t2, _ := c.Begin(ctx)
	t2.SetVertexProp(weft.Handle("a"), "x", 1)
	if _, err := t2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	t1.SetVertexProp(weft.Handle("a"), "x", 2)
	t1.CreateVertex("b")
	_, err := t1.Commit(ctx)
	var we *weft.Error
	if !errors.Is(err, weft.ErrAborted) || !weft.IsRetryable(err) || !errors.As(err, &we) || !strings.Contains(we.Message, "changed") {
		t.Fatalf("stale commit: %v", err)
	}
	if st, _ := f.Status(ctx); st.Vertices != 1 {
		t.Fatalf("aborted commit wrote: %d vertices", st.Vertices)
	}
}

// Concurrent read-modify-write increments through Update lose nothing.
func TestUpdateRetriesConcurrentIncrements(t *testing.T) {
	f, c := serve(t, weft.Options{Attempts: 200, BackoffMin: time.Microsecond, BackoffMax: time.Millisecond})
	ctx := t.Context()
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex("counter")
		tx.SetVertexProp(weft.Handle("counter"), "n", 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 15
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := c.Update(ctx, func(tx *weft.Tx) error {
					v, err := tx.GetVertex(ctx, weft.Handle("counter"))
					if err != nil {
						return err
					}
					tx.SetVertexProp(weft.Handle("counter"), "n", v.Props["n"].(int64)+1)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tx, _ := c.Begin(ctx)
	v, err := tx.GetVertex(ctx, weft.Handle("counter"))
	if err != nil || v.Props["n"] != int64(workers*each) {
		t.Fatalf("counter = %v (%v), want %d", v.Props["n"], err, workers*each)
	}
	st, _ := f.Status(ctx)
	t.Logf("%d commits, %d aborts", st.Commits, st.Aborts)
}

func TestUpdateRetryPolicy(t *testing.T) {
	f, c := serve(t, weft.Options{Attempts: 4, BackoffMin: time.Microsecond, BackoffMax: 10 * time.Microsecond})
	ctx := t.Context()
	runs := 0
	body := func(tx *weft.Tx) error {
		runs++
		tx.CreateVertex("")
		return nil
	}
	// Retryable failures are retried, up to Attempts in all.
	f.Inject("Commit", engine.ErrAborted, engine.ErrSnapshotTooOld, engine.ErrOverloaded)
	if err := c.Update(ctx, body); err != nil || runs != 4 {
		t.Fatalf("after 3 retryable failures: %v, %d runs", err, runs)
	}
	runs = 0
	f.Inject("Commit", engine.ErrAborted, engine.ErrAborted, engine.ErrAborted, engine.ErrAborted)
	err := c.Update(ctx, body)
	if !errors.Is(err, weft.ErrAborted) || runs != 4 || !strings.Contains(err.Error(), "failed 4 times") {
		t.Fatalf("exhausted: %v, %d runs", err, runs)
	}
	// Without Attempts, RetryTimeout bounds the retries.
	ft, ct := serve(t, weft.Options{RetryTimeout: 30 * time.Millisecond, BackoffMin: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	aborts := make([]error, 1000)
	for i := range aborts {
		aborts[i] = engine.ErrAborted
	}
	ft.Inject("Commit", aborts...)
	runs = 0
	err = ct.Update(ctx, body)
	if !errors.Is(err, weft.ErrAborted) || runs < 2 || runs >= len(aborts) || !strings.Contains(err.Error(), "RetryTimeout") {
		t.Fatalf("past RetryTimeout: %v, %d runs", err, runs)
	}
	// Other errors are not retried.
	runs = 0
	f.Inject("Commit", fmt.Errorf("op 0: %w", txn.ErrExists))
	if err := c.Update(ctx, body); !errors.Is(err, weft.ErrAlreadyExists) || weft.IsRetryable(err) || runs != 1 {
		t.Fatalf("ALREADY_EXISTS: %v, %d runs", err, runs)
	}
	// An error of the body is returned as is, without a commit.
	mine := errors.New("mine")
	commits := f.CallCount("Commit")
	if err := c.Update(ctx, func(*weft.Tx) error { return mine }); err != mine || f.CallCount("Commit") != commits {
		t.Fatalf("body error: %v", err)
	}
	// A retryable read error inside the body is retried too.
	runs = 0
	f.Inject("GetVertex", engine.ErrSnapshotTooOld)
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		runs++
		_, err := tx.GetVertex(ctx, weft.Handle("x"))
		return err
	}); err != nil || runs != 2 {
		t.Fatalf("read retry: %v, %d runs", err, runs)
	}
	// A cancelled context stops the backoff.
	cctx, cancel := context.WithCancel(ctx)
	f.Inject("Commit", engine.ErrAborted, engine.ErrAborted)
	runs = 0
	err = c.Update(cctx, func(tx *weft.Tx) error {
		runs++
		cancel()
		tx.CreateVertex("")
		return nil
	})
	if !errors.Is(err, context.Canceled) || runs != 1 {
		t.Fatalf("cancelled: %v, %d runs", err, runs)
	}
}

func TestErrorsMapToSentinels(t *testing.T) {
	f, c := serve(t)
	ctx := t.Context()
	for _, tc := range []struct {
		inject error
		want   error
		retry  bool
	}{
		{engine.ErrAborted, weft.ErrAborted, true},
		{engine.ErrSnapshotTooOld, weft.ErrSnapshotTooOld, true},
		{engine.ErrOverloaded, weft.ErrOverloaded, true},
		{engine.ErrClosed, weft.ErrUnavailable, false},
		{txn.ErrNotFound, weft.ErrNotFound, false},
		{txn.ErrExists, weft.ErrAlreadyExists, false},
		{txn.ErrInvalid, weft.ErrInvalidArgument, false},
		{txn.ErrTooLarge, weft.ErrTooLarge, false},
		{errors.New("boom"), weft.ErrInternal, false},
	} {
		f.Inject("Commit", tc.inject)
		tx, _ := c.Begin(ctx)
		tx.CreateVertex("")
		_, err := tx.Commit(ctx)
		if !errors.Is(err, tc.want) || weft.IsRetryable(err) != tc.retry || err.Error() != tc.inject.Error() {
			t.Errorf("%v: got %v (retryable %v)", tc.inject, err, weft.IsRetryable(err))
		}
	}
	f.Inject("Run", engine.ErrUnknownProgram)
	if err := c.Run(ctx, "nope", nil, nil); !errors.Is(err, weft.ErrUnknownProgram) {
		t.Fatalf("run: %v", err)
	}
	// Bad values are caught before sending; the Tx sends nothing.
	tx, _ := c.Begin(ctx)
	tx.SetVertexProp(weft.Handle("a"), "k", struct{}{})
	tx.CreateVertex("never")
	commits := f.CallCount("Commit")
	if _, err := tx.Commit(ctx); !errors.Is(err, weft.ErrInvalidArgument) || f.CallCount("Commit") != commits {
		t.Fatalf("bad value: %v", err)
	}
	for _, bad := range []any{nil, []byte("x"), uint64(1) << 63, func() {}} {
		tx, _ := c.Begin(ctx)
		tx.SetVertexProp(weft.Handle("a"), "k", bad)
		if _, err := tx.Commit(ctx); !errors.Is(err, weft.ErrInvalidArgument) {
			t.Errorf("value %T: %v", bad, err)
		}
	}
	// Non-finite floats have no JSON form: refused before sending.
	tx, _ = c.Begin(ctx)
	tx.SetVertexProp(weft.Handle("a"), "k", []float64{1, 2, 3, math.NaN()})
	if _, err := tx.Commit(ctx); !errors.Is(err, weft.ErrInvalidArgument) {
		t.Fatalf("NaN: %v", err)
	}
	// A context deadline is the context's error.
	dctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := c.Begin(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis.Addr().String()
	lis.Close()
	c, err := weft.Dial(addr, weft.Options{CallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Begin(t.Context())
	if !errors.Is(err, weft.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestRunProgramsStatus(t *testing.T) {
	_, c := serve(t)
	ctx := t.Context()
	var out map[string]any
	if err := c.Run(ctx, "echo", map[string]any{"start": "a", "depth": 2}, &out); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != "map[depth:2 start:a]" {
		t.Fatalf("echo = %v", out)
	}
	var raw json.RawMessage
	if err := c.Run(ctx, "echo", nil, &raw); err != nil || string(raw) != "{}" {
		t.Fatalf("nil params: %s %v", raw, err)
	}
	tx, _ := c.Begin(ctx)
	var counts struct{ Vertices, Edges int }
	if err := c.RunAt(ctx, tx.Snapshot(), "count", json.RawMessage(`{}`), &counts); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx, "echo", map[string]any{"bad": func() {}}, nil); !errors.Is(err, weft.ErrInvalidArgument) {
		t.Fatalf("unmarshalable params: %v", err)
	}
	progs, err := c.Programs(ctx)
	if err != nil || len(progs) != 2 || progs[1].Name != "echo" || progs[1].Description == "" {
		t.Fatalf("programs: %+v %v", progs, err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Gatekeepers != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
}

func TestMessageOverServerBound(t *testing.T) {
	f := apitest.New()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := api.NewGRPCServer(f, nil, grpc.MaxRecvMsgSize(1024))
	go s.Serve(lis)
	defer s.Stop()
	c, err := weft.Dial(lis.Addr().String(), weft.Options{BackoffMin: time.Microsecond, BackoffMax: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runs := 0
	err = c.Update(t.Context(), func(tx *weft.Tx) error {
		runs++
		tx.SetVertexProp(weft.Handle("a"), "big", strings.Repeat("x", 4096))
		return nil
	})
	if !errors.Is(err, weft.ErrTooLarge) || weft.IsRetryable(err) || runs != 1 {
		t.Fatalf("oversized commit: %v after %d runs", err, runs)
	}
}

// Reading a vertex by alias records the alias too: rebinding the alias
// aborts the transaction, and so does binding an alias read as unbound.
func TestAliasReadsAreValidated(t *testing.T) {
	_, c := serve(t)
	ctx := t.Context()
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		tx.CreateVertex("a")
		tx.CreateVertex("b")
		tx.AddAlias(weft.Handle("a"), "boss")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t1, _ := c.Begin(ctx)
	if v, err := t1.GetVertex(ctx, weft.Alias("boss")); err != nil || v.Handle != "a" {
		t.Fatalf("boss: %+v %v", v, err)
	}
	t3, _ := c.Begin(ctx)
	if v, err := t3.GetVertex(ctx, weft.Alias("deputy")); err != nil || v.Exists {
		t.Fatalf("deputy: %+v %v", v, err)
	}
	if err := c.Update(ctx, func(tx *weft.Tx) error {
		tx.RemoveAlias(weft.Handle("a"), "boss")
		tx.AddAlias(weft.Handle("b"), "boss")
		tx.AddAlias(weft.Handle("b"), "deputy")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, tx := range map[string]*weft.Tx{"rebound": t1, "bound": t3} {
		tx.SetVertexProp(weft.Handle("a"), "x", 1)
		if _, err := tx.Commit(ctx); !errors.Is(err, weft.ErrAborted) {
			t.Errorf("%s alias: commit %v, want ErrAborted", name, err)
		}
	}
}
