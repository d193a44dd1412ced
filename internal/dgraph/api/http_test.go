package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type httpClient struct {
	t     *testing.T
	base  string
	token string
}

func newHTTP(t *testing.T, f *fixture) *httpClient {
	srv := httptest.NewServer(f.s.Handler())
	t.Cleanup(srv.Close)
	return &httpClient{t: t, base: srv.URL}
}

// post sends body and decodes the JSON answer.
func (c *httpClient) post(path, ctype, body string) map[string]any {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if c.token != "" {
		req.Header.Set("X-Dgraph-AccessToken", c.token)
	}
	return c.do(req)
}

func (c *httpClient) do(req *http.Request) map[string]any {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		c.t.Fatalf("%s: content type %q", req.URL.Path, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("%s: answer %s: %v", req.URL.Path, b, err)
	}
	return m
}

// ok checks that an answer has no errors and returns its data.
func ok(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if m["errors"] != nil {
		t.Fatalf("errors: %v", m["errors"])
	}
	d, _ := m["data"].(map[string]any)
	return d
}

// errMsg returns the first error's message and code.
func errMsg(t *testing.T, m map[string]any) (string, string) {
	t.Helper()
	es, _ := m["errors"].([]any)
	if len(es) == 0 {
		t.Fatalf("no errors in %v", m)
	}
	e := es[0].(map[string]any)
	return e["message"].(string), e["extensions"].(map[string]any)["code"].(string)
}

func txnOf(m map[string]any) map[string]any {
	ext, _ := m["extensions"].(map[string]any)
	tx, _ := ext["txn"].(map[string]any)
	return tx
}

func TestHTTPAlterMutateQueryCommit(t *testing.T) {
	f := newFixture(t, "", nil)
	c := newHTTP(t, f)
	ok(t, c.post("/alter", "application/dql", `name: string @index(exact) .
age: int .`))
	// RDF, committed at once.
	m := c.post("/mutate?commitNow=true", "application/rdf", `{ set { _:a <name> "Ada" .
_:a <age> "36" . } }`)
	d := ok(t, m)
	if d["code"] != "Success" || d["uids"].(map[string]any)["a"] == nil || txnOf(m)["commit_ts"] == nil {
		t.Fatalf("mutate answer %v", m)
	}
	// JSON, in a transaction committed through /commit.
	m = c.post("/mutate", "application/json", `{"set": [{"uid": "_:b", "name": "Bea", "age": 40}]}`)
	ok(t, m)
	tx := txnOf(m)
	start := uint64(tx["start_ts"].(float64))
	if start == 0 || tx["commit_ts"] != nil || len(tx["keys"].([]any)) == 0 {
		t.Fatalf("txn %v: want start_ts and keys, no commit_ts", tx)
	}
	q := `{ q(func: eq(name, ["Ada", "Bea"]), orderasc: age) { name age } }`
	if got := ok(t, c.post("/query", "application/dql", q)); len(names(got, "q")) != 1 {
		t.Fatalf("before commit: %v, want Ada only", got)
	}
	m = c.post(fmt.Sprintf("/commit?startTs=%d", start), "application/json", `{"keys": []}`)
	ok(t, m)
	if txnOf(m)["commit_ts"] == nil {
		t.Fatalf("commit answer %v", m)
	}
	got := ok(t, c.post("/query", "application/json", `{"query": "query q($n: string) { q(func: eq(name, $n)) { name age } }", "variables": {"$n": "Bea"}}`))
	if n := names(got, "q"); len(n) != 1 || n[0] != "Bea" {
		t.Fatalf("after commit: %v", got)
	}
	if ts := txnOf(c.post("/query", "application/dql", q))["start_ts"]; ts == nil {
		t.Fatal("query answer without extensions.txn.start_ts")
	}
	// Drop a predicate with an Operation as JSON.
	ok(t, c.post("/alter", "application/json", `{"drop_attr": "age"}`))
	sch, err := f.g.Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, found := sch.Predicate("age"); found {
		t.Fatal("age still in the schema")
	}
}

