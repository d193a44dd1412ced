package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
	"github.com/weft-db/weft/internal/testproc"
)

// The Dgraph face on a cluster: weft gatekeeper processes given weft
// serve's Dgraph flags serve Dgraph's HTTP API over the cluster's shards
// (one batched read per shard and query level, Shard.ReadBatch). Data
// loaded through them answers queries as the same data does on a single
// in-process engine.

// dgraphSchema and dgraphRDF are a small film graph: people, films,
// genres; reverse edges, counts, language tags, an int and a datetime.
const dgraphSchema = `
name: string @index(exact, term) @lang .
directed_by: [uid] @reverse .
starring: [uid] @reverse @count .
genre: [uid] @count .
rating: int @index(int) .
released: datetime @index(year) .
`

const dgraphRDF = `{ set {
_:ridley <name> "Ridley Scott" .
_:ridley <name> "Ridley Scott"@en .
_:jim <name> "James Cameron"@en .
_:jim <name> "James Cameron" .
_:sig <name> "Sigourney Weaver" .
_:sig <name> "Sigourney Weaver"@en .
_:arnie <name> "Arnold Schwarzenegger" .
_:harrison <name> "Harrison Ford" .
_:scifi <name> "Science fiction" .
_:action <name> "Action" .
_:horror <name> "Horror" .
_:alien <name> "Alien" .
_:alien <name> "Alien"@en .
_:alien <name> "Alien, le huitième passager"@fr .
_:alien <directed_by> _:ridley .
_:alien <starring> _:sig .
_:alien <genre> _:scifi .
_:alien <genre> _:horror .
_:alien <rating> "8" .
_:alien <released> "1979-05-25" .
_:aliens <name> "Aliens" .
_:aliens <name> "Aliens"@en .
_:aliens <directed_by> _:jim .
_:aliens <starring> _:sig .
_:aliens <genre> _:scifi .
_:aliens <genre> _:action .
_:aliens <rating> "8" .
_:aliens <released> "1986-07-18" .
_:t2 <name> "Terminator 2" .
_:t2 <directed_by> _:jim .
_:t2 <starring> _:arnie .
_:t2 <genre> _:scifi .
_:t2 <genre> _:action .
_:t2 <rating> "9" .
_:t2 <released> "1991-07-03" .
_:blade <name> "Blade Runner" .
_:blade <directed_by> _:ridley .
_:blade <starring> _:harrison .
_:blade <genre> _:scifi .
_:blade <rating> "8" .
_:blade <released> "1982-06-25" .
_:gladiator <name> "Gladiator" .
_:gladiator <directed_by> _:ridley .
_:gladiator <genre> _:action .
_:gladiator <rating> "7" .
_:gladiator <released> "2000-05-05" .
} }`

// dgraphQueries name no uids: both sides assign their own.
var dgraphQueries = []string{
	// The report's shape: director → films → genres, and film → directors → films.
	`{ q(func: eq(name, "Ridley Scott")) { name director: ~directed_by (orderasc: name) { name genre (orderasc: name) { name } } } }`,
	`{ q(func: has(directed_by), orderasc: name) { name name@en name@fr directed_by { name ~directed_by (orderasc: name) { name } } } }`,
	`{ q(func: has(starring), orderdesc: released) { name rating released count(genre) starring { name@. } } }`,
	`{ q(func: ge(rating, 8), orderasc: name) @filter(anyofterms(name, "alien aliens runner")) { name rating genre @filter(eq(name, "Action")) { name } } }`,
	`{ q(func: has(genre), orderasc: name, first: 3, offset: 1) { name count(~starring) } }`,
	`{ var(func: eq(name, "James Cameron")) { f as ~directed_by } q(func: uid(f), orderasc: name) { name starring { name } } }`,
	`{ q(func: eq(name@en, "Sigourney Weaver")) { name films: ~starring (orderasc: released) { name released genre (orderasc: name) { name } } } }`,
	`{ q(func: has(rating)) @groupby(rating) { count(uid) } }`,
	`{ q(func: has(name), orderasc: name) @filter(not has(directed_by) and not has(genre)) { name } }`,
}

