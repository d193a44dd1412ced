package txn

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// KV is the part of a store transaction that Exec needs; store.Txn has it.
type KV interface {
	Get(key []byte) ([]byte, bool, error)
	Scan(start, end []byte, limit int, fn func(key, val []byte) error) error
	Set(key, val []byte) error
	Delete(key []byte) error
}

// KeyWriter takes store records written without a transaction (a bulk
// load's direct writes, internal/bulk).
type KeyWriter interface {
	Set(key, val []byte) error
}

// KeyTables is a set of KeyWriters, one per goroutine, whose records Close
// writes to the store: each key at most once among all of them.
type KeyTables interface {
	Writer(i int) KeyWriter
	Close() error
}

// ErrAborted marks a retryable abort: the transaction read something that
// changed, or its timestamp cannot be ordered after a conflicting one. Nothing
// was written; the client retries with fresh reads and a fresh timestamp.
var ErrAborted = errors.New("txn: aborted (retryable)")

// ShardOp is one graph write addressed to the shard that owns it, with every
// name resolved to a handle. BindAlias/UnbindAlias maintain the alias index,
// which lives on the shard that owns the alias (ShardOf(alias)).
type ShardOp struct {
	Shard  uint32
	Kind   ShardKind
	Vertex string
	Edge   string
	Dst    string
	Key    string
	Value  value.Value
	Alias  string
	// Move is the payload of OpUnitOut and OpUnitIn (units.go).
	Move *UnitMove
}

// ShardKind extends Kind with the alias-index operations.
type ShardKind uint8

const (
	OpCreateVertex ShardKind = iota + 1
	OpDeleteVertex
	OpCreateEdge
	OpDeleteEdge
	OpSetVertexProp
	OpDeleteVertexProp
	OpSetEdgeProp
	OpDeleteEdgeProp
	OpAddAlias
	OpRemoveAlias
	OpBindAlias
	OpUnbindAlias
	// OpUnitOut and OpUnitIn hand a placement unit from one shard to
	// another (units.go; docs/online-moves.md).
	OpUnitOut
	OpUnitIn
)

// Result is what executing a transaction produced.
type Result struct {
	Ops []ShardOp // in execution order
	// Handles lists the handle of each create_vertex / create_edge op, in op
	// order (generated ones included), so clients learn generated handles.
	Handles []string
	// Access lists the access keys (AccessKey / AliasAccessKey) of every vertex
	// and alias the transaction read or wrote, sorted: the commit orders the
	// transaction after each one's last access.
	Access [][]byte
	// Units lists, when Exec has a Dir, the unit of every shard operation
	// with the shard it was sent to, one entry per unit, sorted: the
	// commit checks the directory still places each there. Populated lists
	// the units in which a vertex was created or deleted (the commit marks
	// them, so a move that read the unit before aborts).
	Units     []UnitRoute
	Populated []Unit
}

// Exec executes transactions on a store transaction. Shards is the number of
// shards vertices are hashed to.
type Exec struct {
	Shards uint32
	// Dir, if set, places names instead of ShardOf(name, Shards): the
	// directory of moved units (units.go). Nil: nothing ever moved.
	Dir *Directory
	// uncached turns the per-transaction caches off (cache.go): tests run
	// both ways and compare.
	uncached bool
}

