package gatekeeper

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// The binary form of an Entry, for gatekeepers and shards in separate
// processes: a gatekeeper→shard FIFO stream carries entries as these bytes.
//
//	version  byte (2)
//	gk       uvarint
//	seq      uvarint
//	flags    byte (bit 0: NOP)
//	stamp    a stamp (below), never the zero stamp
//	ops      uvarint count, then per op:
//	           shard uvarint, kind byte, vertex edge dst key alias (each a
//	           string), value (value.Append; Null when the op has none),
//	           then, for kinds OpUnitOut and OpUnitIn only, the move
//
// where
//
//	string   uvarint length, then the bytes
//	stamp    uvarint length, then txn.AppendStamp (length 0: the zero stamp)
//	props    uvarint count, then per prop: key string, value (value.Append)
//	move     unit group string, unit slot uvarint, from uvarint, to uvarint
//	         (each ≤ 2^32-1), then
//	         vertices: uvarint count, then per record: handle string,
//	           deleted byte (0 or 1), last-write stamp, props, aliases
//	           (uvarint count, then each a string), edges (uvarint count,
//	           then per edge: handle string, dst string, props)
//	         aliases: uvarint count, then per alias state: alias string,
//	           handle string, last-write stamp
//
// Version 1 was the same without moves (kinds up to OpUnbindAlias); a
// version-2 decoder refuses it, as a version-1 one refuses these bytes: all
// processes of a cluster run one build.
//
// DecodeEntry accepts exactly what AppendEntry writes (canonical: one
// encoding per entry) and never allocates more than its input justifies.
// Its output is in canonical form: every empty slice (Ops, a move's
// Vertices and Aliases, a record's Props, Aliases and Edges, an edge's
// Props) is nil, and every zero stamp (vclock.Stamp.IsZero) is
// vclock.Stamp{}. AppendEntry writes a nil and an empty slice alike, so an
// entry in canonical form round-trips exactly (reflect.DeepEqual).
// AppendEntry panics on a move-kind op without a Move, any other op with
// one, or a nil vertex record in a Move: programmer errors.

const entryVersion = 2

// ErrBadEntry reports bytes that are not an encoded entry.
var ErrBadEntry = errors.New("gatekeeper: malformed entry")

// entryOpsMax bounds the operations of one entry (a transaction's on one
// shard).
const entryOpsMax = 1 << 20

// isMoveKind reports whether ops of kind k carry a Move.
func isMoveKind(k txn.ShardKind) bool { return k == txn.OpUnitOut || k == txn.OpUnitIn }

// AppendEntry appends e's binary form to dst.
func AppendEntry(dst []byte, e Entry) []byte {
	dst = append(dst, entryVersion)
	dst = binary.AppendUvarint(dst, uint64(e.GK))
	dst = binary.AppendUvarint(dst, e.Seq)
	var flags byte
	if e.Nop {
		flags |= 1
	}
	dst = append(dst, flags)
	dst = appendStamp(dst, e.Stamp)
	dst = binary.AppendUvarint(dst, uint64(len(e.Ops)))
	for i := range e.Ops {
		op := &e.Ops[i]
		dst = binary.AppendUvarint(dst, uint64(op.Shard))
		dst = append(dst, byte(op.Kind))
		for _, s := range [...]string{op.Vertex, op.Edge, op.Dst, op.Key, op.Alias} {
			dst = appendString(dst, s)
		}
		dst = value.Append(dst, op.Value)
		switch move := isMoveKind(op.Kind); {
		case move && op.Move == nil:
			panic(fmt.Sprintf("gatekeeper: operation %d of kind %d has no move", i, op.Kind))
		case !move && op.Move != nil:
			panic(fmt.Sprintf("gatekeeper: operation %d of kind %d has a move", i, op.Kind))
		case move:
			dst = appendMove(dst, op.Move)
		}
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendStamp(dst []byte, s vclock.Stamp) []byte {
	st := txn.EncodeStamp(s)
	dst = binary.AppendUvarint(dst, uint64(len(st)))
	return append(dst, st...)
}

func appendProps(dst []byte, props []graph.Prop) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(props)))
	for _, p := range props {
		dst = appendString(dst, p.Key)
		dst = value.Append(dst, p.Val)
	}
	return dst
}

// MoveBytes is the size of m's state in an entry: each of a move's two
// operations carries it.
func MoveBytes(m *txn.UnitMove) int { return len(appendMove(nil, m)) }

