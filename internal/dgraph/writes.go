package dgraph

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// build derives what the changed nodes imply — reverse edges, edge counts,
// has-set entries, index entries, schema additions — and returns the
// transaction's operations, with the internal vertices it creates (for
// the known-vertex cache once it commits).
func (a *attempt) build() ([]txn.Op, []string, error) {
	uids := slices.Sorted(maps.Keys(a.nodes))
	if err := a.deriveEdges(uids); err != nil {
		return nil, nil, err
	}
	uids = slices.Sorted(maps.Keys(a.nodes)) // reverse-edge targets joined
	if err := a.deriveCounts(uids); err != nil {
		return nil, nil, err
	}
	iw := &internalWrites{vertices: map[string]*ivertex{}}
	for _, uid := range uids {
		if err := a.deriveEntries(a.nodes[uid], iw); err != nil {
			return nil, nil, err
		}
	}
	if err := a.checkInternal(iw); err != nil {
		return nil, nil, err
	}
	var ops []txn.Op
	for _, uid := range uids {
		n := a.nodes[uid]
		if n.create {
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: n.h})
			if n.alias != "" {
				ops = append(ops, txn.Op{Kind: txn.AddAlias, Vertex: n.h, Alias: n.alias})
			}
		}
	}
	var created []string
	for _, h := range slices.Sorted(maps.Keys(iw.vertices)) {
		v := iw.vertices[h]
		if v.exists {
			continue
		}
		created = append(created, h)
		ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h})
		if v.dir != "" {
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: v.dir, Edge: v.dirEdge, Dst: h})
		}
	}
	for _, uid := range uids {
		var err error
		if ops, err = a.nodeOps(a.nodes[uid], ops); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range iw.dels {
		ops = append(ops, txn.Op{Kind: txn.DeleteEdge, Vertex: e.v, Edge: e.h})
	}
	for _, e := range iw.adds {
		ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: e.v, Edge: e.h, Dst: e.dst})
	}
	if len(a.added) > 0 {
		sops, err := a.schemaAdditions()
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, sops...)
	}
	return ops, created, nil
}

// deriveEdges turns each forward edge created or deleted into its edge
// count change and, under @reverse, the reverse edge on its destination.
func (a *attempt) deriveEdges(uids []uint64) error {
	for _, uid := range uids {
		n := a.nodes[uid]
		for _, h := range slices.Sorted(maps.Keys(n.next)) {
			pred, dst, ok := ParseEdgeHandle(h)
			if !ok || pred[0] == '~' {
				continue
			}
			old, err := a.edge(n, h)
			if err != nil {
				return err
			}
			d := int64(0)
			switch nw := n.next[h]; {
			case old == nil && nw != nil:
				d = 1
			case old != nil && nw == nil:
				d = -1
			}
			if d == 0 {
				continue
			}
			addCount(n, pred, d)
			P, _ := a.schemaPred(pred)
			if !P.Reverse {
				continue
			}
			t := a.nodeFor(dst)
			t.exists = t.exists || !t.create // an edge pointed at it, or one is being made to it
			rev := ReverseName(pred)
			rh := EdgeHandle(rev, uid)
			if _, known := t.edges[rh]; !known {
				if d > 0 {
					t.edges[rh] = nil
				} else {
					t.edges[rh] = &edgeRec{dst: uid, props: map[string]value.Value{EdgePredKey: value.Str(rev)}}
				}
			}
			if d > 0 {
				t.next[rh] = &edgeRec{dst: uid, props: map[string]value.Value{EdgePredKey: value.Str(rev)}}
			} else {
				t.next[rh] = nil
			}
			if P.Count {
				if err := a.load(t, needProps); err != nil {
					return err
				}
				addCount(t, rev, d)
			}
		}
	}
	return nil
}

func addCount(n *node, pred string, d int64) {
	if n.countD == nil {
		n.countD = map[string]int64{}
	}
	n.countD[pred] += d
}

// deriveCounts updates the count properties.
func (a *attempt) deriveCounts(uids []uint64) error {
	for _, uid := range uids {
		n := a.nodes[uid]
		for _, pred := range slices.Sorted(maps.Keys(n.countD)) {
			d := n.countD[pred]
			if d == 0 {
				continue
			}
			k := CountKey(pred)
			cur, _ := n.prop(k)
			c := cur.Int() + d
			switch {
			case c < 0:
				return fmt.Errorf("%w: node %s: count %s would be %d", ErrCorrupt, n.h, k, c)
			case c == 0:
				n.delProp(k)
			default:
				n.setProp(k, value.I64(c))
			}
			if pred[0] != '~' {
				n.touch(pred)
			}
		}
	}
	return nil
}

