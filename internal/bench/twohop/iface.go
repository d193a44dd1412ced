package twohop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/client/weft"
)

// cellRun is what one cell's clients did: each query's answer (the count
// of distinct c) and latency, and the wall time from the first query's
// start to the last one's end.
type cellRun struct {
	got     []int
	latency []time.Duration
	wall    time.Duration
}

// iface is one way of asking the query: run sends query i (source
// srcs[i]) for every i from clients concurrent clients. Before it starts
// timing, run calls ready (the bench reads the server's CPU there); it
// returns when every query was answered or one failed.
type iface struct {
	name  string
	count bool // asks for the count alone (aggregate) rather than the handles
	run   func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error)
	// cpu reads the CPU time of the server answering (nil: weft serve's).
	cpu func() time.Duration
}

// ifaceName is an interface's name: its base, with -count when it asks
// for the count alone.
func ifaceName(base string, count bool) string {
	if count {
		return base + "-count"
	}
	return base
}

// params is traverse_props' request for the two-hop set of v.
func params(v int, count bool) []byte {
	p := `{"src":"` + Handle(v) + `","node_props":[{},{},{}],"edge_props":[{},{}]`
	if count {
		return []byte(p + `,"aggregate":"count"}`)
	}
	return []byte(p + "}")
}

// answer is the count in a traverse_props result: its count, or how many
// handles it lists.
func answer(raw []byte, count bool) (int, error) {
	var r struct {
		Nodes []string `json:"nodes"`
		Count *int     `json:"count"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return 0, fmt.Errorf("bench: a result that is not traverse_props': %w: %.200s", err, raw)
	}
	if count {
		if r.Count == nil {
			return 0, fmt.Errorf("bench: a count without count: %.200s", raw)
		}
		return *r.Count, nil
	}
	return len(r.Nodes), nil
}

// closedLoop runs every query from clients goroutines, each taking the next
// query as soon as its last one is answered.
func closedLoop(ctx context.Context, srcs []int, clients int, ready func(), query func(ctx context.Context, i int) (int, error)) (cellRun, error) {
	out := cellRun{got: make([]int, len(srcs)), latency: make([]time.Duration, len(srcs))}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		err     error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(srcs) || ctx.Err() != nil {
					return
				}
				t := time.Now()
				n, qerr := query(ctx, i)
				out.latency[i] = time.Since(t)
				if qerr != nil {
					errOnce.Do(func() { err = fmt.Errorf("query %d (%s): %w", i, Handle(srcs[i]), qerr); cancel() })
					return
				}
				out.got[i] = n
			}
		}()
	}
	wg.Wait()
	out.wall = time.Since(start)
	return out, err
}

// grpcIface is the Go client over gRPC, one client shared by the
// goroutines as an application shares it.
func grpcIface(addr string, count bool) iface {
	return iface{name: ifaceName("go-grpc", count), count: count, run: func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error) {
		c, err := weft.Dial(addr)
		if err != nil {
			return cellRun{}, err
		}
		defer c.Close()
		ps := make([][]byte, len(srcs))
		for i, v := range srcs {
			ps[i] = params(v, count)
		}
		return closedLoop(ctx, srcs, clients, ready, func(ctx context.Context, i int) (int, error) {
			raw, err := c.RunRaw(ctx, "", "traverse_props", ps[i])
			if err != nil {
				return 0, err
			}
			return answer(raw, count)
		})
	}}
}

// httpIface is a Go client of the HTTP/JSON API: POST /v1/run/traverse_props
// over keep-alive connections, one per client.
func httpIface(addr string, count bool) iface {
	url := "http://" + addr + "/v1/run/traverse_props"
	return iface{name: ifaceName("go-http", count), count: count, run: func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error) {
		tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		ps := make([][]byte, len(srcs))
		for i, v := range srcs {
			ps[i] = params(v, count)
		}
		return closedLoop(ctx, srcs, clients, ready, func(ctx context.Context, i int) (int, error) {
			body, err := post(ctx, hc, url, "application/json", ps[i])
			if err != nil {
				return 0, err
			}
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return 0, fmt.Errorf("bench: an HTTP answer without result: %w", err)
			}
			return answer(r.Result, count)
		})
	}}
}

// post sends body to url and returns the answer of a 200, or an error
// quoting any other.
func post(ctx context.Context, hc *http.Client, url, contentType string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, out)
	}
	return out, nil
}
