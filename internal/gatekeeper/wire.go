package gatekeeper

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// The binary form of an Entry, for gatekeepers and shards in separate
// processes: a gatekeeper→shard FIFO stream carries entries as these bytes.
//
//	version  byte (1)
//	gk       uvarint
//	seq      uvarint
//	flags    byte (bit 0: NOP)
//	stamp    uvarint length, then txn.AppendStamp
//	ops      uvarint count, then per op:
//	           shard uvarint, kind byte, vertex edge dst key alias (each a
//	           uvarint length and the bytes), value (value.Append; Null
//	           when the op has none)
//
// DecodeEntry accepts exactly what AppendEntry writes (canonical: one
// encoding per entry) and never allocates more than its input justifies.

const entryVersion = 1

// ErrBadEntry reports bytes that are not an encoded entry.
var ErrBadEntry = errors.New("gatekeeper: malformed entry")

// entryOpsMax bounds the operations of one entry (a transaction's on one
// shard).
const entryOpsMax = 1 << 20

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
	st := txn.EncodeStamp(e.Stamp)
	dst = binary.AppendUvarint(dst, uint64(len(st)))
	dst = append(dst, st...)
	dst = binary.AppendUvarint(dst, uint64(len(e.Ops)))
	for _, op := range e.Ops {
		dst = binary.AppendUvarint(dst, uint64(op.Shard))
		dst = append(dst, byte(op.Kind))
		for _, s := range [...]string{op.Vertex, op.Edge, op.Dst, op.Key, op.Alias} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
		dst = value.Append(dst, op.Value)
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

// DecodeEntry is the inverse of AppendEntry.
func DecodeEntry(b []byte) (Entry, error) {
	r := &entryReader{b: b}
	var e Entry
	if v := r.byte("version"); r.err == nil && v != entryVersion {
		return e, fmt.Errorf("%w: version %d", ErrBadEntry, v)
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
	st := r.bytes("stamp")
	if r.err != nil {
		return Entry{}, r.err
	}
	stamp, err := txn.DecodeStamp(st)
	if err != nil || len(st) == 0 || string(txn.EncodeStamp(stamp)) != string(st) {
		return Entry{}, fmt.Errorf("%w: stamp", ErrBadEntry)
	}
	e.Stamp = stamp
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
		shard := r.uvarint("operation shard")
		if shard > 1<<32-1 {
			r.fail("operation shard")
		}
		op.Shard = uint32(shard)
		op.Kind = txn.ShardKind(r.byte("operation kind"))
		if r.err == nil && (op.Kind < txn.OpCreateVertex || op.Kind > txn.OpUnbindAlias) {
			r.fail("operation kind")
		}
		fields := [...]*string{&op.Vertex, &op.Edge, &op.Dst, &op.Key, &op.Alias}
		for _, f := range fields {
			*f = string(r.bytes("operation name"))
		}
		if r.err != nil {
			return Entry{}, r.err
		}
		v, rest, err := value.Decode(r.b)
		if err != nil {
			return Entry{}, fmt.Errorf("%w: operation value: %v", ErrBadEntry, err)
		}
		if string(value.Append(nil, v)) != string(r.b[:len(r.b)-len(rest)]) {
			return Entry{}, fmt.Errorf("%w: operation value not canonical", ErrBadEntry)
		}
		r.b = rest
		op.Value = v
		e.Ops = append(e.Ops, op)
	}
	if r.err != nil {
		return Entry{}, r.err
	}
	if len(r.b) != 0 {
		return Entry{}, fmt.Errorf("%w: %d trailing bytes", ErrBadEntry, len(r.b))
	}
	if e.Nop && len(e.Ops) > 0 {
		return Entry{}, fmt.Errorf("%w: a NOP with operations", ErrBadEntry)
	}
	return e, nil
}
