package dgraph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/weft-db/weft/internal/dgraph/index"
	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// A direct load (LoadRDFDirect) builds a new store's records from the
// N-Quads themselves, as Dgraph's bulk loader builds posting lists, instead
// of running one transaction per batch: it reads the file once, checking
// and converting every quad and giving every new node its UID in file
// order (the map phase, one goroutine); it then computes each node's final
// state from its quads and writes the records that state implies — the
// node's vertex, alias, properties, edges and in-edge entries, counts,
// has-set and index entries and the index vertices they need — with one
// worker per partition of the nodes (the reduce phase), and the reverse
// edges in a second round, each worker writing sorted tables of its own.
//
// The records are those the transactional load writes (the same model,
// names and encodings, tests compare the two stores key by key), with two
// differences a reader cannot see: every record carries one stamp (the
// load is one transaction), and index token vertices exist only for the
// tokens of the values a node ends with (the transactional load also
// leaves, empty, the vertices of tokens of values a later quad replaced).
// A node's has-set and index entries are in its UID's bucket.
//
// It needs a store with no nodes (a new bulk store), the vertex placement
// and namespace 0; RDF with set quads only (a load file has nothing
// else). Memory holds the quads' effects (facts) for the reduce phase:
// about directFactBytes per quad plus its strings; past half of memMax,
// each partition's facts are sorted and written to a run file in the
// sink's temporary directory (facts.go), and the reduce phase merges the
// runs. What stays in memory for the whole load: the XID→UID map (as in
// Dgraph's bulk loader), the index vertices already written and the
// reverse edges (one small record each) until their round.

// DirectSink is the store a direct load writes to (bulk.DB).
type DirectSink interface {
	// DirectStamp is the stamp of every record the load writes.
	DirectStamp() (vclock.Stamp, error)
	// ShardOf places a handle as a commit would.
	ShardOf(name string) uint32
	// Base is the placement base (txn.UnitOf).
	Base() uint32
	// NewTables returns n writers of records (one per goroutine) holding
	// at most memMax bytes in memory together; each is sized for about
	// recsHint records.
	NewTables(n, memMax, recsHint int) txn.KeyTables
	// Counted adds to the store's vertex and edge counts.
	Counted(vertices, edges int64)
	// TempDir is a directory for the load's scratch files (removed with
	// the store under construction when the load fails).
	TempDir() string
}

// directFactBytes estimates the memory of one quad's effect held for the
// reduce phase, with the partition slices' room to grow (its strings and
// facets are counted apart).
const directFactBytes = int(unsafe.Sizeof(dfact{})) * 3 / 2

// dpred is a predicate as the direct load writes it.
type dpred struct {
	name    string
	idx     int // in directLoad.predList
	P       schema.Predicate
	added   bool // not in the stored schema: this load adds it
	addedIn int  // the batch that added it: its values may still give it a language there
	index   []dindex
}

type dindex struct {
	name string
	tk   *index.Tokenizer
	gen  uint64
}

// Fact kinds.
const (
	factNode  = iota // the node is created (val: its XID, or null)
	factValue        // a scalar value
	factEdge         // a uid edge to dst
)

// dfact is one quad's effect on a node, in file order.
type dfact struct {
	uid    uint64
	dst    uint64
	pred   *dpred
	lang   string
	val    value.Value
	facets []rdf.Facet
	batch  int32
	seq    uint32 // position in its partition: file order
	kind   uint8
}