// ShardOf places a handle (or an alias) on a shard: FNV-1a of the name
// modulo shards, except for a name of a placement group (GroupOf), which
// goes where its group's name hashes, so that all members of a group share
// a shard (placement.go).
func ShardOf(name string, shards uint32) uint32 {
	if g, ok := GroupOf(name); ok {
		name = g
	}
	return uint32(nameHash(name) % uint64(shards))
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// AliasAccessKey is the access key of an alias ("L" 0 alias: handles are never empty).
func AliasAccessKey(a string) []byte { return key(tagAccess, "", a) }

type run struct {
	kv      KV
	ts      vclock.Stamp
	shards  uint32
	dir     *Directory
	res     Result
	written map[string]bool // vertices whose record gets LastWrite = ts
	access  map[string]bool // vertices touched
	aliases map[string]bool // aliases touched
	gen     int
	// Per-transaction caches (see cache.go): they only spare store reads
	// whose answers the transaction already knows; every check is the same.
	uncached bool
	verts    map[string]vcached // vertex records as this transaction sees them
	als      map[string]acached // alias records likewise
	fresh    map[string]bool    // vertices with no stored edge at the snapshot
	made     map[string]bool    // EdgeKeys created here on fresh vertices, not deleted since
}

// Run validates reads, then executes ops in order at stamp ts. Any error leaves
// the caller to discard the store transaction: nothing is committed.
// kv must be a fresh store transaction (no writes before Run): the caches of
// cache.go take the first read of each record to be a snapshot read.
func (x Exec) Run(kv KV, ts vclock.Stamp, reads []Read, ops []Op) (*Result, error) {
	if len(ops) > OpsMax {
		return nil, fmt.Errorf("%w: %d operations, at most %d", ErrTooLarge, len(ops), OpsMax)
	}
	if len(reads) > ReadsMax {
		return nil, fmt.Errorf("%w: %d reads, at most %d", ErrTooLarge, len(reads), ReadsMax)
	}
	for i := range ops {
		if err := ops[i].Validate(); err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i, ops[i].Kind, err)
		}
	}
	// Sized for a transaction touching about one vertex per two operations:
	// growing these maps op by op was a visible cost of bulk loads.
	n := (len(ops) + len(reads)) / 2
	r := &run{kv: kv, ts: ts, shards: x.Shards, dir: x.Dir, uncached: x.uncached,
		written: make(map[string]bool, n), access: make(map[string]bool, n), aliases: map[string]bool{},
		verts: make(map[string]vcached, n), fresh: make(map[string]bool, n), made: map[string]bool{}, als: map[string]acached{}}
	for _, rd := range reads {
		if err := r.checkRead(rd); err != nil {
			return nil, err
		}
	}
	for i := range ops {
		if err := r.op(&ops[i]); err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i, ops[i].Kind, err)
		}
		if len(r.res.Ops) > OpsMax*4 {
			return nil, fmt.Errorf("%w: expands to more than %d shard operations", ErrTooLarge, OpsMax*4)
		}
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return &r.res, nil
}

// shardOf places a handle or alias (the directory's placement when set).
func (r *run) shardOf(name string) uint32 {
	if r.dir != nil {
		return r.dir.ShardOf(name)
	}
	return ShardOf(name, r.shards)
}

func (r *run) checkRead(rd Read) error {
	var seen vclock.Stamp
	if rd.Alias {
		a, _, err := r.alias(rd.Vertex)
		if err != nil {
			return err
		}
		seen = a.LastWrite
		r.touchAlias(rd.Vertex)
	} else {
		v, _, err := r.vertex(rd.Vertex)
		if err != nil {
			return err
		}
		seen = v.LastWrite
		r.touchVertex(rd.Vertex)
	}
	if string(EncodeStamp(seen)) != string(rd.Version) {
		return fmt.Errorf("%w: %s changed since it was read", ErrAborted, describe(rd))
	}
	return nil
}

func describe(rd Read) string {
	if rd.Alias {
		return fmt.Sprintf("alias %q", rd.Vertex)
	}
	return fmt.Sprintf("vertex %q", rd.Vertex)
}

func (r *run) vertex(h string) (VertexRec, bool, error) {
	if c, ok := r.verts[h]; ok && !r.uncached {
		return c.rec, c.ok, nil
	}
	b, ok, err := r.kv.Get(VertexKey(h))
	if err != nil {
		return VertexRec{}, false, err
	}
	var v VertexRec
	if ok {
		if v, err = DecodeVertexRec(b); err != nil {
			return v, true, err
		}
	}
	if _, seen := r.verts[h]; !seen && !r.uncached {
		// The first read of a vertex record in a transaction is a snapshot
		// read: every path that writes a record reads it first.
		r.verts[h] = vcached{rec: v, ok: ok}
		if !ok || !v.Exists {
			r.fresh[h] = true
		}
	}
	return v, ok, nil
}

// setVertex writes a vertex record, keeping the cache in step.
func (r *run) setVertex(h string, v VertexRec) error {
	if err := r.kv.Set(VertexKey(h), v.Encode()); err != nil {
		return err
	}
	r.verts[h] = vcached{rec: v, ok: true}
	return nil
}

func (r *run) alias(a string) (AliasRec, bool, error) {
	if c, ok := r.als[a]; ok && !r.uncached {
		return c.rec, c.ok, nil
	}
	b, ok, err := r.kv.Get(AliasKey(a))
	if err != nil {
		return AliasRec{}, false, err
	}
	var rec AliasRec
	if ok {
		if rec, err = DecodeAliasRec(b); err != nil {
			return rec, true, err
		}
	}
	if _, seen := r.als[a]; !seen && !r.uncached {
		r.als[a] = acached{rec: rec, ok: ok}
	}
	return rec, ok, nil
}

