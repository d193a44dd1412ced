package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/weft-db/weft/internal/engine"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/wire/apicode"
)

// The HTTP API's JSON bodies (docs/api.md, openapi.yaml). Snapshots are their
// opaque token strings; read versions are base64; property values are in
// value.Value's JSON form.

type readJSON struct {
	Vertex  string `json:"vertex"`
	Alias   bool   `json:"alias"`
	Version string `json:"version"`
}

type opJSON struct {
	Op          string       `json:"op"`
	Vertex      string       `json:"vertex,omitempty"`
	VertexAlias bool         `json:"vertex_alias,omitempty"`
	Edge        string       `json:"edge,omitempty"`
	Dst         string       `json:"dst,omitempty"`
	DstAlias    bool         `json:"dst_alias,omitempty"`
	Key         string       `json:"key,omitempty"`
	Value       *value.Value `json:"value,omitempty"`
	Alias       string       `json:"alias,omitempty"`
}

type snapshotJSON struct {
	Snapshot string `json:"snapshot"`
}

type vertexRequest struct {
	Snapshot    string `json:"snapshot"`
	Vertex      string `json:"vertex"`
	VertexAlias bool   `json:"vertex_alias"`
	Props       *bool  `json:"props"`
	Edges       *bool  `json:"edges"`
	Aliases     *bool  `json:"aliases"`
	EdgesMax    int    `json:"edges_max"`
}

type vertexJSON struct {
	Handle         string                 `json:"handle"`
	Exists         bool                   `json:"exists"`
	Props          map[string]value.Value `json:"props"`
	Aliases        []string               `json:"aliases"`
	Edges          []edgeJSON             `json:"edges"`
	EdgesTruncated bool                   `json:"edges_truncated"`
	Reads          []readJSON             `json:"reads"`
}

// verticesRequest is POST /v1/vertices: vertices by handle, or by alias
// with {"vertex": alias, "vertex_alias": true}.
type verticesRequest struct {
	Snapshot string         `json:"snapshot"`
	Vertices []vertexRefArg `json:"vertices"`
	Props    *bool          `json:"props"`
	Edges    *bool          `json:"edges"`
	Aliases  *bool          `json:"aliases"`
	EdgesMax int            `json:"edges_max"`
}

// vertexRefArg is one vertex of a batched read: a handle, or an object
// {"vertex", "vertex_alias"}.
type vertexRefArg struct {
	Vertex      string `json:"vertex"`
	VertexAlias bool   `json:"vertex_alias"`
}

func (a *vertexRefArg) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &a.Vertex)
	case len(b) == 0 || b[0] != '{':
		return fmt.Errorf("a vertex is a handle or {\"vertex\", \"vertex_alias\"}, not %.20s", b)
	}
	type plain vertexRefArg // no UnmarshalJSON: decoded strictly as an object
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("a vertex is a handle or {\"vertex\", \"vertex_alias\"}: %w", err)
	}
	*a = vertexRefArg(p)
	return nil
}

type verticesResponse struct {
	Snapshot string       `json:"snapshot"`
	Vertices []vertexJSON `json:"vertices"`
}

type vertexResponse struct {
	Snapshot string     `json:"snapshot"`
	Vertex   vertexJSON `json:"vertex"`
}

type edgeRequest struct {
	Snapshot string `json:"snapshot"`
	Src      string `json:"src"`
	SrcAlias bool   `json:"src_alias"`
	Edge     string `json:"edge"`
}

type edgeJSON struct {
	Handle string                 `json:"handle"`
	Src    string                 `json:"src"`
	Dst    string                 `json:"dst"`
	Exists bool                   `json:"exists"`
	Props  map[string]value.Value `json:"props"`
	Reads  []readJSON             `json:"reads,omitempty"`
}

type edgeResponse struct {
	Snapshot string   `json:"snapshot"`
	Edge     edgeJSON `json:"edge"`
}

type commitRequest struct {
	Reads []readJSON `json:"reads"`
	Ops   []opJSON   `json:"ops"`
}

type commitResponse struct {
	Handles  []string `json:"handles"`
	Snapshot string   `json:"snapshot"`
}

type runResponse struct {
	Result json.RawMessage `json:"result"`
}

type programsResponse struct {
	Programs []engine.ProgramInfo `json:"programs"`
}

