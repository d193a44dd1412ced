package dgraph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Alter applies schema text the way Dgraph's alter does (schema.Apply):
// each definition replaces its predicate's or type's whole. It returns what
// changed. The new schema is committed in one transaction, together with
// the bookkeeping of the work it implies; the work — building an index,
// reverse edges or counts over existing values, dropping them — then runs
// in batches of transactions before Alter returns. While a predicate's
// work is pending, mutations of it fail with ErrBusy (as Dgraph refuses
// mutations during indexing) and lookups on it too. If the process dies
// meanwhile, the next Open finishes the work (every step is idempotent).
//
// Changing a predicate between uid and scalar, or from a list to a single
// value, needs it empty (as in Dgraph). Changing its scalar type converts
// the existing values (Dgraph's conversion rules), and is refused with
// ErrInvalid, changing nothing, when one does not convert; the check reads
// every value in the alter's transaction, so it is limited to
// ConvertNodesMax nodes (ErrUnsupported beyond).
func (g *Graph) Alter(ctx context.Context, text string) (schema.Diff, error) {
	u, err := schema.Parse(text)
	if err != nil {
		return schema.Diff{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var diff schema.Diff
	err = g.retry(ctx, func(int) error {
		var err error
		diff, err = g.alterOnce(ctx, u)
		return err
	})
	if err != nil {
		return schema.Diff{}, err
	}
	if !diff.Empty() {
		err = g.runWork(ctx)
	}
	return diff, err
}

func (g *Graph) alterOnce(ctx context.Context, u *schema.Schema) (schema.Diff, error) {
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return schema.Diff{}, err
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return schema.Diff{}, err
	}
	sch, diff, err := st.sch.Apply(u)
	if err != nil {
		return schema.Diff{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if diff.Empty() {
		return diff, nil
	}
	m := st.meta.clone()
	reads := []txn.Read{st.read}
	var ops []txn.Op
	for _, c := range diff.Predicates {
		if m.busy(c.Name) {
			return schema.Diff{}, fmt.Errorf("%w: an alter of %s is still in progress", ErrBusy, c.Name)
		}
		empty, hr, err := g.predEmpty(ctx, snap, c.Name)
		if err != nil {
			return schema.Diff{}, err
		}
		reads = append(reads, hr...)
		if !empty && c.RequiresEmpty {
			return schema.Diff{}, fmt.Errorf("%w: predicate %s holds data; changing %s to %s needs it empty (drop it first)",
				ErrInvalid, c.Name, c.Old, c.New)
		}
		if !empty && c.Convert {
			cr, err := g.checkConvertible(ctx, snap, c)
			if err != nil {
				return schema.Diff{}, err
			}
			reads = append(reads, cr...)
		}
		ops = append(ops, planChange(&m, c, empty)...)
	}
	ops = append(ops, schemaOps(sch, m)...)
	if _, err := g.db.Commit(ctx, reads, ops); err != nil {
		return schema.Diff{}, err
	}
	return diff, nil
}

// planChange records in m the generations and the work one predicate change
// needs, and returns the operations creating new index directories.
func planChange(m *meta, c schema.PredicateChange, empty bool) []txn.Op {
	var ops []txn.Op
	for _, t := range c.IndexDrop {
		if gen, ok := m.Index[c.Name+"|"+t.Name]; ok {
			delete(m.Index, c.Name+"|"+t.Name)
			m.Work = append(m.Work, workItem{Kind: "drop_index", Pred: c.Name, Tok: t.Name, Gen: gen})
		}
	}
	oldRev, oldCount := c.Old != nil && c.Old.Reverse, c.Old != nil && c.Old.Reverse && c.Old.Count
	newRev, newCount := c.New != nil && c.New.Reverse, c.New != nil && c.New.Reverse && c.New.Count
	if !empty {
		switch {
		case oldRev && !newRev:
			m.Work = append(m.Work, workItem{Kind: "drop_reverse", Pred: c.Name})
		case oldCount && !newCount:
			m.Work = append(m.Work, workItem{Kind: "drop_count", Pred: c.Name})
		}
		if newRev && !oldRev {
			m.Work = append(m.Work, workItem{Kind: "reverse", Pred: c.Name})
		}
		if newCount && !oldCount {
			m.Work = append(m.Work, workItem{Kind: "count", Pred: c.Name})
		}
		if c.Convert { // before the index builds, which tokenize the new values
			m.Work = append(m.Work, workItem{Kind: "convert", Pred: c.Name})
		}
	}
	for _, t := range c.IndexBuild {
		if index.Get(t.Name) == nil {
			continue // accepted, not maintained
		}
		ops = append(ops, m.newGen(c.Name, t.Name)...)
		if !empty {
			m.Work = append(m.Work, workItem{Kind: "index", Pred: c.Name, Tok: t.Name, Gen: m.Index[c.Name+"|"+t.Name]})
		}
	}
	return ops
}

// predEmpty reports whether no node has pred, returning the reads of its
// has-set vertices for the read set (so that a concurrent first value of
// pred aborts the alter that assumed it empty).
func (g *Graph) predEmpty(ctx context.Context, snap engineapi.Snapshot, pred string) (bool, []txn.Read, error) {
	reads := make([]txn.Read, Buckets)
	empty := make([]bool, Buckets)
	err := parallel(Buckets, g.cfg.ReadsParallelMax, func(b int) error {
		v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: hasVertex(pred, b)}, engineapi.ReadOptions{Edges: true, EdgesMax: 1})
		if err != nil {
			return err
		}
		reads[b], empty[b] = v.Read, len(v.Edges) == 0
		return nil
	})
	return !slices.Contains(empty, false), reads, err
}

// runWork does the pending alter work, one item at a time, removing each
// item from the stored metadata when it is done.
func (g *Graph) runWork(ctx context.Context) error {
	for {
		snap, err := g.db.Begin(ctx)
		if err != nil {
			return err
		}
		st, err := g.schemaAt(ctx, snap)
		if err != nil {
			return err
		}
		if len(st.meta.Work) == 0 {
			return nil
		}
		w := st.meta.Work[0]
		g.log.Info("dgraph alter work", "kind", w.Kind, "pred", w.Pred, "tokenizer", w.Tok, "gen", w.Gen)
		if err := g.doWork(ctx, snap, w); err != nil {
			return fmt.Errorf("%s %s: %w", w.Kind, w.Pred, err)
		}
		if err := g.retry(ctx, func(int) error { return g.finishWork(ctx, w) }); err != nil {
			return err
		}
	}
}

// finishWork removes item w from the stored metadata.
func (g *Graph) finishWork(ctx context.Context, w workItem) error {
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return err
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return err
	}
	i := slices.Index(st.meta.Work, w)
	if i < 0 {
		return nil // another process finished it
	}
	m := st.meta.clone()
	m.Work = slices.Delete(m.Work, i, i+1)
	sch := st.sch
	if w.Kind == "drop_pred" { // its values are gone: now the definition and indexes
		var diff schema.Diff
		if sch, diff, err = sch.DropPredicate(w.Pred); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		for _, c := range diff.Predicates {
			planChange(&m, c, true)
		}
	}
	_, err = g.db.Commit(ctx, []txn.Read{st.read}, schemaOps(sch, m))
	return err
}