// setAlias writes an alias record, keeping the cache in step.
func (r *run) setAlias(a string, rec AliasRec) error {
	if err := r.kv.Set(AliasKey(a), rec.Encode()); err != nil {
		return err
	}
	r.als[a] = acached{rec: rec, ok: true}
	return nil
}

// live resolves a vertex name to the handle of a live vertex.
func (r *run) live(name string, isAlias bool, what string) (string, VertexRec, error) {
	h := name
	if isAlias {
		a, ok, err := r.alias(name)
		if err != nil {
			return "", VertexRec{}, err
		}
		r.touchAlias(name)
		if !ok || a.Handle == "" {
			return "", VertexRec{}, fmt.Errorf("%w: %s alias %q", ErrNotFound, what, name)
		}
		h = a.Handle
	}
	v, ok, err := r.vertex(h)
	if err != nil {
		return "", v, err
	}
	r.touchVertex(h)
	if !ok || !v.Exists {
		return "", v, fmt.Errorf("%w: %s %q", ErrNotFound, what, h)
	}
	return h, v, nil
}

func (r *run) emit(op ShardOp) { r.res.Ops = append(r.res.Ops, op) }

// touchVertex and touchAlias record an access: the commit orders the
// transaction after the last access of everything it touched.
func (r *run) touchVertex(h string) { r.access[h] = true }
func (r *run) touchAlias(a string)  { r.aliases[a] = true }

func (r *run) write(h string) { r.written[h] = true }

func (r *run) generate(kind string) string {
	r.gen++
	return fmt.Sprintf("_%s%s.%s.%s.%s", kind, strconv.FormatUint(r.ts.Clock.Epoch, 36),
		strconv.FormatUint(uint64(r.ts.Owner), 36), strconv.FormatUint(r.ts.Seq(), 36), strconv.Itoa(r.gen))
}

func (r *run) op(o *Op) error {
	switch o.Kind {
	case CreateVertex:
		return r.createVertex(o)
	case DeleteVertex:
		return r.deleteVertex(o)
	case CreateEdge:
		return r.createEdge(o)
	case DeleteEdge, SetEdgeProp, DeleteEdgeProp:
		return r.edgeOp(o)
	case SetVertexProp, DeleteVertexProp:
		return r.vertexProp(o)
	case AddAlias, RemoveAlias:
		return r.aliasOp(o, o.Kind == AddAlias)
	}
	return fmt.Errorf("%w: kind %d", ErrInvalid, o.Kind)
}

func (r *run) createVertex(o *Op) error {
	h := o.Vertex
	if h == "" {
		h = r.generate("v")
	}
	v, ok, err := r.vertex(h)
	if err != nil {
		return err
	}
	r.touchVertex(h)
	if ok && v.Exists {
		return fmt.Errorf("%w: vertex %q", ErrExists, h)
	}
	shard := r.shardOf(h)
	if err := r.setVertex(h, VertexRec{Exists: true, Shard: shard, LastWrite: r.ts}); err != nil {
		return err
	}
	r.write(h)
	r.res.Handles = append(r.res.Handles, h)
	r.emit(ShardOp{Shard: shard, Kind: OpCreateVertex, Vertex: h})
	return nil
}

