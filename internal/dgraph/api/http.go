package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weft-db/weft/internal/dgraph/dql"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// Handler returns Dgraph's HTTP API: POST /query, /mutate, /commit,
// /alter, /login, /admin (namespaces: admin.go) and GET /health, with Dgraph's request and response
// shapes (docs/dgraph.md). Errors answer HTTP 200 with
// {"errors":[{"message", "extensions":{"code"}}]}, as Dgraph does, except
// a wrong method (405) and an oversized body (413).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/query", s.post(s.httpQuery))
	mux.HandleFunc("/mutate", s.post(s.httpMutate))
	mux.HandleFunc("/commit", s.post(s.httpCommit))
	mux.HandleFunc("/alter", s.post(s.httpAlter))
	mux.HandleFunc("/login", s.post(s.httpLogin))
	mux.HandleFunc("/health", s.httpHealth)
	mux.HandleFunc("/admin", s.httpAdmin)
	mux.HandleFunc("/moveTablet", s.httpMoveTablet)
	return mux
}

type httpHandler func(ctx context.Context, r *http.Request, body []byte) (any, map[string]any, error)

// post wraps a handler: method, body (gzip too, bounded), answer shape.
func (s *Server) post(h httpHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			writeJSON(w, http.StatusMethodNotAllowed, errorBody("ErrorInvalidMethod", "Invalid method"))
			return
		}
		body, err := s.readBody(r)
		if err != nil {
			status := http.StatusBadRequest
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				status = http.StatusRequestEntityTooLarge
			}
			writeJSON(w, status, errorBody("ErrorInvalidRequest", err.Error()))
			return
		}
		data, ext, err := h(r.Context(), r, body)
		if err != nil {
			e := classify(err)
			code := map[Code]string{CodeInvalid: "ErrorInvalidRequest", CodeAborted: "ErrorAborted",
				CodeUnauthenticated: "ErrorUnauthorized", CodePermission: "ErrorUnauthorized",
				CodeOverloaded: "ErrorOverloaded", CodeUnimplemented: "ErrorUnimplemented"}[e.Code]
			if code == "" {
				code = "Error"
			}
			writeJSON(w, http.StatusOK, errorBody(code, e.Msg))
			return
		}
		out := map[string]any{"data": data}
		if ext != nil {
			out["extensions"] = ext
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Server) readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = http.MaxBytesReader(nil, r.Body, s.cfg.RequestBytesMax)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		rd = io.LimitReader(zr, s.cfg.RequestBytesMax+1)
	}
	b, err := io.ReadAll(rd)
	if err == nil && int64(len(b)) > s.cfg.RequestBytesMax {
		err = &http.MaxBytesError{Limit: s.cfg.RequestBytesMax}
	}
	return b, err
}

func errorBody(code, msg string) map[string]any {
	return map[string]any{"errors": []map[string]any{{"message": msg, "extensions": map[string]string{"code": code}}}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) httpPrincipal(r *http.Request) (principal, error) {
	return s.acl.authorize(r.Header.Get("X-Dgraph-AccessToken"))
}

func mediaType(r *http.Request) string {
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return t
}

// txnParams reads startTs and hash.
func txnParams(r *http.Request, rq *request) error {
	q := r.URL.Query()
	if v := q.Get("startTs"); v != "" {
		ts, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return errorf(CodeInvalid, "startTs %q is not a number", v)
		}
		rq.startTs = ts
	}
	rq.hash = q.Get("hash")
	return nil
}

func (s *Server) extensions(out *outcome) map[string]any {
	tx := map[string]any{"start_ts": out.txn.StartTs}
	if out.txn.CommitTs != 0 {
		tx["commit_ts"] = out.txn.CommitTs
	}
	if len(out.txn.Keys) > 0 {
		tx["keys"] = out.txn.Keys
	}
	if len(out.txn.Preds) > 0 {
		tx["preds"] = out.txn.Preds
	}
	if out.txn.Hash != "" {
		tx["hash"] = out.txn.Hash
	}
	return map[string]any{"txn": tx, "server_latency": map[string]uint64{
		"processing_ns": out.latency.GetProcessingNs(), "total_ns": out.latency.GetTotalNs()}}
}