type errorJSON struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code      apicode.Code `json:"code"`
	Message   string       `json:"message"`
	Retryable bool         `json:"retryable"`
}

func readsToJSON(rs []txn.Read) []readJSON {
	out := make([]readJSON, len(rs))
	for i, r := range rs {
		out[i] = readJSON{Vertex: r.Vertex, Alias: r.Alias, Version: base64.StdEncoding.EncodeToString(r.Version)}
	}
	return out
}

func propsJSON(p map[string]value.Value) map[string]value.Value {
	if p == nil {
		return map[string]value.Value{}
	}
	return p
}

func edgeToJSON(e *engine.Edge, withRead bool) edgeJSON {
	out := edgeJSON{Handle: e.Handle, Src: e.Src, Dst: e.Dst, Exists: e.Exists, Props: propsJSON(e.Props)}
	if withRead {
		out.Reads = readsToJSON(readSet(e.Read, e.AliasRead))
	}
	return out
}

func vertexToJSON(v *engine.Vertex) vertexJSON {
	out := vertexJSON{Handle: v.Handle, Exists: v.Exists, Props: propsJSON(v.Props), Aliases: v.Aliases,
		Edges: make([]edgeJSON, len(v.Edges)), EdgesTruncated: v.EdgesTruncated, Reads: readsToJSON(readSet(v.Read, v.AliasRead))}
	if out.Aliases == nil {
		out.Aliases = []string{}
	}
	for i := range v.Edges {
		out.Edges[i] = edgeToJSON(&v.Edges[i], false)
	}
	return out
}

func (c *commitRequest) decode() ([]txn.Read, []txn.Op, error) {
	if err := checkSizes(len(c.Reads), len(c.Ops)); err != nil {
		return nil, nil, err
	}
	reads := make([]txn.Read, len(c.Reads))
	for i, r := range c.Reads {
		ver, err := base64.StdEncoding.DecodeString(r.Version)
		if err != nil {
			return nil, nil, invalid(fmt.Sprintf("reads[%d].version: not base64 (copy it unchanged from a read's answer)", i))
		}
		reads[i] = txn.Read{Vertex: r.Vertex, Alias: r.Alias, Version: ver}
	}
	ops := make([]txn.Op, len(c.Ops))
	for i, o := range c.Ops {
		if o.Op == "" {
			return nil, nil, invalid(fmt.Sprintf("ops[%d]: missing \"op\" (want one of %s)", i, opKindNames()))
		}
		k, ok := txn.ParseKind(o.Op)
		if !ok {
			return nil, nil, invalid(fmt.Sprintf("ops[%d]: unknown op %q (want one of %s)", i, o.Op, opKindNames()))
		}
		ops[i] = txn.Op{Kind: k, Vertex: o.Vertex, VertexAlias: o.VertexAlias, Edge: o.Edge, Dst: o.Dst,
			DstAlias: o.DstAlias, Key: o.Key, Alias: o.Alias}
		if o.Value != nil {
			ops[i].Value = *o.Value
		}
	}
	return reads, ops, nil
}

// decodeBody decodes a request's JSON body into dst: one JSON value, no
// unknown fields, nothing after it, at most max bytes. An empty body is
// allowed when allowEmpty (dst stays zero).
func decodeBody(w http.ResponseWriter, r *http.Request, max int64, dst any, allowEmpty bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, max))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if errors.Is(err, io.EOF) {
			if allowEmpty {
				return nil
			}
			return invalid("empty request body: want a JSON object")
		}
		return bodyError(err, max)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return bodyError(err, max)
		}
		return invalid("malformed JSON: unexpected data after the request object")
	}
	return nil
}

func bodyError(err error, max int64) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Code: apicode.CodeTooLarge, Message: fmt.Sprintf("request body larger than %d bytes", max)}
	}
	return invalid(jsonErrorMessage(err))
}

// jsonErrorMessage says what is wrong with a JSON document, and where.
func jsonErrorMessage(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("malformed request: expected %s, got JSON %s", jsonType(typ.Type.String()), typ.Value)
		}
		return fmt.Sprintf("field %q: expected %s, got JSON %s", typ.Field, jsonType(typ.Type.String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonType names a Go type of the request structs as JSON users know it.
func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool" || goType == "*bool":
		return "a boolean"
	case goType == "int":
		return "an integer"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "api.") || strings.HasPrefix(goType, "map"):
		return "an object"
	}
	return goType
}