// directLoad is the state of one direct load's map phase.
type directLoad struct {
	g      *Graph
	ctx    context.Context
	snap   engineapi.Snapshot
	cfg    LoadConfig
	sink   DirectSink
	st     *schemaState
	memMax int
	alloc  *Allocator
	preds  map[string]*dpred
	// predList lists every predicate by dpred.idx (fact runs name them so).
	predList []*dpred
	// runs lists, by partition, the fact runs written to disk, in order.
	runs   [][]string
	xids   map[string]uint64
	blanks map[string]uint64
	// explicit holds the nodes created by an explicit UID (leased, not
	// handed out by the allocator).
	explicit map[uint64]bool
	parts    [][]dfact
	// batchXIDs lists the XID nodes created in the current batch: their
	// xid values follow the batch's quads, as the transactional load
	// records them at the end of each transaction.
	batchXIDs []uint64
	xidOf     map[uint64]string
	batch     int
	// writerBucket is, by batch, the bucket of the allocator's next UID
	// when the batch ended (-1: none leased): the bucket a transactional
	// load gives the entries of a node's first values of a predicate
	// (attempt.entryBucket).
	writerBucket []int8
	bytes        int
	stats        LoadStats
}

// LoadRDFDirect loads N-Quads from r into a new store by writing its records
// directly (doc above). The schema must be applied before; a quad the
// schema rejects fails the load (or is skipped with cfg.SkipInvalid), as in
// LoadRDF. memMax bounds the memory the load holds (quads' effects and the
// tables being sorted). cfg.Loaders is not used: the reduce phase runs one
// worker per CPU.
func (g *Graph) LoadRDFDirect(ctx context.Context, r io.Reader, name string, cfg LoadConfig, sink DirectSink, memMax int) (LoadStats, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return LoadStats{}, err
	}
	if err := g.directUsable(ctx); err != nil {
		return LoadStats{}, err
	}
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return LoadStats{}, err
	}
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return LoadStats{}, err
	}
	if len(st.meta.Work) > 0 {
		return LoadStats{}, fmt.Errorf("%w: direct load while alter work is pending", ErrUnsupported)
	}
	parts := max(runtime.GOMAXPROCS(0), 1)
	l := &directLoad{g: g, ctx: ctx, snap: snap, cfg: cfg, sink: sink, st: st, memMax: memMax, alloc: g.NewAllocator(),
		preds: map[string]*dpred{}, xids: map[string]uint64{}, blanks: map[string]uint64{}, explicit: map[uint64]bool{},
		parts: make([][]dfact, parts), runs: make([][]string, parts), xidOf: map[uint64]string{}}
	defer func() {
		for _, rs := range l.runs {
			for _, path := range rs {
				_ = os.Remove(path)
			}
		}
	}()
	if err := l.read(r, name); err != nil {
		return l.stats, err
	}
	ts, err := sink.DirectStamp()
	if err != nil {
		return l.stats, err
	}
	if err := l.reduce(ts); err != nil {
		return l.stats, err
	}
	if err := l.schemaAdditions(ctx); err != nil {
		return l.stats, err
	}
	l.stats.Batches, l.stats.Attempts, l.stats.Direct = 1, 1, true
	l.stats.Elapsed = time.Since(start)
	return l.stats, nil
}

// directUsable checks the preconditions: vertex placement, namespace 0, no
// UID ever leased (so no node exists).
func (g *Graph) directUsable(ctx context.Context) error {
	if normPlacement(g.cfg.Placement) != PlacementVertex {
		return fmt.Errorf("%w: a direct load writes the vertex placement only", ErrUnsupported)
	}
	if v, ok := g.raw.(*nsView); ok && v.ns != 0 {
		return fmt.Errorf("%w: a direct load writes namespace 0 only", ErrUnsupported)
	}
	snap, err := g.db.Begin(ctx)
	if err != nil {
		return err
	}
	if _, next, err := g.leaseRecord(ctx, snap); err != nil {
		return err
	} else if next != 1 {
		return fmt.Errorf("%w: a direct load needs a store without nodes", ErrUnsupported)
	}
	return nil
}

