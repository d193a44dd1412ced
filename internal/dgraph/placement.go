package dgraph

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Placements: where a node's data lives (doc.go, "Placement").
const (
	// PlacementVertex keeps all of a node's values and edges on its vertex
	// "0x1f", so a node is on one shard (the default).
	PlacementVertex = "vertex"
	// PlacementPredicate keeps node u's data of predicate p on the vertex
	// "_pl|p|0x1f" of placement group p (txn.GroupOf), beside p's index
	// and has-set vertices, so one predicate's data is on one shard.
	PlacementPredicate = "predicate"
)

// CheckPlacement accepts "" (PlacementVertex), PlacementVertex and
// PlacementPredicate.
func CheckPlacement(p string) error {
	switch p {
	case "", PlacementVertex, PlacementPredicate:
		return nil
	}
	return fmt.Errorf("%w: placement %q (want %q or %q)", ErrInvalid, p, PlacementVertex, PlacementPredicate)
}

func normPlacement(p string) string {
	if p == "" {
		return PlacementVertex
	}
	return p
}

// placedListPrefix starts the node-vertex property "|pl|p" that lists
// predicate p as placed: the vertex PlacedVertex(p, uid) exists. Set when
// that vertex is created, never removed (placed vertices are never
// deleted; an emptied one reads as nothing).
const placedListPrefix = "|pl|"

// PredicateUnit is the placement unit (txn.Unit) of predicate pred of
// namespace ns in the predicate placement: the group of every placed
// vertex of pred (its reverse edges included), its has-set and indexes.
// Moving it (engine.DB.MoveUnit) moves the predicate's data.
func PredicateUnit(ns uint64, pred string) (txn.Unit, error) {
	if err := checkPred(pred); err != nil {
		return txn.Unit{}, err
	}
	if ns == 0 {
		return txn.Unit{Group: pred}, nil
	}
	return txn.Unit{Group: "@" + strconv.FormatUint(ns, 10) + "@" + pred}, nil
}

// PlacedVertex is the vertex holding node uid's data of pred (values,
// facets, counts, bucket records, out-edges and reverse edges of pred) in
// the predicate placement.
func PlacedVertex(pred string, uid uint64) string { return txn.GroupName(pred, FormatUID(uid)) }