// dgraphCluster starts Kronos, shards and gatekeeper processes (as
// startCluster) with every gatekeeper serving Dgraph's HTTP API in
// placement; it returns the gatekeepers' Dgraph HTTP base URLs once each
// serves.
func dgraphCluster(t *testing.T, gatekeepers, shards int, placement string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes")
	}
	pg := pgtest.Shared(t)
	schema := pgtest.Schema(t)
	bin := testproc.Build(t, "github.com/weft-db/weft/cmd/weft")
	addrs, err := testproc.FreeAddrs(1 + shards + 3*gatekeepers)
	if err != nil {
		t.Fatal(err)
	}
	kronosAddr, shardAddrs := addrs[0], addrs[1:1+shards]
	gkAddrs, dgAddrs, apiAddrs := addrs[1+shards:1+shards+gatekeepers], addrs[1+shards+gatekeepers:1+shards+2*gatekeepers],
		addrs[1+shards+2*gatekeepers:]
	dir := t.TempDir()
	testproc.Start(t, testproc.Spec{Name: "kronos", Path: bin, Ready: "kronos replica", LogPath: filepath.Join(dir, "kronos.log"),
		Args: []string{"kronos", "--id", "1", "--addr", kronosAddr, "--data-dir", filepath.Join(dir, "kronos"), "--sync=false"}})
	common := []string{"--epoch", "1", "--gatekeepers", fmt.Sprint(gatekeepers), "--shards", fmt.Sprint(shards),
		"--gatekeeper-addrs", strings.Join(gkAddrs, ","), "--shard-addrs", strings.Join(shardAddrs, ","),
		"--kronos", kronosAddr, "--postgres-url", pg.URL(), "--postgres-schema", schema}
	for i := range shards {
		testproc.Start(t, testproc.Spec{Name: fmt.Sprintf("shard%d", i), Path: bin, Ready: " serving on ",
			LogPath: filepath.Join(dir, fmt.Sprintf("shard%d.log", i)),
			Args:    append([]string{"shard", "--id", fmt.Sprint(i), "--listen", shardAddrs[i]}, common...)})
	}
	var wg sync.WaitGroup
	var urls []string
	for i := range gatekeepers {
		urls = append(urls, "http://"+dgAddrs[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			testproc.Start(t, testproc.Spec{Name: fmt.Sprintf("gatekeeper%d", i), Path: bin,
				Ready: fmt.Sprintf("gatekeeper %d: Dgraph HTTP API on", i), ReadyTimeout: time.Minute,
				LogPath: filepath.Join(dir, fmt.Sprintf("gatekeeper%d.log", i)),
				Args: append([]string{"gatekeeper", "--id", fmt.Sprint(i), "--listen", gkAddrs[i], "--grpc-addr", apiAddrs[i],
					"--http-addr", "", "--dgraph-http", dgAddrs[i], "--dgraph-placement", placement}, common...)})
		}()
	}
	wg.Wait()
	return urls
}

// dgraphReference is the same Dgraph face over a single in-process
// engine: what weft serve --dgraph-http answers.
func dgraphReference(t *testing.T, placement string) string {
	t.Helper()
	ecfg := engine.DefaultConfig()
	ecfg.Sync, ecfg.DataDir = false, ""
	db, err := engine.Open(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	gcfg := dgraph.DefaultConfig()
	gcfg.Placement = placement
	g, err := dgraph.Open(context.Background(), db, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := dgraphapi.New(g, dgraphapi.NewExecutor(g), dgraphapi.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// dgraphPost posts body to base+path and returns the answer's "data",
// failing the test on an HTTP error or a Dgraph error.
func dgraphPost(t *testing.T, base, path, contentType, body string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s%s: %v", base, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode != http.StatusOK || len(env.Errors) > 0 {
		t.Fatalf("POST %s%s: %s: %s (%v)", base, path, resp.Status, bytes.TrimSpace(b), err)
	}
	return env.Data
}

// TestDgraphFaceOnCluster: through two gatekeeper processes over three
// shard processes, in both placements, the schema goes in through one
// gatekeeper and the data through the other, and every query answers
// through each gatekeeper exactly what the single-process engine answers
// for the same data.
func TestDgraphFaceOnCluster(t *testing.T) {
	for _, placement := range []string{dgraph.PlacementVertex, dgraph.PlacementPredicate} {
		t.Run(placement, func(t *testing.T) {
			gks := dgraphCluster(t, 2, 3, placement)
			ref := dgraphReference(t, placement)
			for i, base := range []string{ref, gks[0]} {
				dgraphPost(t, base, "/alter", "application/dql", dgraphSchema)
				mutBase := base
				if i == 1 {
					mutBase = gks[1] // the data through the other gatekeeper
				}
				dgraphPost(t, mutBase, "/mutate?commitNow=true", "application/rdf", dgraphRDF)
			}
			for _, q := range dgraphQueries {
				want := canonJSON(t, dgraphPost(t, ref, "/query", "application/dql", q))
				if want == `{"q":[]}` || want == "{}" {
					t.Fatalf("query %s: the reference answers nothing (a useless check): %s", q, want)
				}
				t.Logf("%s\n  -> %s", q, want)
				for k, base := range gks {
					for _, ro := range []string{"", "?ro=true"} {
						got := canonJSON(t, dgraphPost(t, base, "/query"+ro, "application/dql", q))
						if got != want {
							t.Errorf("%s placement, gatekeeper %d%s, query %s:\ncluster   %s\nreference %s", placement, k, ro, q, got, want)
						}
					}
				}
			}
		})
	}
}

// canonJSON re-encodes data with sorted keys, so that answers compare by
// value (the order of a node's fields is not part of the answer).
func canonJSON(t *testing.T, data json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