// read is the map phase: every quad checked, converted and recorded as a
// fact of its subject, in file order, batches cut as LoadRDF cuts them.
func (l *directLoad) read(r io.Reader, name string) error {
	ctx, cancel := context.WithCancel(l.ctx)
	defer cancel()
	chunks := make(chan []parsedQuad, 4)
	go parseChunks(ctx, r, chunks)
	n := 0
	var last rdf.Term
	for chunk := range chunks {
		for i := range chunk {
			pq := &chunk[i]
			if skip, err := readFailure(pq.err, name, l.cfg.SkipInvalid, l.skip); err != nil {
				return err
			} else if skip {
				continue
			}
			nq := &pq.nq
			if n >= l.cfg.BatchQuads && (n >= 2*l.cfg.BatchQuads || !nq.Subject.Equal(last)) {
				if err := l.endBatch(); err != nil {
					return err
				}
				n = 0
			}
			n++
			last = nq.Subject
			if err := l.quad(nq); err != nil {
				if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
					return err
				}
				where := fmt.Sprintf("%s:%d", name, pq.line)
				err = fmt.Errorf("set quad 1 (%s): %w", nq.String(), err)
				if !l.cfg.SkipInvalid {
					return fmt.Errorf("%s: %w", where, err)
				}
				l.skip(where, err)
				continue
			}
			l.stats.Quads++
		}
		if l.bytes >= l.memMax/2 {
			if err := l.spillFacts(); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.endBatch()
}

// parsedQuad is one statement as the parser read it (or its error).
type parsedQuad struct {
	nq   rdf.NQuad
	err  error
	line int
}

// parseChunks parses r on its own goroutine, ahead of the map phase, in
// chunks; it stops after the input's end or an error that is not a bad
// line, or when ctx ends, and closes out.
func parseChunks(ctx context.Context, r io.Reader, out chan<- []parsedQuad) {
	defer close(out)
	rd := rdf.NewReader(r)
	chunk := make([]parsedQuad, 0, 1024)
	for {
		nq, err := rd.Read()
		if err == io.EOF {
			break
		}
		chunk = append(chunk, parsedQuad{nq: nq, err: err, line: rd.Line()})
		var pe *rdf.Error
		if err != nil && !errors.As(err, &pe) {
			break
		}
		if len(chunk) == cap(chunk) {
			select {
			case out <- chunk:
			case <-ctx.Done():
				return
			}
			chunk = make([]parsedQuad, 0, 1024)
		}
	}
	if len(chunk) > 0 {
		select {
		case out <- chunk:
		case <-ctx.Done():
		}
	}
}

// stage reports a phase to cfg.Stage.
func (l *directLoad) stage(s string) {
	if l.cfg.Stage != nil {
		l.cfg.Stage(s)
	}
}

func (l *directLoad) skip(where string, err error) {
	l.stats.Skipped++
	if len(l.stats.SkippedLines) < l.cfg.SkippedMax {
		l.stats.SkippedLines = append(l.stats.SkippedLines, Skipped{Where: where, Err: err.Error()})
	}
}

// endBatch records the xid values of the batch's new XID nodes and reports
// progress.
func (l *directLoad) endBatch() error {
	for _, uid := range l.batchXIDs {
		nq := rdf.NQuad{Subject: rdf.Term{Kind: rdf.UID, UID: uid}, Predicate: XIDPred,
			Object: rdf.Term{Kind: rdf.Literal, Value: value.Str(l.xidOf[uid]), Datatype: rdf.TypeString}}
		delete(l.xidOf, uid) // needed until its batch ends
		dp, err := l.pred(XIDPred, &nq)
		if err != nil {
			return err
		}
		if err := l.value(dp, uid, &nq); err != nil {
			return fmt.Errorf("recording the xid of %s: %w", FormatUID(uid), err)
		}
		l.stats.Values--
	}
	l.batchXIDs = l.batchXIDs[:0]
	wb := int8(-1)
	if b, ok := l.alloc.bucket(); ok {
		wb = int8(b)
	}
	l.writerBucket = append(l.writerBucket, wb)
	l.batch++
	if l.cfg.Progress != nil {
		l.cfg.Progress(l.stats.Quads)
	}
	return l.ctx.Err()
}

// pred returns the predicate of a set quad, adding it to the schema
// (Dgraph's flexible schema) when the schema lacks it, as attempt.pred.
func (l *directLoad) pred(p string, nq *rdf.NQuad) (*dpred, error) {
	if dp, ok := l.preds[p]; ok {
		P := dp.P
		if nq.Lang != "" && !P.Lang && dp.added && dp.addedIn == l.batch && (P.Type == schema.String || P.Type == schema.Default) {
			dp.P.Type, dp.P.Lang = schema.String, true
		}
		return dp, nil
	}
	dp := &dpred{name: p, idx: len(l.predList)}
	l.predList = append(l.predList, dp)
	if P, ok := l.st.sch.Predicate(p); ok {
		dp.P = P
	} else {
		dp.P, dp.added, dp.addedIn = inferPred(p, nq), true, l.batch
	}
	for _, t := range dp.P.Index {
		tk := index.Get(t.Name)
		if tk == nil {
			continue // accepted in the schema, not maintained
		}
		gen, ok := l.st.meta.Index[p+"|"+t.Name]
		if !ok {
			return nil, fmt.Errorf("%w: index %s(%s) has no generation", ErrCorrupt, p, t.Name)
		}
		dp.index = append(dp.index, dindex{name: t.Name, tk: tk, gen: gen})
	}
	l.preds[p] = dp
	return dp, nil
}

// quad checks one set quad as applySet does and records its fact.
func (l *directLoad) quad(nq *rdf.NQuad) error {
	if err := checkQuad(nq, false); err != nil {
		return err
	}
	p := nq.Predicate
	known := l.preds[p] != nil
	dp, err := l.pred(p, nq)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		if !known && dp.added {
			delete(l.preds, p) // not added after all
		}
		return err
	}
	P := dp.P
	if P.Type == schema.UID {
		if !isNodeTerm(nq.Object) {
			return fail(fmt.Errorf("%w: predicate %s is of type uid: its object must be a node, not a literal", ErrInvalid, p))
		}
		if nq.Lang != "" {
			return fail(fmt.Errorf("%w: predicate %s is of type uid: no language", ErrInvalid, p))
		}
		if err := l.checkUIDs(nq.Subject, nq.Object); err != nil {
			return fail(err)
		}
		s, err := l.node(nq.Subject)
		if err != nil {
			return fail(err)
		}
		o, err := l.node(nq.Object)
		if err != nil {
			return fail(err)
		}
		l.add(dfact{kind: factEdge, uid: s, dst: o, pred: dp, facets: nq.Facets})
		l.stats.Edges++
		return nil
	}
	if isNodeTerm(nq.Object) {
		return fail(fmt.Errorf("%w: predicate %s is of type %s: its object must be a literal, not a node", ErrInvalid, p, P.Type))
	}
	if nq.Lang != "" && !P.Lang {
		return fail(fmt.Errorf("%w: predicate %s has no @lang directive: cannot store a value in language %q", ErrInvalid, p, nq.Lang))
	}
	if P.List && len(nq.Facets) > 0 {
		return fail(fmt.Errorf("%w: facets on the values of list predicate %s", ErrUnsupported, p))
	}
	v, err := convertLiteral(nq.Object, P.Type)
	if err != nil {
		return fail(fmt.Errorf("predicate %s: %w", p, err))
	}
	if err := l.checkUIDs(nq.Subject); err != nil {
		return fail(err)
	}
	s, err := l.node(nq.Subject)
	if err != nil {
		return fail(err)
	}
	l.add(dfact{kind: factValue, uid: s, pred: dp, lang: nq.Lang, val: v, facets: nq.Facets})
	l.stats.Values++
	return nil
}