// PlacedPreds lists, sorted, the predicates a node vertex read with Props
// has placed vertices for (predicate placement).
func PlacedPreds(v *engineapi.Vertex) []string {
	var out []string
	for k := range v.Props {
		if p, ok := strings.CutPrefix(k, placedListPrefix); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// MergePlaced is the node as the vertex placement would store it: node's
// own properties (without the placement list) and aliases, and the
// properties and edges of its placed vertices parts, with at most edgesMax
// edges (0: engineapi.EdgesMaxDefault). The result's Read is node's.
func MergePlaced(node *engineapi.Vertex, parts []*engineapi.Vertex, opts engineapi.ReadOptions) *engineapi.Vertex {
	max := opts.EdgesMax
	if max <= 0 {
		max = engineapi.EdgesMaxDefault
	}
	out := &engineapi.Vertex{Handle: node.Handle, Exists: node.Exists, Aliases: node.Aliases, Read: node.Read,
		AliasRead: node.AliasRead}
	if !node.Exists {
		return out
	}
	if opts.Props {
		for k, v := range node.Props {
			if !strings.HasPrefix(k, placedListPrefix) {
				setProp(out, k, v)
			}
		}
	}
	for _, pv := range parts {
		if opts.Props {
			for k, v := range pv.Props {
				setProp(out, k, v)
			}
		}
		out.EdgesTruncated = out.EdgesTruncated || pv.EdgesTruncated
		for _, e := range pv.Edges {
			if len(out.Edges) == max {
				out.EdgesTruncated = true
				break
			}
			e.Src = node.Handle
			out.Edges = append(out.Edges, e)
		}
	}
	return out
}

func setProp(v *engineapi.Vertex, k string, val value.Value) {
	if v.Props == nil {
		v.Props = map[string]value.Value{}
	}
	v.Props[k] = val
}

// keyPred is the predicate whose placed vertex holds node property k ("" for
// the node's own: the placement list, and keys of no predicate).
func keyPred(k string) string {
	switch kind, pred, _, _ := classifyProp(k); kind {
	case propValue, propFacet:
		return pred
	case propCount:
		return strings.TrimPrefix(pred, "~")
	}
	if p, ok := strings.CutPrefix(k, "|bucket|"); ok {
		return p
	}
	return ""
}

// edgePred is the predicate whose placed vertex holds node edge h ("p|0x.."
// or "~p|0x..").
func edgePred(h string) string {
	p, _, ok := ParseEdgeHandle(h)
	if !ok {
		return ""
	}
	return strings.TrimPrefix(p, "~")
}

// placedInternal is where an internal vertex lives in the predicate
// placement: has-set, index token and index directory vertices in their
// predicate's group, every other name as it is (schema, leases, and names
// already placed).
func placedInternal(h string) string {
	if rest, ok := strings.CutPrefix(h, reservedPrefix+"h|"); ok {
		if i := strings.IndexByte(rest, '|'); i > 0 {
			return txn.GroupName(rest[:i], h)
		}
	}
	if rest, ok := strings.CutPrefix(h, reservedPrefix+"d|"); ok { // gen|b|pred (dirVertexIn)
		if f := strings.SplitN(rest, "|", 3); len(f) == 3 && f[2] != "" {
			return txn.GroupName(f[2], h)
		}
	}
	if rest, ok := strings.CutPrefix(h, reservedPrefix+"i|"); ok { // gen|tok|key|b|token
		f := strings.SplitN(rest, "|", 4)
		if len(f) == 4 {
			pred, _, _ := strings.Cut(f[2], "@")
			if pred != "" {
				return txn.GroupName(pred, h)
			}
		}
	}
	return h
}

// unplacedInternal is the mapping's name of an internal vertex's engine
// name h (the inverse of placedInternal).
func unplacedInternal(h string) string {
	if g, ok := txn.GroupOf(h); ok && strings.HasPrefix(h[len(g)+1:], reservedPrefix) {
		return h[len(g)+1:]
	}
	return h
}

// virtualReadPrefix marks a read-set entry of a whole node in the predicate
// placement: its Version packs the entries of the node vertex and of each
// placed vertex read with it. placedAPI.Commit (and prepare) unpack it; a
// NUL-free byte no handle starts with.
const virtualReadPrefix = "\x01"

func packReads(node string, rs []txn.Read) txn.Read {
	var b []byte
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(len(r.Vertex)))
		b = append(b, r.Vertex...)
		b = binary.AppendUvarint(b, uint64(len(r.Version)))
		b = append(b, r.Version...)
	}
	return txn.Read{Vertex: virtualReadPrefix + node, Version: b}
}

func unpackReads(r txn.Read) ([]txn.Read, error) {
	var out []txn.Read
	b := r.Version
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, false
		}
		s := b[k : k+int(n)]
		b = b[k+int(n):]
		return s, true
	}
	for len(b) > 0 {
		name, ok1 := next()
		ver, ok2 := next()
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: a malformed node read of %q", ErrInvalid, r.Vertex)
		}
		out = append(out, txn.Read{Vertex: string(name), Version: slices.Clone(ver)})
	}
	return out, nil
}

// placedAPI is the engine as the rest of this package sees it in the
// predicate placement: every node reads and writes as in the vertex
// placement (a vertex "0x1f" with all its values and edges), while the
// data lives on the node vertex and its placed vertices. Reads of a node
// read the node vertex (its placement list) and then its placed vertices
// (one batched read), merged; commits route each operation to the vertex
// that holds its key or edge, creating placed vertices on first use, and
// unpack node reads into their parts. Internal vertices are renamed by
// placedInternal. Safe for concurrent use.
type placedAPI struct {
	inner engineapi.API
	g     *Graph // for the known-vertex cache and Config
}

func (p *placedAPI) Begin(ctx context.Context) (engineapi.Snapshot, error) { return p.inner.Begin(ctx) }

func (p *placedAPI) Run(ctx context.Context, prog string, params json.RawMessage, at *engineapi.Snapshot) (json.RawMessage, error) {
	return p.inner.Run(ctx, prog, params, at)
}

func (p *placedAPI) Programs() []engineapi.ProgramInfo { return p.inner.Programs() }

func (p *placedAPI) Status(ctx context.Context) (*engineapi.Status, error) {
	return p.inner.Status(ctx)
}