// DropPredicate deletes every value and edge of pred, its reverse edges,
// counts and indexes, and its schema definition (Dgraph's drop_attr).
// Mutations of pred fail with ErrBusy meanwhile; types naming it keep the
// field, as in Dgraph.
func (g *Graph) DropPredicate(ctx context.Context, pred string) error {
	if err := checkPred(pred); err != nil {
		return err
	}
	if strings.HasPrefix(pred, schema.ReservedPrefix) {
		return fmt.Errorf("%w: predicate %s is reserved and cannot be dropped", ErrInvalid, pred)
	}
	err := g.retry(ctx, func(int) error {
		snap, err := g.db.Begin(ctx)
		if err != nil {
			return err
		}
		st, err := g.schemaAt(ctx, snap)
		if err != nil {
			return err
		}
		if _, ok := st.sch.Predicate(pred); !ok {
			return nil
		}
		if st.meta.busy(pred) {
			return fmt.Errorf("%w: an alter of %s is still in progress", ErrBusy, pred)
		}
		m := st.meta.clone()
		m.Work = append(m.Work, workItem{Kind: "drop_pred", Pred: pred})
		_, err = g.db.Commit(ctx, []txn.Read{st.read}, schemaOps(st.sch, m))
		return err
	})
	if err != nil {
		return err
	}
	return g.runWork(ctx)
}