func (r *run) deleteVertex(o *Op) error {
	h, v, err := r.live(o.Vertex, o.VertexAlias, "vertex")
	if err != nil {
		return err
	}
	// Out-edges: the shard tombstones them with the vertex; the store drops
	// them and their in-edge index entries.
	start, end := EdgePrefix(h)
	var dels [][]byte
	if err := r.kv.Scan(start, end, 0, func(k, val []byte) error {
		e, err := DecodeEdgeRec(val)
		if err != nil {
			return err
		}
		parts := KeyParts(k)
		dels = append(dels, append([]byte(nil), k...), InKey(e.Dst, h, parts[1]))
		return nil
	}); err != nil {
		return err
	}
	// In-edges from other vertices are deleted with their owners' shards told.
	start, end = InPrefix(h)
	if err := r.kv.Scan(start, end, 0, func(k, _ []byte) error {
		parts := KeyParts(k)
		src, e := parts[1], parts[2]
		dels = append(dels, append([]byte(nil), k...), EdgeKey(src, e))
		if src != h {
			if _, _, err := r.vertex(src); err != nil {
				return err
			}
			r.touchVertex(src)
			r.write(src)
			r.emit(ShardOp{Shard: r.shardOf(src), Kind: OpDeleteEdge, Vertex: src, Edge: e})
		}
		return nil
	}); err != nil {
		return err
	}
	start, end = PropPrefix(h)
	if err := r.kv.Scan(start, end, 0, func(k, _ []byte) error {
		dels = append(dels, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	start, end = VAliasPrefix(h)
	if err := r.kv.Scan(start, end, 0, func(k, _ []byte) error {
		a := KeyParts(k)[1]
		dels = append(dels, append([]byte(nil), k...))
		r.touchAlias(a)
		r.emit(ShardOp{Shard: r.shardOf(a), Kind: OpUnbindAlias, Alias: a, Vertex: h})
		return r.setAlias(a, AliasRec{LastWrite: r.ts})
	}); err != nil {
		return err
	}
	for _, k := range dels {
		if err := r.kv.Delete(k); err != nil {
			return err
		}
		delete(r.made, string(k))
	}
	v.Exists = false
	if err := r.setVertex(h, v); err != nil {
		return err
	}
	// Its edges made here left made with the deletions above; dropping its
	// freshness too is defensive: after a re-creation in this transaction,
	// its edges are looked up in the store transaction.
	r.forget(h)
	r.write(h)
	r.emit(ShardOp{Shard: r.shardOf(h), Kind: OpDeleteVertex, Vertex: h})
	return nil
}

func (r *run) createEdge(o *Op) error {
	src, _, err := r.live(o.Vertex, o.VertexAlias, "source vertex")
	if err != nil {
		return err
	}
	dst, _, err := r.live(o.Dst, o.DstAlias, "destination vertex")
	if err != nil {
		return err
	}
	e := o.Edge
	if e == "" {
		e = r.generate("e")
	}
	ek := EdgeKey(src, e)
	if exists, err := r.edgeExists(src, ek); err != nil {
		return err
	} else if exists {
		return fmt.Errorf("%w: edge %q of vertex %q", ErrExists, e, src)
	}
	if err := r.kv.Set(ek, EdgeRec{Dst: dst}.Encode()); err != nil {
		return err
	}
	if r.fresh[src] {
		r.made[string(ek)] = true
	}
	if err := r.kv.Set(InKey(dst, src, e), nil); err != nil {
		return err
	}
	r.write(src)
	r.res.Handles = append(r.res.Handles, e)
	r.emit(ShardOp{Shard: r.shardOf(src), Kind: OpCreateEdge, Vertex: src, Edge: e, Dst: dst})
	return nil
}

func (r *run) edgeOp(o *Op) error {
	src, _, err := r.live(o.Vertex, o.VertexAlias, "source vertex")
	if err != nil {
		return err
	}
	b, ok, err := r.kv.Get(EdgeKey(src, o.Edge))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: edge %q of vertex %q", ErrNotFound, o.Edge, src)
	}
	rec, err := DecodeEdgeRec(b)
	if err != nil {
		return err
	}
	op := ShardOp{Shard: r.shardOf(src), Vertex: src, Edge: o.Edge, Dst: rec.Dst, Key: o.Key, Value: o.Value}
	switch o.Kind {
	case DeleteEdge:
		op.Kind = OpDeleteEdge
		if err := r.kv.Delete(EdgeKey(src, o.Edge)); err != nil {
			return err
		}
		delete(r.made, string(EdgeKey(src, o.Edge)))
		if err := r.kv.Delete(InKey(rec.Dst, src, o.Edge)); err != nil {
			return err
		}
	case SetEdgeProp:
		op.Kind = OpSetEdgeProp
		rec.Props = setProp(rec.Props, o.Key, o.Value)
		if err := r.kv.Set(EdgeKey(src, o.Edge), rec.Encode()); err != nil {
			return err
		}
	case DeleteEdgeProp:
		op.Kind = OpDeleteEdgeProp
		var found bool
		if rec.Props, found = delProp(rec.Props, o.Key); !found {
			return fmt.Errorf("%w: property %q of edge %q", ErrNotFound, o.Key, o.Edge)
		}
		if err := r.kv.Set(EdgeKey(src, o.Edge), rec.Encode()); err != nil {
			return err
		}
	}
	r.write(src)
	r.emit(op)
	return nil
}

func setProp(ps []Prop, k string, v value.Value) []Prop {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Key >= k })
	if i < len(ps) && ps[i].Key == k {
		ps[i].Value = v
		return ps
	}
	ps = append(ps, Prop{})
	copy(ps[i+1:], ps[i:])
	ps[i] = Prop{Key: k, Value: v}
	return ps
}