// httpQuery is POST /query: DQL text (application/dql) or JSON
// {"query", "variables"}; ?startTs, ?hash, ?ro, ?be.
func (s *Server) httpQuery(ctx context.Context, r *http.Request, body []byte) (any, map[string]any, error) {
	p, err := s.httpPrincipal(r)
	if err != nil {
		return nil, nil, err
	}
	rq := &request{}
	if err := txnParams(r, rq); err != nil {
		return nil, nil, err
	}
	q := r.URL.Query()
	rq.readOnly, rq.bestEffort = q.Get("ro") == "true", q.Get("be") == "true"
	rq.readOnly = rq.readOnly || rq.bestEffort
	if q.Get("respFormat") == "rdf" {
		return nil, nil, errorf(CodeUnimplemented, "respFormat rdf is not supported")
	}
	if mediaType(r) == "application/json" {
		var in struct {
			Query     string          `json:"query"`
			Variables json.RawMessage `json:"variables"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, nil, errorf(CodeInvalid, "while unmarshalling the query body: %v", err)
		}
		rq.query = in.Query
		if len(in.Variables) > 0 && string(in.Variables) != "null" {
			if rq.vars, err = dql.DecodeVars(in.Variables); err != nil {
				return nil, nil, err
			}
		}
	} else {
		rq.query = string(body)
	}
	out, err := s.do(ctx, p, rq)
	if err != nil {
		return nil, nil, err
	}
	data := out.data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return data, s.extensions(out), nil
}

// httpMutate is POST /mutate: RDF text (application/rdf: a { set … }
// block or an upsert block) or JSON ({"set", "delete", "cond", "query"}
// or {"query", "mutations": [...]}); ?commitNow, ?startTs, ?hash.
func (s *Server) httpMutate(ctx context.Context, r *http.Request, body []byte) (any, map[string]any, error) {
	p, err := s.httpPrincipal(r)
	if err != nil {
		return nil, nil, err
	}
	rq := &request{}
	if err := txnParams(r, rq); err != nil {
		return nil, nil, err
	}
	rq.commitNow = r.URL.Query().Get("commitNow") == "true"
	if mediaType(r) == "application/json" {
		if err := jsonMutation(body, rq); err != nil {
			return nil, nil, err
		}
	} else {
		u, err := dql.ParseMutation(string(body))
		if err != nil {
			return nil, nil, err
		}
		rq.upsert = u
	}
	if !rq.mutating() {
		return nil, nil, errorf(CodeInvalid, "empty mutation")
	}
	out, err := s.do(ctx, p, rq)
	if err != nil {
		return nil, nil, err
	}
	uids := out.uids
	if uids == nil {
		uids = map[string]string{}
	}
	data := map[string]any{"code": "Success", "message": "Done", "uids": uids}
	if len(out.data) > 0 {
		data["queries"] = out.data
	}
	return data, s.extensions(out), nil
}

// jsonMutation reads Dgraph's JSON mutation bodies.
func jsonMutation(body []byte, rq *request) error {
	type mut struct {
		Set    json.RawMessage `json:"set"`
		Delete json.RawMessage `json:"delete"`
		Cond   string          `json:"cond"`
	}
	var in struct {
		mut
		Query     string `json:"query"`
		Mutations []mut  `json:"mutations"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return errorf(CodeInvalid, "while unmarshalling the mutation body: %v", err)
	}
	muts := in.Mutations
	if len(in.Set) > 0 || len(in.Delete) > 0 {
		muts = append([]mut{in.mut}, muts...)
	}
	for i, m := range muts {
		am := &pb.Mutation{Cond: m.Cond}
		if len(m.Set) > 0 && string(m.Set) != "null" {
			am.SetJson = m.Set
		}
		if len(m.Delete) > 0 && string(m.Delete) != "null" {
			am.DeleteJson = m.Delete
		}
		dm, err := convertMutation(am, i)
		if err != nil {
			return err
		}
		rq.muts = append(rq.muts, dm)
	}
	rq.query = in.Query
	return nil
}

// httpCommit is POST /commit?startTs=N[&abort=true]; the body (keys) is
// not needed: the server keeps the transaction.
func (s *Server) httpCommit(ctx context.Context, r *http.Request, _ []byte) (any, map[string]any, error) {
	p, err := s.httpPrincipal(r)
	if err != nil {
		return nil, nil, err
	}
	rq := &request{}
	if err := txnParams(r, rq); err != nil {
		return nil, nil, err
	}
	if rq.startTs == 0 {
		return nil, nil, errorf(CodeInvalid, "StartTs parameter is mandatory while trying to commit")
	}
	abort := r.URL.Query().Get("abort") == "true"
	tc, err := s.commitOrAbort(ctx, p, rq.startTs, rq.hash, abort)
	if err != nil {
		return nil, nil, err
	}
	data := map[string]any{"code": "Success", "message": "Done"}
	if abort {
		return data, nil, nil
	}
	return data, map[string]any{"txn": map[string]uint64{"start_ts": tc.StartTs, "commit_ts": tc.CommitTs}}, nil
}

// httpAlter is POST /alter: an Operation as JSON ({"drop_all": true},
// {"drop_op": "ATTR", "drop_value": "p"}, {"schema": "..."}) or, if the
// body is not that, schema text.
func (s *Server) httpAlter(ctx context.Context, r *http.Request, body []byte) (any, map[string]any, error) {
	p, err := s.httpPrincipal(r)
	if err != nil {
		return nil, nil, err
	}
	op := &pb.Operation{}
	if err := protojson.Unmarshal(body, op); err != nil || strings.TrimSpace(string(body)) == "" {
		op = &pb.Operation{Schema: string(body)}
	}
	op.RunInBackground = op.RunInBackground || r.URL.Query().Get("runInBackground") == "true"
	if err := s.alter(ctx, p, op); err != nil {
		return nil, nil, err
	}
	return map[string]any{"code": "Success", "message": "Done"}, nil, nil
}

// httpLogin is POST /login {"userid", "password", "namespace"} or
// {"refresh_token"}.
func (s *Server) httpLogin(ctx context.Context, _ *http.Request, body []byte) (any, map[string]any, error) {
	var in struct {
		UserID       string `json:"userid"`
		Password     string `json:"password"`
		Namespace    uint64 `json:"namespace"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, nil, errorf(CodeInvalid, "while unmarshalling the login body: %v", err)
	}
	t, err := s.acl.login(ctx, in.UserID, in.Password, in.RefreshToken, in.Namespace, s.live)
	if err != nil {
		return nil, nil, err
	}
	return map[string]string{"accessJWT": t.access, "refreshJWT": t.refresh}, nil, nil
}

// httpHealth is GET /health: Dgraph's list of instances, here one.
func (s *Server) httpHealth(w http.ResponseWriter, r *http.Request) {
	st := "healthy"
	code := http.StatusOK
	if _, err := s.db.Status(r.Context()); err != nil {
		st, code = "unhealthy: "+err.Error(), http.StatusServiceUnavailable
	}
	writeJSON(w, code, []map[string]any{{"instance": "alpha", "status": st, "version": s.cfg.Version,
		"ongoing": []string{}, "open_txns": s.txns.len()}})
}