// dropValues deletes pred from the given nodes, through mutations that
// maintain everything derived from it.
func (g *Graph) dropValues(ctx context.Context, pred string, subjects []uint64) error {
	for lo := 0; lo < len(subjects); lo += g.cfg.BuildBatchMax {
		var m Mutation
		for _, u := range subjects[lo:min(lo+g.cfg.BuildBatchMax, len(subjects))] {
			m.Del = append(m.Del, rdf.NQuad{Subject: rdf.Term{Kind: rdf.UID, UID: u}, Predicate: pred, Object: rdf.Term{Kind: rdf.Wildcard}})
		}
		if _, err := g.MutateWith(ctx, m, MutateOptions{dropping: pred}); err != nil {
			return err
		}
	}
	return nil
}

// errChunk asks inChunks for smaller chunks.
var errChunk = errors.New("dgraph: chunk too large")

// inChunks runs fn over [0, n) in transactions of at most BuildBatchMax
// units, halving a chunk whose operations do not fit in one transaction.
// fn returns the reads and operations of units [lo, hi) computed at snap.
func (g *Graph) inChunks(ctx context.Context, n int, fn func(snap engineapi.Snapshot, lo, hi int) ([]txn.Read, []txn.Op, error)) error {
	size := g.cfg.BuildBatchMax
	for lo := 0; lo < n; {
		hi := min(lo+size, n)
		err := g.retry(ctx, func(int) error {
			snap, err := g.db.Begin(ctx)
			if err != nil {
				return err
			}
			reads, ops, err := fn(snap, lo, hi)
			switch {
			case err != nil:
				return err
			case len(ops) == 0:
				return nil
			case len(ops) > txn.OpsMax/2:
				return errChunk
			}
			_, err = g.db.Commit(ctx, reads, ops)
			return err
		})
		if (errors.Is(err, errChunk) || errors.Is(err, txn.ErrTooLarge)) && hi-lo > 1 {
			size = max(1, (hi-lo)/2)
			continue
		}
		if err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

func (g *Graph) doWork(ctx context.Context, snap engineapi.Snapshot, w workItem) error {
	if w.Kind == "drop_index" {
		return g.dropIndex(ctx, w.Pred, w.Gen)
	}
	subjects, err := g.Has(ctx, snap, w.Pred)
	if err != nil {
		return err
	}
	switch w.Kind {
	case "drop_pred":
		return g.dropValues(ctx, w.Pred, subjects)
	case "index":
		return g.buildIndex(ctx, w, subjects)
	case "convert":
		return g.inChunks(ctx, len(subjects), func(snap engineapi.Snapshot, lo, hi int) ([]txn.Read, []txn.Op, error) {
			return g.convertChunk(ctx, snap, w, subjects[lo:hi])
		})
	case "reverse", "drop_reverse":
		return g.inChunks(ctx, len(subjects), func(snap engineapi.Snapshot, lo, hi int) ([]txn.Read, []txn.Op, error) {
			return g.reverseChunk(ctx, snap, w, subjects[lo:hi])
		})
	case "count", "drop_count":
		objects, err := g.objectsOf(ctx, snap, w.Pred, subjects)
		if err != nil {
			return err
		}
		return g.inChunks(ctx, len(objects), func(snap engineapi.Snapshot, lo, hi int) ([]txn.Read, []txn.Op, error) {
			return g.countChunk(ctx, snap, w, objects[lo:hi])
		})
	}
	return fmt.Errorf("%w: unknown alter work %q", ErrCorrupt, w.Kind)
}

// readAll reads the given nodes with all their properties and edges.
func (g *Graph) readAll(ctx context.Context, snap engineapi.Snapshot, uids []uint64) ([]*engineapi.Vertex, error) {
	vs := make([]*engineapi.Vertex, len(uids))
	err := parallel(len(uids), g.cfg.ReadsParallelMax, func(i int) error {
		v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: FormatUID(uids[i])},
			engineapi.ReadOptions{Props: true, Edges: true, EdgesMax: g.cfg.EdgesMax})
		if err == nil && v.EdgesTruncated {
			err = fmt.Errorf("%w: node %s has more than %d out-edges", ErrLimit, v.Handle, g.cfg.EdgesMax)
		}
		vs[i] = v
		return err
	})
	return vs, err
}