// GetVertex implements engineapi.API.
func (p *placedAPI) GetVertex(ctx context.Context, snap engineapi.Snapshot, ref engineapi.VertexRef, opts engineapi.ReadOptions) (*engineapi.Vertex, error) {
	if !ref.Alias {
		if _, ok := UIDOfHandle(ref.Name); !ok {
			v, err := p.inner.GetVertex(ctx, snap, engineapi.VertexRef{Name: placedInternal(ref.Name)}, opts)
			if err != nil {
				return nil, err
			}
			v.Handle = ref.Name
			for i := range v.Edges {
				v.Edges[i].Src, v.Edges[i].Dst = ref.Name, unplacedInternal(v.Edges[i].Dst)
			}
			return v, nil
		}
	}
	node, err := p.inner.GetVertex(ctx, snap, ref, engineapi.ReadOptions{Props: true, Aliases: opts.Aliases})
	if err != nil || node.Handle == "" {
		return node, err
	}
	uid, ok := UIDOfHandle(node.Handle)
	if !ok || !node.Exists || !opts.Props && !opts.Edges {
		if !opts.Props {
			node.Props = nil
		}
		return node, nil
	}
	preds := PlacedPreds(node)
	refs := make([]engineapi.VertexRef, len(preds))
	for i, pr := range preds {
		refs[i] = engineapi.VertexRef{Name: PlacedVertex(pr, uid)}
	}
	parts, _, err := engineapi.GetVertices(ctx, p.inner, snap, refs, engineapi.ReadOptions{Props: opts.Props, Edges: opts.Edges, EdgesMax: opts.EdgesMax})
	if err != nil {
		return nil, err
	}
	out := MergePlaced(node, parts, opts)
	rs := []txn.Read{node.Read}
	for _, pv := range parts {
		rs = append(rs, pv.Read)
	}
	out.Read = packReads(node.Handle, rs)
	return out, nil
}

// GetVertices implements engineapi.BatchReader: internal vertices renamed and
// read in one batched read of the engine under it; a batch naming a node
// or an alias is read ref by ref (GetVertex merges nodes).
func (p *placedAPI) GetVertices(ctx context.Context, snap engineapi.Snapshot, refs []engineapi.VertexRef, opts engineapi.ReadOptions) ([]*engineapi.Vertex, int, error) {
	placed := make([]engineapi.VertexRef, len(refs))
	for i, r := range refs {
		if _, node := UIDOfHandle(r.Name); node || r.Alias {
			return engineapi.GetVerticesEach(ctx, p, snap, refs, opts)
		}
		placed[i] = engineapi.VertexRef{Name: placedInternal(r.Name)}
	}
	vs, requests, err := engineapi.GetVertices(ctx, p.inner, snap, placed, opts)
	if err != nil {
		return nil, requests, err
	}
	for i, v := range vs {
		v.Handle = refs[i].Name
		for j := range v.Edges {
			v.Edges[j].Src, v.Edges[j].Dst = refs[i].Name, unplacedInternal(v.Edges[j].Dst)
		}
	}
	return vs, requests, nil
}

// GetEdge implements engineapi.API.
func (p *placedAPI) GetEdge(ctx context.Context, snap engineapi.Snapshot, src engineapi.VertexRef, edge string) (*engineapi.Edge, error) {
	uid, ok := UIDOfHandle(src.Name)
	if src.Alias || !ok {
		name := src.Name
		if !src.Alias {
			src.Name = placedInternal(src.Name)
		}
		e, err := p.inner.GetEdge(ctx, snap, src, edge)
		if err == nil && !src.Alias {
			e.Src, e.Dst = name, unplacedInternal(e.Dst)
		}
		return e, err
	}
	pred := edgePred(edge)
	if pred == "" {
		return &engineapi.Edge{Handle: edge, Src: src.Name}, nil
	}
	e, err := p.inner.GetEdge(ctx, snap, engineapi.VertexRef{Name: PlacedVertex(pred, uid)}, edge)
	if err == nil {
		e.Src = src.Name
	}
	return e, err
}

// Commit implements engineapi.API.
func (p *placedAPI) Commit(ctx context.Context, reads []txn.Read, ops []txn.Op) (*engineapi.CommitResult, error) {
	reads, ops, created, err := p.translate(ctx, engineapi.Snapshot{}, reads, ops)
	if err != nil {
		return nil, err
	}
	res, err := p.inner.Commit(ctx, reads, ops)
	if err == nil {
		p.g.known.add(created...)
	}
	return res, err
}