func TestHTTPUpsertAndAbort(t *testing.T) {
	f := newFixture(t, "email: string @index(exact) @upsert .", nil)
	c := newHTTP(t, f)
	up := `upsert {
  query { v as var(func: eq(email, "a@b.c")) }
  mutation @if(eq(len(v), 0)) { set {
    _:n <email> "a@b.c" .
  } }
}`
	for i := 0; i < 3; i++ {
		ok(t, c.post("/mutate?commitNow=true", "application/rdf", up))
	}
	got := ok(t, c.post("/query", "application/dql", `{ q(func: eq(email, "a@b.c")) { uid } }`))
	if n := len(got["q"].([]any)); n != 1 {
		t.Fatalf("%d nodes after three upserts, want 1", n)
	}
	// JSON upsert with cond; then an aborted transaction.
	m := c.post("/mutate", "application/json", `{"query": "{ v as var(func: eq(email, \"x@y.z\")) }", "cond": "@if(eq(len(v), 0))", "set": {"uid": "_:n", "email": "x@y.z"}}`)
	ok(t, m)
	start := uint64(txnOf(m)["start_ts"].(float64))
	d := ok(t, c.post(fmt.Sprintf("/commit?startTs=%d&abort=true", start), "application/json", ``))
	if d["code"] != "Success" {
		t.Fatalf("abort answer %v", d)
	}
	got = ok(t, c.post("/query", "application/dql", `{ q(func: eq(email, "x@y.z")) { uid } }`))
	if n := len(got["q"].([]any)); n != 0 {
		t.Fatalf("aborted upsert visible: %v", got)
	}
	msg, code := errMsg(t, c.post(fmt.Sprintf("/commit?startTs=%d", start), "application/json", ``))
	if code != "ErrorAborted" || !strings.Contains(msg, "Please retry") {
		t.Fatalf("commit after abort: %s %s", code, msg)
	}
}

func TestHTTPLoginACLAndErrors(t *testing.T) {
	f := newFixture(t, "name: string @index(exact) .", withACL)
	c := newHTTP(t, f)
	msg, code := errMsg(t, c.post("/query", "application/dql", `{ q(func: has(name)) { name } }`))
	if code != "ErrorUnauthorized" || !strings.Contains(msg, "accessJwt") {
		t.Fatalf("no token: %s %s", code, msg)
	}
	msg, _ = errMsg(t, c.post("/login", "application/json", `{"userid": "groot", "password": "nope"}`))
	if !strings.Contains(msg, "invalid username or password") {
		t.Fatalf("wrong password: %s", msg)
	}
	d := ok(t, c.post("/login", "application/json", `{"userid": "groot", "password": "password"}`))
	c.token = d["accessJWT"].(string)
	ok(t, c.post("/query", "application/dql", `{ q(func: has(name)) { name } }`))
	d = ok(t, c.post("/login", "application/json", fmt.Sprintf(`{"refresh_token": %q}`, d["refreshJWT"])))
	if d["accessJWT"] == nil {
		t.Fatalf("refresh answer %v", d)
	}
	// Errors: a bad query, an empty body, a wrong method, /health.
	_, code = errMsg(t, c.post("/query", "application/dql", `{ q(func: ) }`))
	if code == "" {
		t.Fatal("no error code for a bad query")
	}
	resp, err := http.Get(c.base + "/query")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /query: %d", resp.StatusCode)
	}
	resp, err = http.Get(c.base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || len(h) != 1 || h[0]["status"] != "healthy" {
		t.Fatalf("health %v %v", h, err)
	}
	resp.Body.Close()
}

func TestHTTPGzipAndBodyLimit(t *testing.T) {
	f := newFixture(t, "name: string @index(exact) .", func(c *Config) { c.RequestBytesMax = 1 << 10 })
	c := newHTTP(t, f)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{ set { _:a <name> "zipped" . } }`))
	zw.Close()
	req, _ := http.NewRequest(http.MethodPost, c.base+"/mutate?commitNow=true", &buf)
	req.Header.Set("Content-Type", "application/rdf")
	req.Header.Set("Content-Encoding", "gzip")
	ok(t, c.do(req))
	got := ok(t, c.post("/query", "application/dql", `{ q(func: eq(name, "zipped")) { name } }`))
	if len(names(got, "q")) != 1 {
		t.Fatalf("gzip mutation lost: %v", got)
	}
	big := `{ set { _:a <name> "` + strings.Repeat("x", 2<<10) + `" . } }`
	req, _ = http.NewRequest(http.MethodPost, c.base+"/mutate?commitNow=true", strings.NewReader(big))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: status %d", resp.StatusCode)
	}
}