// buildIndex adds the entries of index w for every node with a value of
// w.Pred, skipping entries present (an interrupted build resumed).
func (g *Graph) buildIndex(ctx context.Context, w workItem, subjects []uint64) error {
	tk := index.Get(w.Tok)
	return g.inChunks(ctx, len(subjects), func(snap engineapi.Snapshot, lo, hi int) ([]txn.Read, []txn.Op, error) {
		st, err := g.schemaAt(ctx, snap)
		if err != nil {
			return nil, nil, err
		}
		vs, err := g.readAll(ctx, snap, subjects[lo:hi])
		if err != nil {
			return nil, nil, err
		}
		iw := &internalWrites{vertices: map[string]*ivertex{}}
		for _, v := range vs {
			uid, _ := UIDOfHandle(v.Handle)
			for _, k := range slices.Sorted(maps.Keys(v.Props)) {
				if kind, p, _, _ := classifyProp(k); kind != propValue || p != w.Pred {
					continue
				}
				b := storedBucket(v.Props, uid, w.Pred)
				for _, tok := range tk.Tokens(v.Props[k]) {
					iw.add(indexVertex(w.Gen, w.Tok, k, b, tok), v.Handle, v.Handle, dirVertexIn(st.meta.Placement, w.Pred, w.Gen, b), dirEdge(k, tok))
				}
			}
		}
		a := &attempt{g: g, ctx: ctx, snap: snap}
		if err := a.checkInternal(iw); err != nil {
			return nil, nil, err
		}
		var ops []txn.Op
		for _, h := range slices.Sorted(maps.Keys(iw.vertices)) {
			if v := iw.vertices[h]; !v.exists {
				ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: h},
					txn.Op{Kind: txn.CreateEdge, Vertex: v.dir, Edge: v.dirEdge, Dst: h})
			}
		}
		present := make([]bool, len(iw.adds))
		err = parallel(len(iw.adds), g.cfg.ReadsParallelMax, func(i int) error {
			e := iw.adds[i]
			if !iw.vertices[e.v].exists {
				return nil
			}
			got, err := g.db.GetEdge(ctx, snap, engineapi.VertexRef{Name: e.v}, e.h)
			present[i] = err == nil && got.Exists
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		for i, e := range iw.adds {
			if !present[i] {
				ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: e.v, Edge: e.h, Dst: e.dst})
			}
		}
		return []txn.Read{st.read}, ops, nil
	})
}