func delProp(ps []Prop, k string) ([]Prop, bool) {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Key >= k })
	if i < len(ps) && ps[i].Key == k {
		return append(ps[:i], ps[i+1:]...), true
	}
	return ps, false
}

func (r *run) vertexProp(o *Op) error {
	h, _, err := r.live(o.Vertex, o.VertexAlias, "vertex")
	if err != nil {
		return err
	}
	op := ShardOp{Shard: r.shardOf(h), Vertex: h, Key: o.Key, Value: o.Value}
	if o.Kind == SetVertexProp {
		op.Kind = OpSetVertexProp
		if err := r.kv.Set(PropKey(h, o.Key), value.Append(nil, o.Value)); err != nil {
			return err
		}
	} else {
		op.Kind = OpDeleteVertexProp
		if _, ok, err := r.kv.Get(PropKey(h, o.Key)); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%w: property %q of vertex %q", ErrNotFound, o.Key, h)
		}
		if err := r.kv.Delete(PropKey(h, o.Key)); err != nil {
			return err
		}
	}
	r.write(h)
	r.emit(op)
	return nil
}

// aliasOp binds (add) or unbinds an alias of a live vertex: the alias record
// and the vertex's alias list in the store, the vertex's shard and the
// alias's shard (its index) on the graph side.
func (r *run) aliasOp(o *Op, add bool) error {
	h, _, err := r.live(o.Vertex, o.VertexAlias, "vertex")
	if err != nil {
		return err
	}
	a, ok, err := r.alias(o.Alias)
	if err != nil {
		return err
	}
	r.touchAlias(o.Alias)
	rec, vertexOp, indexOp := AliasRec{LastWrite: r.ts}, OpRemoveAlias, OpUnbindAlias
	if add {
		if ok && a.Handle != "" {
			return fmt.Errorf("%w: alias %q names vertex %q", ErrExists, o.Alias, a.Handle)
		}
		rec.Handle, vertexOp, indexOp = h, OpAddAlias, OpBindAlias
		err = r.kv.Set(VAliasKey(h, o.Alias), nil)
	} else {
		if !ok || a.Handle != h {
			return fmt.Errorf("%w: alias %q of vertex %q", ErrNotFound, o.Alias, h)
		}
		err = r.kv.Delete(VAliasKey(h, o.Alias))
	}
	if err != nil {
		return err
	}
	if err := r.setAlias(o.Alias, rec); err != nil {
		return err
	}
	r.write(h)
	r.emit(ShardOp{Shard: r.shardOf(h), Kind: vertexOp, Vertex: h, Alias: o.Alias})
	r.emit(ShardOp{Shard: r.shardOf(o.Alias), Kind: indexOp, Vertex: h, Alias: o.Alias})
	return nil
}

// finish stamps every written vertex's record with the transaction's stamp and
// lists the access keys in a deterministic order.
func (r *run) finish() error {
	hs := make([]string, 0, len(r.written))
	for h := range r.written {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		v, ok, err := r.vertex(h)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("txn: written vertex %q has no record", h)
		}
		if sameStamp(v.LastWrite, r.ts) && !r.uncached {
			continue // written with this stamp already (created here)
		}
		v.LastWrite = r.ts
		if err := r.setVertex(h, v); err != nil {
			return err
		}
	}
	keys := make([][]byte, 0, len(r.access)+len(r.aliases))
	for h := range r.access {
		keys = append(keys, AccessKey(h))
	}
	for a := range r.aliases {
		keys = append(keys, AliasAccessKey(a))
	}
	slices.SortFunc(keys, bytes.Compare)
	r.res.Access = keys
	if r.dir != nil {
		r.res.Units, r.res.Populated = routes(r.res.Ops, r.dir.Base())
	}
	return nil
}

// ShardsOf lists the distinct shards ops write, in first-use order.
func ShardsOf(ops []ShardOp) []uint32 {
	var out []uint32
	for _, op := range ops {
		if !slices.Contains(out, op.Shard) {
			out = append(out, op.Shard)
		}
	}
	return out
}