func appendMove(dst []byte, m *txn.UnitMove) []byte {
	dst = appendString(dst, m.Unit.Group)
	dst = binary.AppendUvarint(dst, uint64(m.Unit.Slot))
	dst = binary.AppendUvarint(dst, uint64(m.From))
	dst = binary.AppendUvarint(dst, uint64(m.To))
	dst = binary.AppendUvarint(dst, uint64(len(m.Vertices)))
	for i, v := range m.Vertices {
		if v == nil {
			panic(fmt.Sprintf("gatekeeper: move of unit %s: vertex record %d is nil", m.Unit, i))
		}
		dst = appendString(dst, v.Handle)
		var deleted byte
		if v.Deleted {
			deleted = 1
		}
		dst = append(dst, deleted)
		dst = appendStamp(dst, v.LastWrite)
		dst = appendProps(dst, v.Props)
		dst = binary.AppendUvarint(dst, uint64(len(v.Aliases)))
		for _, a := range v.Aliases {
			dst = appendString(dst, a)
		}
		dst = binary.AppendUvarint(dst, uint64(len(v.Edges)))
		for _, ed := range v.Edges {
			dst = appendString(dst, ed.Handle)
			dst = appendString(dst, ed.Dst)
			dst = appendProps(dst, ed.Props)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(m.Aliases)))
	for _, a := range m.Aliases {
		dst = appendString(dst, a.Alias)
		dst = appendString(dst, a.Handle)
		dst = appendStamp(dst, a.LastWrite)
	}
	return dst
}

// entryReader reads the fields of an encoded entry, remembering the first
// error.
type entryReader struct {
	b   []byte
	err error
}

func (r *entryReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadEntry, what)
	}
}

func (r *entryReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	n, w := binary.Uvarint(r.b)
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) { // canonical only
		r.fail(what)
		return 0
	}
	r.b = r.b[w:]
	return n
}

// uint32 reads a uvarint that must fit 32 bits.
func (r *entryReader) uint32(what string) uint32 {
	n := r.uvarint(what)
	if n > 1<<32-1 {
		r.fail(what)
		return 0
	}
	return uint32(n)
}