// reverseChunk adds (reverse) or removes (drop_reverse, with the reverse
// counts) the reverse edges of the w.Pred edges of some subjects.
func (g *Graph) reverseChunk(ctx context.Context, snap engineapi.Snapshot, w workItem, subjects []uint64) ([]txn.Read, []txn.Op, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, nil, err
	}
	vs, err := g.readAll(ctx, snap, subjects)
	if err != nil {
		return nil, nil, err
	}
	rev := ReverseName(w.Pred)
	type want struct {
		obj, h, src string
	}
	var wants []want
	for _, v := range vs {
		uid, _ := UIDOfHandle(v.Handle)
		for _, e := range v.Edges {
			if p, _, ok := ParseEdgeHandle(e.Handle); ok && p == w.Pred {
				wants = append(wants, want{obj: e.Dst, h: EdgeHandle(rev, uid), src: v.Handle})
			}
		}
	}
	present := make([]bool, len(wants))
	err = parallel(len(wants), g.cfg.ReadsParallelMax, func(i int) error {
		got, err := g.db.GetEdge(ctx, snap, engineapi.VertexRef{Name: wants[i].obj}, wants[i].h)
		present[i] = err == nil && got.Exists
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var ops []txn.Op
	objs := map[string]bool{}
	for i, x := range wants {
		objs[x.obj] = true
		switch {
		case w.Kind == "reverse" && !present[i]:
			ops = append(ops, txn.Op{Kind: txn.CreateEdge, Vertex: x.obj, Edge: x.h, Dst: x.src},
				txn.Op{Kind: txn.SetEdgeProp, Vertex: x.obj, Edge: x.h, Key: EdgePredKey, Value: value.Str(rev)})
		case w.Kind == "drop_reverse" && present[i]:
			ops = append(ops, txn.Op{Kind: txn.DeleteEdge, Vertex: x.obj, Edge: x.h})
		}
	}
	if w.Kind == "drop_reverse" {
		cops, err := g.dropCounts(ctx, snap, slices.Sorted(maps.Keys(objs)), rev)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, cops...)
	}
	return []txn.Read{st.read}, ops, nil
}

// dropCounts deletes the count property of pred on the given vertices.
func (g *Graph) dropCounts(ctx context.Context, snap engineapi.Snapshot, handles []string, pred string) ([]txn.Op, error) {
	has := make([]bool, len(handles))
	err := parallel(len(handles), g.cfg.ReadsParallelMax, func(i int) error {
		v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: handles[i]}, engineapi.ReadOptions{Props: true})
		if err == nil {
			_, has[i] = v.Props[CountKey(pred)]
		}
		return err
	})
	var ops []txn.Op
	for i, h := range handles {
		if has[i] {
			ops = append(ops, txn.Op{Kind: txn.DeleteVertexProp, Vertex: h, Key: CountKey(pred)})
		}
	}
	return ops, err
}