// internalWrites collects the edges to add to and delete from index and
// has-set vertices.
type internalWrites struct {
	vertices   map[string]*ivertex
	adds, dels []iedge
}

type ivertex struct {
	dir, dirEdge string // token vertices: their directory entry
	exists       bool
}

type iedge struct{ v, h, dst string }

func (iw *internalWrites) add(v, h, dst, dir, dirEdge string) {
	if _, ok := iw.vertices[v]; !ok {
		iw.vertices[v] = &ivertex{dir: dir, dirEdge: dirEdge}
	}
	iw.adds = append(iw.adds, iedge{v, h, dst})
}

func (iw *internalWrites) del(v, h string) { iw.dels = append(iw.dels, iedge{v: v, h: h}) }

// hasPred reports whether props hold a value of pred or count edges of it.
func hasPred(props map[string]value.Value, pred string) bool {
	for k, v := range props {
		switch kind, p, _, _ := classifyProp(k); {
		case p != pred:
		case kind == propValue:
			return true
		case kind == propCount && v.Int() > 0:
			return true
		}
	}
	return false
}

// deriveEntries adds node n's has-set and index changes.
func (a *attempt) deriveEntries(n *node, iw *internalWrites) error {
	if n.props == nil || len(n.touched) == 0 {
		return nil
	}
	uh := n.h
	for _, p := range slices.Sorted(maps.Keys(n.touched)) {
		b := a.entryBucket(n, p)
		had, has := hasPred(n.old, p), hasPred(n.props, p)
		switch {
		case has && !had:
			iw.add(hasVertex(p, b), uh, n.h, "", "")
		case had && !has:
			iw.del(hasVertex(p, b), uh)
			if _, ok := n.props[bucketKey(p)]; ok {
				n.delProp(bucketKey(p)) // the next first value picks again
			}
		}
		P, ok := a.schemaPred(p)
		if !ok {
			P, ok = a.added[p]
		}
		if !ok || len(P.Index) == 0 {
			continue
		}
		keys := map[string]bool{}
		for _, m := range []map[string]value.Value{n.old, n.props} {
			for k := range m {
				if kind, kp, _, _ := classifyProp(k); kind == propValue && kp == p {
					keys[k] = true
				}
			}
		}
		for _, t := range P.Index {
			tk := index.Get(t.Name)
			if tk == nil {
				continue // accepted in the schema, not maintained
			}
			gen, ok := a.st.meta.Index[p+"|"+t.Name]
			if !ok {
				return fmt.Errorf("%w: index %s(%s) has no generation", ErrCorrupt, p, t.Name)
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				ov, ook := n.old[k]
				nv, nok := n.props[k]
				if ook && nok && sameValue(ov, nv) {
					continue
				}
				var oldT, newT []string
				if ook {
					oldT = tk.Tokens(ov)
				}
				if nok {
					newT = tk.Tokens(nv)
				}
				for _, tok := range minus(oldT, newT) {
					iw.del(indexVertex(gen, t.Name, k, b, tok), uh)
				}
				for _, tok := range minus(newT, oldT) {
					iw.add(indexVertex(gen, t.Name, k, b, tok), uh, n.h, dirVertexIn(a.st.meta.Placement, p, gen, b), dirEdge(k, tok))
				}
			}
		}
	}
	return nil
}

// entryBucket is the bucket of node n's has-set and index entries for
// pred: its UID's, unless bucketKey(pred) records another. A node without
// entries for pred takes the writer's bucket (recording it when it differs
// from the UID's), so that a loader filling nodes another loader created
// writes to its own bucket vertices, not to the other's.
func (a *attempt) entryBucket(n *node, pred string) int {
	if b, ok := recordedBucket(n.old, pred); ok {
		return b
	}
	b := bucket(n.uid)
	if a.o.Alloc == nil || hasPred(n.old, pred) {
		return b
	}
	if wb, ok := a.o.Alloc.bucket(); ok && wb != b {
		n.setProp(bucketKey(pred), value.I64(int64(wb)))
		return wb
	}
	return b
}