// value records a scalar value of uid: its xid (checked but for the
// conversion).
func (l *directLoad) value(dp *dpred, uid uint64, nq *rdf.NQuad) error {
	v, err := convertLiteral(nq.Object, dp.P.Type)
	if err != nil {
		return fmt.Errorf("predicate %s: %w", dp.name, err)
	}
	l.add(dfact{kind: factValue, uid: uid, pred: dp, lang: nq.Lang, val: v, facets: nq.Facets})
	l.stats.Values++
	return nil
}

// checkUIDs checks that the explicit UIDs among ts were leased, before
// a quad creates any node.
func (l *directLoad) checkUIDs(ts ...rdf.Term) error {
	for _, t := range ts {
		if t.Kind == rdf.UID && !l.made(t.UID) {
			if err := l.g.checkLeased(l.ctx, l.snap, t.UID); err != nil {
				return err
			}
		}
	}
	return nil
}

// node finds or creates the node of a subject or object term.
func (l *directLoad) node(t rdf.Term) (uint64, error) {
	switch t.Kind {
	case rdf.IRI:
		if uid, ok := l.xids[t.Name]; ok {
			return uid, nil
		}
		if len(l.xids) >= max(l.cfg.XIDCacheMax, 1) {
			return 0, fmt.Errorf("%w: more than %d XIDs in a direct load (LoadConfig.XIDCacheMax)", ErrLimit, l.cfg.XIDCacheMax)
		}
		uid, err := l.create(t.Name)
		if err != nil {
			return 0, err
		}
		l.xids[t.Name] = uid
		return uid, nil
	case rdf.Blank:
		if uid, ok := l.blanks[t.Name]; ok {
			return uid, nil
		}
		if len(l.blanks) >= l.cfg.BlanksMax {
			return 0, fmt.Errorf("%w: more than %d blank nodes in one load", ErrLimit, l.cfg.BlanksMax)
		}
		uid, err := l.create("")
		if err != nil {
			return 0, err
		}
		l.blanks[t.Name] = uid
		return uid, nil
	case rdf.UID:
		if l.made(t.UID) {
			return t.UID, nil
		}
		if err := l.g.checkLeased(l.ctx, l.snap, t.UID); err != nil {
			return 0, err
		}
		l.explicit[t.UID] = true
		l.add(dfact{kind: factNode, uid: t.UID})
		l.stats.Nodes++
		return t.UID, nil
	}
	return 0, fmt.Errorf("%w: a %s is not a node", ErrInvalid, t.Kind)
}

