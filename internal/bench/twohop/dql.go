package twohop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// The Dgraph face: the same graph as N-Quads (a node per vertex with its
// name, a [uid] predicate link per edge) bulk-loaded into the server's
// store before it starts, and the two-hop count as DQL over HTTP.

// dqlSchema indexes name for eq() and declares link a list of uids.
const dqlSchema = "name: string @index(exact) .\nlink: [uid] .\n"

// writeRDF writes g as N-Quads and the schema into dir.
func writeRDF(dir string, g *Graph) (rdf, schema string, err error) {
	rdf, schema = filepath.Join(dir, "graph.rdf"), filepath.Join(dir, "graph.schema")
	if err := os.WriteFile(schema, []byte(dqlSchema), 0o644); err != nil {
		return "", "", err
	}
	f, err := os.Create(rdf)
	if err != nil {
		return "", "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for v := range g.Vertices() {
		fmt.Fprintf(w, "_:%s <name> %q .\n", Handle(v), Handle(v))
		for _, d := range g.Out(v) {
			fmt.Fprintf(w, "_:%s <link> _:%s .\n", Handle(v), Handle(int(d)))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", "", err
	}
	return rdf, schema, f.Close()
}

// bulkLoad builds the store at dataDir from the N-Quads (weft load --bulk).
func bulkLoad(ctx context.Context, o *Options, dataDir, rdf, schema string) (LoadStats, error) {
	start := time.Now()
	args := []string{"load", "--bulk", "--rdf", rdf, "--schema", schema, "--data-dir", dataDir, "--no-progress"}
	if o.Shards > 0 {
		args = append(args, "--shards", strconv.Itoa(o.Shards))
	}
	if out, err := exec.CommandContext(ctx, o.Bin, args...).CombinedOutput(); err != nil {
		return LoadStats{}, fmt.Errorf("bench: weft load --bulk: %v\n%s", err, out)
	}
	secs := time.Since(start).Seconds()
	return LoadStats{Seconds: secs}, nil
}

// dqlQuery is the two-hop count of the vertex named h in DQL.
func dqlQuery(h string) []byte {
	return []byte(`{ var(func: eq(name, "` + h + `")) { link { c as link } } q(func: uid(c)) { count(uid) } }`)
}

// dqlIface is DQL over the Dgraph face's HTTP API (POST /query,
// application/dql, read-only), keep-alive connections, one per client.
func dqlIface(addr string) iface {
	url := "http://" + addr + "/query?ro=true"
	return iface{name: "dql-http", count: true, run: func(ctx context.Context, srcs []int, clients int, ready func()) (cellRun, error) {
		tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		qs := make([][]byte, len(srcs))
		for i, v := range srcs {
			qs[i] = dqlQuery(Handle(v))
		}
		return closedLoop(ctx, srcs, clients, ready, func(ctx context.Context, i int) (int, error) {
			body, err := post(ctx, hc, url, "application/dql", qs[i])
			if err != nil {
				return 0, err
			}
			var r struct {
				Data struct {
					Q []struct {
						Count int `json:"count"`
					} `json:"q"`
				} `json:"data"`
				Errors []json.RawMessage `json:"errors"`
			}
			if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) > 0 || len(r.Data.Q) != 1 {
				return 0, fmt.Errorf("bench: a DQL answer without one count (%v): %.200s", err, body)
			}
			return r.Data.Q[0].Count, nil
		})
	}}
}