// translate turns a transaction written for the vertex placement into the
// predicate placement's: node reads unpacked, each operation on the vertex
// that holds it, and the placed vertices it writes to created (with their
// node's list entry) when they did not exist at snap (a blank snap: now).
// It is idempotent, so prepared transactions may be translated again at
// commit. created lists the placed vertices it creates.
func (p *placedAPI) translate(ctx context.Context, snap engineapi.Snapshot, reads []txn.Read, ops []txn.Op) (
	[]txn.Read, []txn.Op, []string, error) {
	exists := map[string]bool{} // placed vertices known to exist at snap, or created by ops
	var out []txn.Read
	for _, r := range reads {
		if !strings.HasPrefix(r.Vertex, virtualReadPrefix) {
			out = append(out, r)
			continue
		}
		parts, err := unpackReads(r)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, c := range parts {
			if strings.HasPrefix(c.Vertex, txn.GroupPrefix) {
				exists[c.Vertex] = true
			}
		}
		out = append(out, parts...)
	}
	reads = dedupeReads(out)
	targets := make([]string, len(ops))
	var unknown []string
	for i := range ops {
		targets[i] = opVertex(&ops[i])
		if ops[i].Kind == txn.CreateVertex {
			exists[targets[i]] = true
		}
	}
	for i := range ops {
		t := targets[i]
		if isPlacedNode(t) && !exists[t] && !slices.Contains(unknown, t) {
			if p.g.known.has(t) {
				exists[t] = true
			} else {
				unknown = append(unknown, t)
			}
		}
	}
	if len(unknown) > 0 {
		if snap.Token == "" {
			var err error
			if snap, err = p.inner.Begin(ctx); err != nil {
				return nil, nil, nil, err
			}
		}
		refs := make([]engineapi.VertexRef, len(unknown))
		for i, h := range unknown {
			refs[i] = engineapi.VertexRef{Name: h}
		}
		vs, _, err := engineapi.GetVertices(ctx, p.inner, snap, refs, engineapi.ReadOptions{})
		if err != nil {
			return nil, nil, nil, err
		}
		var found []string
		for i, v := range vs {
			if v.Exists {
				exists[unknown[i]] = true
				found = append(found, unknown[i])
			}
		}
		p.g.known.add(found...)
	}
	var created []string
	res := make([]txn.Op, 0, len(ops)+4)
	for i, op := range ops {
		t := targets[i]
		if isPlacedNode(t) && !exists[t] {
			exists[t] = true
			created = append(created, t)
			node, pred := placedParts(t)
			res = append(res, txn.Op{Kind: txn.CreateVertex, Vertex: t},
				txn.Op{Kind: txn.SetVertexProp, Vertex: node, Key: placedListPrefix + pred, Value: value.Boolean(true)})
		}
		op.Vertex = t
		if op.Dst != "" {
			op.Dst = placedInternal(op.Dst)
		}
		res = append(res, op)
	}
	return reads, res, created, nil
}

// opVertex is the vertex that holds what op writes.
func opVertex(op *txn.Op) string {
	uid, ok := UIDOfHandle(op.Vertex)
	if !ok || op.VertexAlias {
		if op.VertexAlias {
			return op.Vertex
		}
		return placedInternal(op.Vertex)
	}
	pred := ""
	switch op.Kind {
	case txn.SetVertexProp, txn.DeleteVertexProp:
		pred = keyPred(op.Key)
	case txn.CreateEdge, txn.DeleteEdge, txn.SetEdgeProp, txn.DeleteEdgeProp:
		pred = edgePred(op.Edge)
	}
	if pred == "" {
		return op.Vertex
	}
	return PlacedVertex(pred, uid)
}

// isPlacedNode reports whether h is a node's placed vertex ("_pl|p|0x1f").
func isPlacedNode(h string) bool {
	_, _, ok := placedSplit(h)
	return ok
}

func placedParts(h string) (node, pred string) {
	node, pred, _ = placedSplit(h)
	return node, pred
}

func placedSplit(h string) (node, pred string, ok bool) {
	g, ok := txn.GroupOf(h)
	if !ok {
		return "", "", false
	}
	node = h[len(g)+1:]
	if _, ok := UIDOfHandle(node); !ok {
		return "", "", false
	}
	return node, g[len(txn.GroupPrefix):], true
}

// unplaced is db without a placedAPI on top (directly, or under a namespace
// view): Open puts its own over the engine the mapping is given.
func unplaced(db engineapi.API) engineapi.API {
	switch v := db.(type) {
	case *placedAPI:
		return v.inner
	case *nsView:
		if p, ok := v.db.(*placedAPI); ok {
			cp := *v
			cp.db = p.inner
			return &cp
		}
	}
	return db
}