// made reports whether node uid was created by this load: handed out by
// its allocator (the store had no lease before, so those are exactly the
// UIDs below the allocator's next) or named explicitly.
func (l *directLoad) made(uid uint64) bool {
	return uid < l.alloc.handedOut() || l.explicit[uid]
}

// create gives a new node a UID (an XID node gets its xid value at the end
// of the batch).
func (l *directLoad) create(xid string) (uint64, error) {
	uid, err := l.alloc.Next(l.ctx)
	if err != nil {
		return 0, err
	}
	if l.explicit[uid] {
		return 0, fmt.Errorf("%w: uid %s was named explicitly before it was allocated", ErrInvalid, FormatUID(uid))
	}
	f := dfact{kind: factNode, uid: uid}
	if xid != "" {
		f.val = value.Str(xid)
		l.batchXIDs = append(l.batchXIDs, uid)
		l.xidOf[uid] = xid
	}
	l.add(f)
	l.stats.Nodes++
	return uid, nil
}

func (l *directLoad) add(f dfact) {
	f.batch = int32(l.batch)
	i := int(f.uid % uint64(len(l.parts)))
	f.seq = uint32(len(l.parts[i]))
	l.parts[i] = append(l.parts[i], f)
	l.bytes += directFactBytes + len(f.lang) + int(unsafe.Sizeof(rdf.Facet{}))*len(f.facets)
	if f.val.Kind() == value.String {
		l.bytes += len(f.val.Str())
	}
}

// schemaAdditions commits the predicates the load added to the schema.
func (l *directLoad) schemaAdditions(ctx context.Context) error {
	var added []string
	for p, dp := range l.preds {
		if dp.added {
			added = append(added, p)
		}
	}
	if len(added) == 0 {
		return nil
	}
	slices.Sort(added)
	var b strings.Builder
	for _, p := range added {
		b.WriteString(l.preds[p].P.String())
		b.WriteByte('\n')
	}
	u, err := schema.Parse(b.String())
	if err != nil {
		return fmt.Errorf("%w: adding predicates to the schema: %v", ErrInvalid, err)
	}
	sch, _, err := l.st.sch.Apply(u)
	if err != nil {
		return fmt.Errorf("%w: adding predicates to the schema: %v", ErrInvalid, err)
	}
	_, err = l.g.db.Commit(ctx, []txn.Read{l.st.read}, schemaOps(sch, l.st.meta)[:1])
	return err
}