func (r *entryReader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *entryReader) bytes(what string) []byte {
	n := r.uvarint(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *entryReader) string(what string) string { return string(r.bytes(what)) }

// count reads the count of a list whose items each take at least min
// bytes: a count the remaining input cannot hold fails, which bounds the
// list's allocation by the input.
func (r *entryReader) count(what string, min int) int {
	n := r.uvarint(what)
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.fail(what)
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// value reads a canonical value.Append encoding.
func (r *entryReader) value(what string) value.Value {
	if r.err != nil {
		return value.Value{}
	}
	v, rest, err := value.Decode(r.b)
	if err != nil {
		r.err = fmt.Errorf("%w: %s: %v", ErrBadEntry, what, err)
		return value.Value{}
	}
	if string(value.Append(nil, v)) != string(r.b[:len(r.b)-len(rest)]) {
		r.fail(what + " not canonical")
		return value.Value{}
	}
	r.b = rest
	return v
}

// stamp reads a canonical stamp; length 0 is the zero stamp, vclock.Stamp{}.
func (r *entryReader) stamp(what string) vclock.Stamp {
	st := r.bytes(what)
	if r.err != nil || len(st) == 0 {
		return vclock.Stamp{}
	}
	// txn.DecodeStamp allocates the counters before it reads them: check
	// first that the bytes can hold them (each takes at least one byte).
	rest := st
	var n uint64
	for range 3 {
		var w int
		n, w = binary.Uvarint(rest)
		if w <= 0 {
			r.fail(what)
			return vclock.Stamp{}
		}
		rest = rest[w:]
	}
	if n > uint64(len(rest)) {
		r.fail(what)
		return vclock.Stamp{}
	}
	s, err := txn.DecodeStamp(st)
	if err != nil || string(txn.EncodeStamp(s)) != string(st) {
		r.fail(what)
		return vclock.Stamp{}
	}
	return s
}

// flag reads a byte that must be 0 or 1.
func (r *entryReader) flag(what string) bool {
	c := r.byte(what)
	if c > 1 {
		r.fail(what)
	}
	return c == 1
}

// props reads a props list; an empty one is nil.
func (r *entryReader) props(what string) []graph.Prop {
	n := r.count(what+" prop count", 2) // key length, value kind
	if n == 0 {
		return nil
	}
	ps := make([]graph.Prop, n)
	for i := range ps {
		ps[i].Key = r.string(what + " prop key")
		ps[i].Val = r.value(what + " prop value")
	}
	return ps
}

// move reads a move (appendMove's output); empty lists are nil.
func (r *entryReader) move() *txn.UnitMove {
	m := &txn.UnitMove{}
	m.Unit.Group = r.string("move unit group")
	m.Unit.Slot = r.uint32("move unit slot")
	m.From = r.uint32("move from")
	m.To = r.uint32("move to")
	// A record takes at least 6 bytes: handle length, deleted, stamp
	// length, and the prop, alias and edge counts.
	if n := r.count("move vertex count", 6); n > 0 {
		recs := make([]graph.VertexRecord, n)
		m.Vertices = make([]*graph.VertexRecord, n)
		for i := range recs {
			v := &recs[i]
			m.Vertices[i] = v
			v.Handle = r.string("move vertex handle")
			v.Deleted = r.flag("move vertex deleted flag")
			v.LastWrite = r.stamp("move vertex last-write stamp")
			v.Props = r.props("move vertex")
			if na := r.count("move vertex alias count", 1); na > 0 {
				v.Aliases = make([]string, na)
				for j := range v.Aliases {
					v.Aliases[j] = r.string("move vertex alias")
				}
			}
			// An edge takes at least 3 bytes: handle and dst lengths, prop
			// count.
			if ne := r.count("move vertex edge count", 3); ne > 0 {
				v.Edges = make([]graph.EdgeRecord, ne)
				for j := range v.Edges {
					ed := &v.Edges[j]
					ed.Handle = r.string("move edge handle")
					ed.Dst = r.string("move edge dst")
					ed.Props = r.props("move edge")
				}
			}
			if r.err != nil {
				return nil
			}
		}
	}
	// An alias state takes at least 3 bytes: alias, handle, stamp lengths.
	if n := r.count("move alias count", 3); n > 0 {
		m.Aliases = make([]txn.AliasState, n)
		for i := range m.Aliases {
			a := &m.Aliases[i]
			a.Alias = r.string("move alias")
			a.Handle = r.string("move alias handle")
			a.LastWrite = r.stamp("move alias last-write stamp")
			if r.err != nil {
				return nil
			}
		}
	}
	if r.err != nil {
		return nil
	}
	return m
}

// DecodeEntry is the inverse of AppendEntry.
func DecodeEntry(b []byte) (Entry, error) {
	r := &entryReader{b: b}
	var e Entry
	if v := r.byte("version"); r.err == nil && v != entryVersion {
		return e, fmt.Errorf("%w: version %d, want %d", ErrBadEntry, v, entryVersion)
	}
	gk := r.uvarint("gatekeeper")
	if gk > txn.GatekeepersMax {
		r.fail("gatekeeper")
	}
	e.GK = uint32(gk)
	e.Seq = r.uvarint("sequence number")
	flags := r.byte("flags")
	if flags&^1 != 0 {
		r.fail("flags")
	}
	e.Nop = flags&1 != 0
	e.Stamp = r.stamp("stamp")
	if r.err == nil && e.Stamp.IsZero() {
		r.fail("stamp")
	}
	n := r.uvarint("operation count")
	// Every operation takes at least 8 bytes: this bounds the allocation.
	if r.err == nil && (n > entryOpsMax || n > uint64(len(r.b))/8) {
		r.fail("operation count")
	}
	if r.err != nil {
		return Entry{}, r.err
	}
	if n > 0 {
		e.Ops = make([]txn.ShardOp, 0, n)
	}
	for range n {
		var op txn.ShardOp
		op.Shard = r.uint32("operation shard")
		op.Kind = txn.ShardKind(r.byte("operation kind"))
		if r.err == nil && (op.Kind < txn.OpCreateVertex || op.Kind > txn.OpUnitIn) {
			r.fail("operation kind")
		}
		fields := [...]*string{&op.Vertex, &op.Edge, &op.Dst, &op.Key, &op.Alias}
		for _, f := range fields {
			*f = r.string("operation name")
		}
		op.Value = r.value("operation value")
		if isMoveKind(op.Kind) {
			op.Move = r.move()
		}
		if r.err != nil {
			return Entry{}, r.err
		}
		e.Ops = append(e.Ops, op)
	}
	if len(r.b) != 0 {
		return Entry{}, fmt.Errorf("%w: %d trailing bytes", ErrBadEntry, len(r.b))
	}
	if e.Nop && len(e.Ops) > 0 {
		return Entry{}, fmt.Errorf("%w: a NOP with operations", ErrBadEntry)
	}
	return e, nil
}
