package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/weft-db/weft/internal/api/console"
	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/wire/apicode"
)

// HTTPOptions tune the HTTP API.
type HTTPOptions struct {
	// BodyMax bounds a request body in bytes (default RequestBytesMaxDefault);
	// a larger body answers 413 TOO_LARGE.
	BodyMax int64
	// DgraphHTTP is the Dgraph face's HTTP address the console's DQL editor
	// forwards to ("": the face is off).
	DgraphHTTP string
	// Cluster answers the console's cluster view (nil: this process's own
	// view, from db.Status).
	Cluster console.ClusterSource
}

// RequestBytesMaxDefault bounds one request (HTTP body or gRPC message): a
// full transaction of short operations fits with room to spare.
const RequestBytesMaxDefault = 16 << 20

// healthTimeout bounds the Status call behind /healthz.
const healthTimeout = 2 * time.Second

type httpAPI struct {
	svc     service
	m       *Metrics
	bodyMax int64
}

// opFunc handles one API request: it returns the JSON answer or an error.
type opFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// NewHTTPHandler returns the HTTP/JSON API over db (routes in docs/api.md),
// recording metrics in m (nil: none; /metrics then answers 404).
func NewHTTPHandler(db engine.API, m *Metrics, opts HTTPOptions) http.Handler {
	h := &httpAPI{svc: service{db: db}, m: m, bodyMax: opts.BodyMax}
	if h.bodyMax <= 0 {
		h.bodyMax = RequestBytesMaxDefault
	}
	mux := http.NewServeMux()
	routes := []struct {
		method, path, op string
		fn               opFunc
	}{
		{"POST", "/v1/begin", "begin", h.begin},
		{"POST", "/v1/vertex", "get_vertex", h.getVertex},
		{"POST", "/v1/vertices", "get_vertices", h.getVertices},
		{"POST", "/v1/edge", "get_edge", h.getEdge},
		{"POST", "/v1/commit", "commit", h.commit},
		{"POST", "/v1/run/{program}", "run", h.run},
		{"GET", "/v1/programs", "programs", h.programs},
		{"GET", "/v1/status", "status", h.status},
		{"GET", "/v1/placement", "placement", h.placement},
		{"POST", "/v1/move", "move", h.move},
		{"GET", "/healthz", "healthz", h.healthz},
	}
	for _, rt := range routes {
		mux.Handle(rt.method+" "+rt.path, h.handle(rt.op, rt.fn))
		// The same path without a method: any other method is answered in JSON.
		mux.Handle(rt.path, methodNotAllowed(rt.method))
	}
	if m != nil {
		mux.Handle("GET /metrics", m.Handler())
		mux.Handle("/metrics", methodNotAllowed("GET"))
	}
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(OpenAPI)
	})
	mux.Handle("/openapi.yaml", methodNotAllowed("GET"))
	// The web console (package console) at / and /console/; no JSON API path
	// lies below /console/.
	copts := console.Options{DgraphHTTP: opts.DgraphHTTP, Cluster: opts.Cluster}
	if copts.Cluster == nil {
		copts.Cluster = processView(db)
	}
	if m != nil {
		copts.Gather = m.Registry()
	}
	ch := console.Handler(copts)
	mux.Handle("GET /{$}", ch)
	mux.Handle(console.Prefix, ch)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &Error{Code: apicode.CodeNotFound, Message: fmt.Sprintf("no such endpoint: %s %s (see /openapi.yaml)", r.Method, r.URL.Path)})
	})
	return mux
}

// handle runs one operation, writes its answer or error, and records it.
func (h *httpAPI) handle(op string, fn opFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		out, err := fn(w, r)
		if err == nil {
			var body []byte
			if body, err = marshal(out); err == nil {
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
			}
		}
		if err != nil {
			writeError(w, err)
		}
		h.m.observe("http", op, CodeOf(err), err, time.Since(start))
	})
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("api: encoding the answer: %w", err)
	}
	return buf.Bytes(), nil
}

// writeError answers {"error": {"code", "message", "retryable"}} with the
// code's HTTP status. OVERLOADED also says when to come back.
func writeError(w http.ResponseWriter, err error) {
	code := CodeOf(err)
	body, _ := marshal(errorJSON{Error: errorBody{Code: code, Message: err.Error(), Retryable: code.Retryable()}})
	w.Header().Set("Content-Type", "application/json")
	if code == apicode.CodeOverloaded {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code.HTTPStatus())
	w.Write(body)
}

func methodNotAllowed(allowed string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		writeError(w, &Error{Code: apicode.CodeMethodNotAllowed,
			Message: fmt.Sprintf("method %s not allowed on %s (use %s)", r.Method, r.URL.Path, allowed)})
	})
}