// reduce is the reduce phase: each partition's nodes written by a worker of
// its own, then the reverse edges.
func (l *directLoad) reduce(ts vclock.Stamp) error {
	n := len(l.parts)
	shared := &directShared{seed: maphash.MakeSeed(), units: map[txn.Unit]bool{}}
	// About 13 records per quad (the film data's 12.3, more with indexes).
	tables := l.sink.NewTables(n, l.memMax-l.bytes, min(int(l.stats.Quads)*13/n, (l.memMax-l.bytes)/(64*n)))
	ws := make([]*directWorker, n)
	for i := range ws {
		ws[i] = &directWorker{l: l, ts: ts, stamp: txn.EncodeStamp(ts), shared: shared,
			table: tables.Writer(i), rev: make([][]drev, n), units: map[txn.Unit]bool{},
			props: map[string]value.Value{}, dedges: map[string]*dedge{}, counts: map[*dpred]int64{}}
	}
	l.stage("writing the nodes' records")
	err := parallel(n, n, func(i int) error {
		sortFacts(l.parts[i])
		err := l.nodesOf(i, ws[i].node)
		l.parts[i] = nil
		return err
	})
	if err == nil {
		err = parallel(n, n, func(i int) error {
			var revs []drev
			for _, w := range ws {
				revs = append(revs, w.rev[i]...)
			}
			return ws[i].reverse(revs)
		})
	}
	var vertices, edges int64
	for _, w := range ws {
		for u := range w.units {
			shared.units[u] = true
		}
		vertices += w.vertices
		edges += w.edges
	}
	for _, u := range slices.SortedFunc(maps.Keys(shared.units), func(a, b txn.Unit) int { return strings.Compare(a.String(), b.String()) }) {
		if err == nil {
			err = ws[0].set(txn.PopKey(u), ws[0].stamp)
		}
	}
	l.stage("writing the sorted tables")
	if cerr := tables.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	l.sink.Counted(vertices, edges)
	return nil
}

// directShared is what the workers share: the internal vertices (has-set,
// index token, directory) already written.
type directShared struct {
	seed  maphash.Seed
	seen  [64]seenShard // by the name's hash: workers seldom wait for each other
	units map[txn.Unit]bool
}

type seenShard struct {
	mu sync.Mutex
	m  map[string]bool
	_  [40]byte // a cache line each
}

// firstDir reports whether directory vertex h is seen for the first time.
func (s *directShared) firstDir(h string) bool { return s.first("\x00" + h) }

