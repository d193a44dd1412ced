package dgraph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Namespaces (Dgraph's multi-tenancy). Every predicate, the schema, the
// types, the indexes, the has-sets and the XIDs belong to a namespace, a
// uint64 (0 is Dgraph's "galaxy", the default). UIDs are one space shared
// by all namespaces, as in Dgraph: a node's vertex holds the data of every
// namespace that wrote to it, each under its own keys.
//
// The mapping does not know about namespaces: a namespace is a view of the
// engine (NamespaceView) that renames what the mapping reads and writes,
// and a Graph opened over that view is the namespace's Graph
// (Graph.Namespace). Namespace 0 keeps today's names exactly, so data
// written before namespaces existed is namespace 0's. Namespace n > 0:
//
//	mapping's name                     stored as
//	vertex "_dg|..." (schema, indexes,  "_ns|<n>|_dg|..." (nsVertexPrefix)
//	  has-sets, directories)
//	vertex "_pl|<group>|rest"           "_pl|@<n>@<group>|rest" (its own placement group)
//	node "0x1f" (shared)                "0x1f" itself
//	key or edge handle k of a node      "@<n>|k"
//	alias "xid|x"                       "_ns|<n>|xid|x" (hashed when too long)
//	"_dg|uids" (the UID lease)          itself: UIDs are shared
//
// '@' cannot start a key of the mapping's own (a predicate is non-empty and
// checkPred rejects '@'; its own keys start with '|'), so the keys of
// namespace n > 0 never collide with namespace 0's, and the view of
// namespace 0 hides every node key starting with '@'. Reads keep their
// engine names in txn.Read entries (a read set is opaque to the mapping),
// so reads recorded through a view are validated by any commit, through
// the view or not; a node's version covers all namespaces' data, so
// concurrent writers to one node in two namespaces conflict (never
// wrongly commit). The view batches what the engine batches
// (engineapi.BatchReader); in the predicate placement, Open puts the
// placement's API above the view, so each namespace's predicates are
// placement groups of their own.
//
// Limits: a node key grows by len("@<n>|") bytes, so a maximal facet key
// of a language-tagged value (txn.KeyLenMax) fits only for small n; an
// operation that names its vertex by alias, creates an edge with a
// generated handle on a node or deletes a node is refused in a namespace
// n > 0 (the mapping does none of them).

// nsVertexPrefix starts the engine name of a reserved vertex or alias of a
// namespace n > 0: "_ns|<n>|".
const nsVertexPrefix = "_ns|"

// ErrNamespace is an operation a namespace view refuses.
var ErrNamespace = errors.New("dgraph: namespace")

// nsView is the engine as a namespace sees it (doc above).
type nsView struct {
	db  engineapi.API
	ns  uint64
	pre string // "_ns|<n>|": reserved vertices and aliases
	key string // "@<n>|": keys and edge handles of nodes
	grp string // "@<n>@": placement group names
}

// NamespaceView returns db as namespace ns sees it. For ns 0 it renames
// nothing and only hides the other namespaces' keys and edges of nodes.
func NamespaceView(db engineapi.API, ns uint64) engineapi.API {
	n := strconv.FormatUint(ns, 10)
	return &nsView{db: db, ns: ns, pre: nsVertexPrefix + n + "|", key: "@" + n + "|", grp: "@" + n + "@"}
}

// Namespace returns the Graph of namespace ns over g's engine, with g's
// configuration: Open over NamespaceView. Opening a namespace for the
// first time creates its schema (Dgraph's initial one); a caller must
// check that the namespace exists before (package dgraph/api keeps the
// registry).
func (g *Graph) Namespace(ctx context.Context, ns uint64) (*Graph, error) {
	return Open(ctx, NamespaceView(g.db, ns), g.cfg)
}

// NamespaceKey is the engine key of node key k (a value key, a facet, a
// count, an edge handle) in namespace ns.
func NamespaceKey(ns uint64, k string) string {
	if ns == 0 {
		return k
	}
	return "@" + strconv.FormatUint(ns, 10) + "|" + k
}

// sharedVertex reports whether h (an engine name) is a node: the vertices
// all namespaces share, whose keys the view renames.
func sharedVertex(h string) bool {
	// UIDOfHandle's canonical form, checked without allocating: this runs
	// for every vertex and edge end a view renames.
	if len(h) < 3 || len(h) > 18 || h[0] != '0' || h[1] != 'x' || h[2] == '0' {
		return false
	}
	for i := 2; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// vertexOut is the engine name of the view's vertex h.
func (v *nsView) vertexOut(h string) string {
	if v.ns == 0 || h == LeaseVertex || sharedVertex(h) {
		return h
	}
	if _, ok := txn.GroupOf(h); ok {
		return txn.GroupPrefix + v.grp + h[len(txn.GroupPrefix):]
	}
	return v.pre + h
}

// vertexIn is the view's name of engine vertex h (h itself when it is not
// the namespace's).
func (v *nsView) vertexIn(h string) string {
	if v.ns == 0 || h == LeaseVertex || sharedVertex(h) {
		return h
	}
	if rest, ok := strings.CutPrefix(h, v.pre); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(h, txn.GroupPrefix+v.grp); ok {
		return txn.GroupPrefix + rest
	}
	return h
}

// aliasOut is the engine name of the view's alias a: like a vertex, but
// hashed when the prefix makes it too long (aliases are only looked up).
func (v *nsView) aliasOut(a string) string {
	if v.ns == 0 {
		return a
	}
	out := v.vertexOut(a)
	if len(out) > txn.HandleLenMax {
		sum := sha256.Sum256([]byte(a))
		out = v.pre + "#" + hex.EncodeToString(sum[:])
	}
	return out
}

// keyOut is the engine key of the view's node key (or node edge handle) k.
func (v *nsView) keyOut(k string) string {
	if v.ns == 0 {
		return k
	}
	return v.key + k
}

// keyIn is the view's name of engine node key k, ok false when k is
// another namespace's.
func (v *nsView) keyIn(k string) (string, bool) {
	if v.ns == 0 {
		return k, k == "" || k[0] != '@'
	}
	rest, ok := strings.CutPrefix(k, v.key)
	return rest, ok
}

func (v *nsView) ref(r engineapi.VertexRef) engineapi.VertexRef {
	if r.Alias {
		return engineapi.VertexRef{Name: v.aliasOut(r.Name), Alias: true}
	}
	return engineapi.VertexRef{Name: v.vertexOut(r.Name)}
}

func (v *nsView) Begin(ctx context.Context) (engineapi.Snapshot, error) { return v.db.Begin(ctx) }

func (v *nsView) GetVertex(ctx context.Context, snap engineapi.Snapshot, r engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	out, err := v.db.GetVertex(ctx, snap, v.ref(r), opts)
	if err != nil {
		return nil, err
	}
	return v.vertexView(out), nil
}

// vertexView renames an engine vertex for the view, in place when nothing
// changes (namespace 0 reading a node no other namespace wrote).
func (v *nsView) vertexView(x *engineapi.Vertex) *engineapi.Vertex {
	shared := sharedVertex(x.Handle)
	if v.ns == 0 && (!shared || !foreign(x)) {
		return x
	}
	out := *x
	out.Handle = v.vertexIn(x.Handle)
	if shared && x.Props != nil {
		out.Props = make(map[string]value.Value, len(x.Props))
		for k, val := range x.Props {
			if k2, ok := v.keyIn(k); ok {
				out.Props[k2] = val
			}
		}
	}
	out.Edges = nil
	for _, e := range x.Edges {
		if shared {
			h, ok := v.keyIn(e.Handle)
			if !ok {
				continue
			}
			e.Handle = h
		}
		e.Src, e.Dst = v.vertexIn(e.Src), v.vertexIn(e.Dst)
		out.Edges = append(out.Edges, e)
	}
	out.Aliases = nil
	for _, a := range x.Aliases {
		if v.ns == 0 {
			if !strings.HasPrefix(a, nsVertexPrefix) && !strings.HasPrefix(a, txn.GroupPrefix+"@") {
				out.Aliases = append(out.Aliases, a)
			}
		} else if in := v.vertexIn(a); in != a {
			out.Aliases = append(out.Aliases, in)
		}
	}
	return &out
}

// foreign reports whether node x has keys, edges or aliases of a namespace
// n > 0 (which namespace 0's view hides).
func foreign(x *engineapi.Vertex) bool {
	for k := range x.Props {
		if k != "" && k[0] == '@' {
			return true
		}
	}
	for _, e := range x.Edges {
		if e.Handle != "" && e.Handle[0] == '@' {
			return true
		}
	}
	for _, a := range x.Aliases {
		if strings.HasPrefix(a, nsVertexPrefix) || strings.HasPrefix(a, txn.GroupPrefix+"@") {
			return true
		}
	}
	return false
}

// GetVertices implements engineapi.BatchReader: one batched read of the
// renamed refs (one request per shard when the engine batches).
func (v *nsView) GetVertices(ctx context.Context, snap engineapi.Snapshot, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, int, error) {
	out := make([]engineapi.VertexRef, len(refs))
	for i, r := range refs {
		out[i] = v.ref(r)
	}
	vs, requests, err := engineapi.GetVertices(ctx, v.db, snap, out, opts)
	if err != nil {
		return nil, requests, err
	}
	for i, x := range vs {
		vs[i] = v.vertexView(x)
	}
	return vs, requests, nil
}

func (v *nsView) GetEdge(ctx context.Context, snap engineapi.Snapshot, src engineapi.VertexRef, edge string) (*engineapi.Edge, error) {
	r := v.ref(src)
	if !r.Alias && sharedVertex(r.Name) {
		edge = v.keyOut(edge)
	}
	e, err := v.db.GetEdge(ctx, snap, r, edge)
	if err != nil || v.ns == 0 {
		return e, err
	}
	out := *e
	if sharedVertex(e.Src) {
		out.Handle, _ = v.keyIn(e.Handle)
	}
	out.Src, out.Dst = v.vertexIn(e.Src), v.vertexIn(e.Dst)
	return &out, nil
}

// Commit renames ops; reads carry engine names already.
func (v *nsView) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*engineapi.CommitResult, error) {
	if v.ns == 0 {
		return v.db.Commit(ctx, reads, ops)
	}
	out := make([]txn.Op, len(ops))
	for i, op := range ops {
		o, err := v.op(op)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	res, err := v.db.Commit(ctx, reads, out)
	if err != nil {
		return nil, err
	}
	cp := *res
	cp.Handles = make([]string, len(res.Handles))
	for i, h := range res.Handles {
		cp.Handles[i] = v.vertexIn(h)
	}
	return &cp, nil
}

// op renames one operation of namespace n > 0.
func (v *nsView) op(op txn.Op) (txn.Op, error) {
	if op.VertexAlias {
		return op, fmt.Errorf("%w %d: an operation naming its vertex by alias (%s %q)", ErrNamespace, v.ns, op.Kind, op.Vertex)
	}
	shared := sharedVertex(op.Vertex)
	switch {
	case shared && op.Kind == txn.DeleteVertex:
		return op, fmt.Errorf("%w %d: node %s is shared by all namespaces and cannot be deleted", ErrNamespace, v.ns, op.Vertex)
	case shared && op.Kind == txn.CreateEdge && op.Edge == "":
		return op, fmt.Errorf("%w %d: an edge of node %s needs a handle", ErrNamespace, v.ns, op.Vertex)
	}
	if op.Kind == txn.CreateVertex && op.Vertex == "" {
		return op, fmt.Errorf("%w %d: a vertex needs a handle", ErrNamespace, v.ns)
	}
	op.Vertex = v.vertexOut(op.Vertex)
	if shared && op.Edge != "" {
		op.Edge = v.keyOut(op.Edge)
	}
	if shared && (op.Kind == txn.SetVertexProp || op.Kind == txn.DeleteVertexProp) {
		op.Key = v.keyOut(op.Key)
	}
	if op.Dst != "" {
		if op.DstAlias {
			op.Dst = v.aliasOut(op.Dst)
		} else {
			op.Dst = v.vertexOut(op.Dst)
		}
	}
	if op.Alias != "" {
		op.Alias = v.aliasOut(op.Alias)
	}
	return op, nil
}

func (v *nsView) Run(ctx context.Context, program string, params json.RawMessage, at *engineapi.Snapshot) (json.RawMessage, error) {
	if v.ns != 0 {
		return nil, fmt.Errorf("%w %d: node programs see every namespace; run them on the engine", ErrNamespace, v.ns)
	}
	return v.db.Run(ctx, program, params, at)
}

func (v *nsView) Programs() []engineapi.ProgramInfo { return v.db.Programs() }

func (v *nsView) Status(ctx context.Context) (*engineapi.Status, error) { return v.db.Status(ctx) }