func recordedBucket(props map[string]value.Value, pred string) (int, bool) {
	v, ok := props[bucketKey(pred)]
	if ok && v.Kind() == value.Int && v.Int() >= 0 && v.Int() < Buckets {
		return int(v.Int()), true
	}
	return 0, false
}

// storedBucket is entryBucket for a node read from the store.
func storedBucket(props map[string]value.Value, uid uint64, pred string) int {
	if b, ok := recordedBucket(props, pred); ok {
		return b
	}
	return bucket(uid)
}

// minus is a \ b of sorted lists.
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}

// checkInternal learns which internal vertices to be written exist: from
// the cache, else by reading them (outside the read set: a concurrent
// creation makes our CreateVertex fail, and the mutation retries).
func (a *attempt) checkInternal(iw *internalWrites) error {
	var unknown []string
	for h, v := range iw.vertices {
		if a.g.known.has(h) {
			v.exists = true
		} else {
			unknown = append(unknown, h)
		}
	}
	slices.Sort(unknown)
	found := make([]bool, len(unknown))
	err := parallel(len(unknown), a.g.cfg.ReadsParallelMax, func(i int) error {
		v, err := a.g.db.GetVertex(a.ctx, a.snap, engineapi.VertexRef{Name: unknown[i]}, engineapi.ReadOptions{})
		if err == nil {
			found[i] = v.Exists
		}
		return err
	})
	if err != nil {
		return err
	}
	var exist []string
	for i, h := range unknown {
		if found[i] {
			iw.vertices[h].exists = true
			exist = append(exist, h)
		}
	}
	a.g.known.add(exist...)
	return nil
}

// nodeOps appends the operations that turn node n's snapshot state into
// its new state: properties, then edges.
func (a *attempt) nodeOps(n *node, ops []txn.Op) ([]txn.Op, error) {
	if n.props != nil {
		keys := map[string]bool{}
		for k := range n.old {
			keys[k] = true
		}
		for k := range n.props {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			ov, ook := n.old[k]
			nv, nok := n.props[k]
			switch {
			case !nok:
				ops = append(ops, txn.Op{Kind: txn.DeleteVertexProp, Vertex: n.h, Key: k})
			case !ook || !sameValue(ov, nv):
				ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: n.h, Key: k, Value: nv})
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(n.next)) {
		nw := n.next[h]
		old, err := a.edge(n, h)
		if err != nil {
			return nil, err
		}
		switch {
		case nw == nil && old == nil:
		case nw == nil:
			ops = append(ops, txn.Op{Kind: txn.DeleteEdge, Vertex: n.h, Edge: h})
		case old == nil:
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: n.h, Edge: h, Dst: FormatUID(nw.dst)})
			for _, k := range slices.Sorted(maps.Keys(nw.props)) {
				ops = append(ops, txn.Op{Kind: txn.SetEdgeProp, Vertex: n.h, Edge: h, Key: k, Value: nw.props[k]})
			}
		default:
			for _, k := range slices.Sorted(maps.Keys(old.props)) {
				if _, ok := nw.props[k]; !ok {
					ops = append(ops, txn.Op{Kind: txn.DeleteEdgeProp, Vertex: n.h, Edge: h, Key: k})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(nw.props)) {
				if ov, ok := old.props[k]; !ok || !sameValue(ov, nw.props[k]) {
					ops = append(ops, txn.Op{Kind: txn.SetEdgeProp, Vertex: n.h, Edge: h, Key: k, Value: nw.props[k]})
				}
			}
		}
	}
	return ops, nil
}

// schemaAdditions writes the predicates this mutation added to the schema.
func (a *attempt) schemaAdditions() ([]txn.Op, error) {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(a.added)) {
		b.WriteString(a.added[p].String())
		b.WriteByte('\n')
	}
	u, err := schema.Parse(b.String())
	if err != nil {
		return nil, fmt.Errorf("%w: adding predicates to the schema: %v", ErrInvalid, err)
	}
	sch, _, err := a.st.sch.Apply(u)
	if err != nil {
		return nil, fmt.Errorf("%w: adding predicates to the schema: %v", ErrInvalid, err)
	}
	return schemaOps(sch, a.st.meta)[:1], nil
}