func (h *httpAPI) begin(w http.ResponseWriter, r *http.Request) (any, error) {
	var req struct{} // empty body or {}
	if err := decodeBody(w, r, h.bodyMax, &req, true); err != nil {
		return nil, err
	}
	snap, err := h.svc.db.Begin(r.Context())
	if err != nil {
		return nil, err
	}
	return snapshotJSON{Snapshot: snap.Token}, nil
}

func (h *httpAPI) getVertex(w http.ResponseWriter, r *http.Request) (any, error) {
	var req vertexRequest
	if err := decodeBody(w, r, h.bodyMax, &req, false); err != nil {
		return nil, err
	}
	opts := readOptions(req.Props, req.Edges, req.Aliases, req.EdgesMax)
	ref := engine.VertexRef{Name: req.Vertex, Alias: req.VertexAlias}
	v, snap, err := h.svc.getVertex(r.Context(), req.Snapshot, ref, opts)
	if err != nil {
		return nil, err
	}
	return vertexResponse{Snapshot: snap.Token, Vertex: vertexToJSON(v)}, nil
}

func (h *httpAPI) getVertices(w http.ResponseWriter, r *http.Request) (any, error) {
	var req verticesRequest
	if err := decodeBody(w, r, h.bodyMax, &req, false); err != nil {
		return nil, err
	}
	refs := make([]engine.VertexRef, len(req.Vertices))
	for i, a := range req.Vertices {
		refs[i] = engine.VertexRef{Name: a.Vertex, Alias: a.VertexAlias}
	}
	vs, snap, err := h.svc.getVertices(r.Context(), req.Snapshot, refs, readOptions(req.Props, req.Edges, req.Aliases, req.EdgesMax))
	if err != nil {
		return nil, err
	}
	out := verticesResponse{Snapshot: snap.Token, Vertices: make([]vertexJSON, len(vs))}
	for i, v := range vs {
		out.Vertices[i] = vertexToJSON(v)
	}
	return out, nil
}

func (h *httpAPI) getEdge(w http.ResponseWriter, r *http.Request) (any, error) {
	var req edgeRequest
	if err := decodeBody(w, r, h.bodyMax, &req, false); err != nil {
		return nil, err
	}
	src := engine.VertexRef{Name: req.Src, Alias: req.SrcAlias}
	e, snap, err := h.svc.getEdge(r.Context(), req.Snapshot, src, req.Edge)
	if err != nil {
		return nil, err
	}
	return edgeResponse{Snapshot: snap.Token, Edge: edgeToJSON(e, true)}, nil
}

func (h *httpAPI) commit(w http.ResponseWriter, r *http.Request) (any, error) {
	var req commitRequest
	if err := decodeBody(w, r, h.bodyMax, &req, false); err != nil {
		return nil, err
	}
	reads, ops, err := req.decode()
	if err != nil {
		return nil, err
	}
	res, err := h.svc.commit(r.Context(), reads, ops)
	if err != nil {
		return nil, err
	}
	handles := res.Handles
	if handles == nil {
		handles = []string{}
	}
	return commitResponse{Handles: handles, Snapshot: res.Snapshot.Token}, nil
}

// run takes the program's parameters as the whole body (any JSON value;
// empty: {}) and an optional ?at=<snapshot>.
func (h *httpAPI) run(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	for k := range q {
		if k != "at" {
			return nil, invalid(fmt.Sprintf("unknown query parameter %q (only \"at\")", k))
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.bodyMax))
	if err != nil {
		return nil, bodyError(err, h.bodyMax)
	}
	out, err := h.svc.run(r.Context(), r.PathValue("program"), body, q.Get("at"))
	if err != nil {
		return nil, err
	}
	return runResponse{Result: out}, nil
}

func (h *httpAPI) programs(http.ResponseWriter, *http.Request) (any, error) {
	ps := h.svc.db.Programs()
	if ps == nil {
		ps = []engine.ProgramInfo{}
	}
	return programsResponse{Programs: ps}, nil
}

func (h *httpAPI) status(_ http.ResponseWriter, r *http.Request) (any, error) {
	return h.svc.status(r.Context())
}

// healthz answers 200 {"status": "ok"} while the engine answers Status, and
// the engine's error (503 UNAVAILABLE while shutting down) otherwise.
func (h *httpAPI) healthz(_ http.ResponseWriter, r *http.Request) (any, error) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if _, err := h.svc.status(ctx); err != nil {
		return nil, err
	}
	return map[string]string{"status": "ok"}, nil
}