// objectsOf lists the destinations of the pred edges of subjects.
func (g *Graph) objectsOf(ctx context.Context, snap engineapi.Snapshot, pred string, subjects []uint64) ([]uint64, error) {
	seen := map[uint64]bool{}
	for lo := 0; lo < len(subjects); lo += g.cfg.BuildBatchMax {
		vs, err := g.readAll(ctx, snap, subjects[lo:min(lo+g.cfg.BuildBatchMax, len(subjects))])
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			for _, e := range v.Edges {
				if p, dst, ok := ParseEdgeHandle(e.Handle); ok && p == pred {
					seen[dst] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// countChunk sets (count) or deletes (drop_count) the reverse edge count of
// some objects.
func (g *Graph) countChunk(ctx context.Context, snap engineapi.Snapshot, w workItem, objects []uint64) ([]txn.Read, []txn.Op, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, nil, err
	}
	rev := ReverseName(w.Pred)
	if w.Kind == "drop_count" {
		hs := make([]string, len(objects))
		for i, u := range objects {
			hs[i] = FormatUID(u)
		}
		ops, err := g.dropCounts(ctx, snap, hs, rev)
		return []txn.Read{st.read}, ops, err
	}
	vs, err := g.readAll(ctx, snap, objects)
	if err != nil {
		return nil, nil, err
	}
	var ops []txn.Op
	for _, v := range vs {
		var c int64
		for _, e := range v.Edges {
			if p, _, ok := ParseEdgeHandle(e.Handle); ok && p == rev {
				c++
			}
		}
		if cur, ok := v.Props[CountKey(rev)]; c > 0 && (!ok || cur.Int() != c) {
			ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: v.Handle, Key: CountKey(rev), Value: value.I64(c)})
		}
	}
	return []txn.Read{st.read}, ops, nil
}

// dropIndex deletes the vertices of index generation gen: each token
// vertex (with its entries), then the directories.
func (g *Graph) dropIndex(ctx context.Context, pred string, gen uint64) error {
	for b := range Buckets {
		dir := dirVertexIn(g.cfg.Placement, pred, gen, b)
		for {
			snap, err := g.db.Begin(ctx)
			if err != nil {
				return err
			}
			v, err := g.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: dir}, engineapi.ReadOptions{Edges: true, EdgesMax: g.cfg.BuildBatchMax})
			if err != nil {
				return err
			}
			if !v.Exists {
				break
			}
			if len(v.Edges) == 0 {
				if err := g.dropVertex(ctx, dir); err != nil {
					return err
				}
				break
			}
			for _, e := range v.Edges {
				if err := g.dropVertex(ctx, e.Dst); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dropVertex deletes an internal vertex (its out-edges go with it: the
// engine drops them with the vertex, as one operation).
func (g *Graph) dropVertex(ctx context.Context, h string) error {
	return g.retry(ctx, func(int) error {
		_, err := g.db.Commit(ctx, nil, []txn.Op{{Kind: txn.DeleteVertex, Vertex: h}})
		if errors.Is(err, txn.ErrNotFound) {
			return nil // gone already
		}
		return err
	})
}

// ConvertNodesMax bounds the nodes whose values an alter converts.
const ConvertNodesMax = 5000

// checkConvertible reads every value of a predicate whose type changes and
// checks that each converts, returning the reads for the alter's read set.
func (g *Graph) checkConvertible(ctx context.Context, snap engineapi.Snapshot, c schema.PredicateChange) ([]txn.Read, error) {
	subjects, err := g.Has(ctx, snap, c.Name)
	if err != nil {
		return nil, err
	}
	if len(subjects) > ConvertNodesMax {
		return nil, fmt.Errorf("%w: converting the values of %s on %d nodes (at most %d)", ErrUnsupported, c.Name, len(subjects), ConvertNodesMax)
	}
	vs, err := g.readAll(ctx, snap, subjects)
	if err != nil {
		return nil, err
	}
	reads := make([]txn.Read, 0, len(vs))
	for _, v := range vs {
		reads = append(reads, v.Read)
		if _, err := convertProps(v.Props, c.Name, *c.New); err != nil {
			return nil, fmt.Errorf("node %s: %w", v.Handle, err)
		}
	}
	return reads, nil
}

// convertProps returns the values of pred in props converted to the
// predicate's new definition (only those that change).
func convertProps(props map[string]value.Value, pred string, P schema.Predicate) (map[string]value.Value, error) {
	out := map[string]value.Value{}
	for k, v := range props {
		kind, p, lang, _ := classifyProp(k)
		if kind != propValue || p != pred {
			continue
		}
		if lang != "" && !P.Lang {
			return nil, fmt.Errorf("%w: %s has values in language %q: the new type needs @lang", ErrInvalid, pred, lang)
		}
		var conv []value.Value
		for _, e := range listOf(v) {
			ce, err := convertValue(e, P.Type)
			if err != nil {
				return nil, err
			}
			conv = append(conv, ce)
		}
		nv := conv[0]
		if P.List {
			nv = value.ListOf(conv...)
		}
		if !sameValue(v, nv) {
			out[k] = nv
		}
	}
	return out, nil
}

// convertChunk rewrites the values of w.Pred on some nodes to its type.
func (g *Graph) convertChunk(ctx context.Context, snap engineapi.Snapshot, w workItem, subjects []uint64) ([]txn.Read, []txn.Op, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, nil, err
	}
	P, ok := st.sch.Predicate(w.Pred)
	if !ok {
		return nil, nil, fmt.Errorf("%w: converting %s, which the schema lacks", ErrCorrupt, w.Pred)
	}
	vs, err := g.readAll(ctx, snap, subjects)
	if err != nil {
		return nil, nil, err
	}
	var ops []txn.Op
	for _, v := range vs {
		conv, err := convertProps(v.Props, w.Pred, P)
		if err != nil {
			return nil, nil, fmt.Errorf("node %s: %w", v.Handle, err)
		}
		for _, k := range slices.Sorted(maps.Keys(conv)) {
			ops = append(ops, txn.Op{Kind: txn.SetVertexProp, Vertex: v.Handle, Key: k, Value: conv[k]})
		}
	}
	return []txn.Read{st.read}, ops, nil
}