// first reports whether h is seen for the first time.
func (s *directShared) first(h string) bool {
	sh := &s.seen[maphash.String(s.seed, h)%uint64(len(s.seen))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[h] {
		return false
	}
	if sh.m == nil {
		sh.m = map[string]bool{}
	}
	sh.m[h] = true
	return true
}

// drev is a reverse edge to write: on target, to src.
type drev struct {
	target, src uint64
	pred        *dpred
}

// directWorker writes the records of one partition's nodes.
type directWorker struct {
	l        *directLoad
	ts       vclock.Stamp
	stamp    []byte
	shared   *directShared
	table    txn.KeyWriter
	rev      [][]drev // by the target's partition
	units    map[txn.Unit]bool
	vertices int64
	edges    int64
	// Scratch buffers for a record's key and value (the Table copies them).
	kbuf, vbuf []byte
	// A node's state, kept from node to node (cleared).
	props  map[string]value.Value
	dedges map[string]*dedge
	counts map[*dpred]int64
}

type dedge struct {
	dst    uint64
	pred   *dpred
	facets []rdf.Facet
}

// node writes one node from its facts (sorted by file order).
func (w *directWorker) node(facts []dfact) error {
	uid := facts[0].uid
	h := FormatUID(uid)
	props, edges := w.props, w.dedges
	clear(props)
	clear(edges)
	var touched []*dpred
	var firstBatch []int32 // of each touched predicate
	xid := ""
	for i := range facts {
		f := &facts[i]
		if f.kind == factNode {
			if f.val.Kind() == value.String {
				xid = f.val.Str()
			}
			continue
		}
		if !slices.Contains(touched, f.pred) {
			touched = append(touched, f.pred)
			firstBatch = append(firstBatch, f.batch)
		}
		P := f.pred.P
		if f.kind == factEdge {
			eh := EdgeHandle(f.pred.name, f.dst)
			if !P.List { // a single uid: the new edge replaces the others
				for oh, e := range edges {
					if e.pred == f.pred && oh != eh {
						delete(edges, oh)
					}
				}
			}
			edges[eh] = &dedge{dst: f.dst, pred: f.pred, facets: f.facets}
			continue
		}
		key := ValueKey(f.pred.name, f.lang)
		if P.List {
			list := listOf(props[key])
			if !slices.ContainsFunc(list, func(e value.Value) bool { return sameValue(e, f.val) }) {
				props[key] = value.ListOf(append(list, f.val)...)
			}
			continue
		}
		for k := range props {
			if kind, _, _, _ := classifyProp(k); kind == propFacet && len(k) > len(key) && k[:len(key)] == key && k[len(key)] == '|' {
				delete(props, k)
			}
		}
		props[key] = f.val
		for _, fc := range f.facets {
			props[FacetPropKey(key, fc.Key)] = fc.Value
		}
	}
	counts := w.counts
	clear(counts)
	for _, e := range edges {
		counts[e.pred]++
		if e.pred.P.Reverse {
			p := int(e.dst % uint64(len(w.rev)))
			w.rev[p] = append(w.rev[p], drev{target: e.dst, src: uid, pred: e.pred})
		}
	}
	for dp, c := range counts {
		props[CountKey(dp.name)] = value.I64(c)
	}
	// Each predicate's entries go in the UID's bucket, or in the writer's
	// when the node got its first value of it (recorded when they differ).
	buckets := make([]int, len(touched))
	for i, dp := range touched {
		buckets[i] = bucket(uid)
		if wb := w.l.writerBucket[firstBatch[i]]; wb >= 0 && int(wb) != buckets[i] {
			buckets[i] = int(wb)
			props[bucketKey(dp.name)] = value.I64(int64(wb))
		}
	}
	// The vertex, its alias, properties and edges.
	if err := w.vertex(h); err != nil {
		return err
	}
	if xid != "" {
		a := xidAlias(xid)
		if err := w.set(txn.AliasKey(a), txn.AliasRec{Handle: h, LastWrite: w.ts}.Encode()); err != nil {
			return err
		}
		if err := w.set(txn.VAliasKey(h, a), nil); err != nil {
			return err
		}
		if err := w.set(txn.AliasAccessKey(a), w.stamp); err != nil {
			return err
		}
	}
	for k, v := range props {
		w.kbuf, w.vbuf = txn.AppendPropKey(w.kbuf[:0], h, k), value.Append(w.vbuf[:0], v)
		if err := w.set(w.kbuf, w.vbuf); err != nil {
			return err
		}
	}
	for eh, e := range edges {
		fm := facetProps(e.facets) // a facet named twice: the last value
		fm[EdgePredKey] = value.Str(e.pred.name)
		ps := make([]txn.Prop, 0, len(fm))
		for k, v := range fm {
			ps = append(ps, txn.Prop{Key: k, Value: v})
		}
		if err := w.edge(h, eh, FormatUID(e.dst), ps); err != nil {
			return err
		}
	}
	// Has-set and index entries.
	for i, dp := range touched {
		b := buckets[i]
		if hasPred(props, dp.name) {
			hv := hasVertex(dp.name, b)
			if err := w.internal(hv, "", ""); err != nil {
				return err
			}
			if err := w.edge(hv, h, h, nil); err != nil {
				return err
			}
		}
		if len(dp.index) == 0 {
			continue
		}
		for k, v := range props {
			if kind, kp, _, _ := classifyProp(k); kind != propValue || kp != dp.name {
				continue
			}
			for _, ix := range dp.index {
				for _, tok := range ix.tk.Tokens(v) {
					iv := indexVertex(ix.gen, ix.name, k, b, tok)
					if err := w.internal(iv, dirVertex(ix.gen, b), dirEdge(k, tok)); err != nil {
						return err
					}
					if err := w.edge(iv, h, h, nil); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// reverse writes the reverse edges whose targets are in this partition,
// and their counts under @count.
func (w *directWorker) reverse(revs []drev) error {
	slices.SortFunc(revs, func(a, b drev) int {
		switch {
		case a.target != b.target:
			return cmp.Compare(a.target, b.target)
		case a.pred.name != b.pred.name:
			return strings.Compare(a.pred.name, b.pred.name)
		}
		return cmp.Compare(a.src, b.src)
	})
	for i := 0; i < len(revs); {
		j := i
		for j < len(revs) && revs[j].target == revs[i].target && revs[j].pred == revs[i].pred {
			j++
		}
		th := FormatUID(revs[i].target)
		rev := ReverseName(revs[i].pred.name)
		for _, r := range revs[i:j] {
			if err := w.edge(th, EdgeHandle(rev, r.src), FormatUID(r.src), []txn.Prop{{Key: EdgePredKey, Value: value.Str(rev)}}); err != nil {
				return err
			}
		}
		if revs[i].pred.P.Count {
			if err := w.set(txn.PropKey(th, CountKey(rev)), value.Append(nil, value.I64(int64(j-i)))); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

func (w *directWorker) set(k, v []byte) error { return w.table.Set(k, v) }

// vertex writes a vertex created by the load: its record and access stamp.
func (w *directWorker) vertex(h string) error {
	w.kbuf = txn.AppendVertexKey(w.kbuf[:0], h)
	w.vbuf = txn.VertexRec{Exists: true, Shard: w.l.sink.ShardOf(h), LastWrite: w.ts}.AppendTo(w.vbuf[:0])
	if err := w.set(w.kbuf, w.vbuf); err != nil {
		return err
	}
	w.vertices++
	w.units[txn.UnitOf(h, w.l.sink.Base())] = true
	w.kbuf = txn.AppendAccessKey(w.kbuf[:0], h)
	return w.set(w.kbuf, w.stamp)
}

// edge writes edge eh of src to dst with its in-edge entry.
func (w *directWorker) edge(src, eh, dst string, props []txn.Prop) error {
	slices.SortFunc(props, func(a, b txn.Prop) int { return strings.Compare(a.Key, b.Key) })
	w.kbuf, w.vbuf = txn.AppendEdgeKey(w.kbuf[:0], src, eh), txn.EdgeRec{Dst: dst, Props: props}.AppendTo(w.vbuf[:0])
	if err := w.set(w.kbuf, w.vbuf); err != nil {
		return err
	}
	w.edges++
	w.kbuf = txn.AppendInKey(w.kbuf[:0], dst, src, eh)
	return w.set(w.kbuf, nil)
}

// internal creates has-set or index vertex h the first time any worker
// needs it, with its directory entry (dir, dirEdge) for an index token;
// the directory vertex, created by the schema's alter, gets the load's
// stamp.
func (w *directWorker) internal(h, dir, dirE string) error {
	if !w.shared.first(h) {
		return nil
	}
	if err := w.vertex(h); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	if w.shared.firstDir(dir) {
		rec := txn.VertexRec{Exists: true, Shard: w.l.sink.ShardOf(dir), LastWrite: w.ts}
		if err := w.set(txn.VertexKey(dir), rec.Encode()); err != nil {
			return err
		}
		if err := w.set(txn.AccessKey(dir), w.stamp); err != nil {
			return err
		}
	}
	return w.edge(dir, dirE, h, nil)
}
