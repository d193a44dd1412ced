package txn

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// The backing store's key layout. Every key starts with a one-byte table tag;
// handles never contain NUL, so NUL separates the parts of a composite key and
// a prefix scan over "tag handle NUL" finds exactly one vertex's entries.
//
//	'M' name                      meta: epoch, shard count, handle counter
//	'V' handle                    vertex record: exists, shard, last write stamp
//	'L' handle                    last-access stamp (read and written only in the commit hook)
//	'P' handle 0 key              vertex property value
//	'E' src 0 edge                edge record: destination, properties
//	'I' dst 0 src 0 edge          in-edge index (empty value)
//	'A' alias                     alias record: handle, last write stamp (handle empty: unbound)
//	'W' handle 0 alias            the vertex's aliases (empty value)
const (
	tagMeta   = 'M'
	tagVertex = 'V'
	tagAccess = 'L'
	tagProp   = 'P'
	tagEdge   = 'E'
	tagIn     = 'I'
	tagAlias  = 'A'
	tagVAlias = 'W'
)

// ErrCorrupt reports a store record that does not decode.
var ErrCorrupt = errors.New("txn: corrupt store record")

func key(tag byte, parts ...string) []byte {
	n := 1
	for _, p := range parts {
		n += len(p) + 1
	}
	return appendKey(make([]byte, 0, n), tag, parts...)
}

func appendKey(k []byte, tag byte, parts ...string) []byte {
	k = append(k, tag)
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}

// AppendVertexKey, AppendAccessKey, AppendPropKey, AppendEdgeKey and
// AppendInKey append the keys VertexKey … InKey return to dst (a loader's
// scratch buffer).
func AppendVertexKey(dst []byte, h string) []byte     { return appendKey(dst, tagVertex, h) }
func AppendAccessKey(dst []byte, h string) []byte     { return appendKey(dst, tagAccess, h) }
func AppendPropKey(dst []byte, h, k string) []byte    { return appendKey(dst, tagProp, h, k) }
func AppendEdgeKey(dst []byte, src, e string) []byte  { return appendKey(dst, tagEdge, src, e) }
func AppendInKey(dst []byte, d, src, e string) []byte { return appendKey(dst, tagIn, d, src, e) }

// prefix returns the scan bounds [start, end) of keys "tag part0 0 … partN 0".
func prefix(tag byte, parts ...string) (start, end []byte) {
	start = append(key(tag, parts...), 0)
	end = append(key(tag, parts...), 1)
	return start, end
}

// MetaKey names a meta entry.
func MetaKey(name string) []byte { return key(tagMeta, name) }

// VertexKey, AccessKey, PropKey, EdgeKey, InKey, AliasKey, VAliasKey build keys.
func VertexKey(h string) []byte              { return key(tagVertex, h) }
func AccessKey(h string) []byte              { return key(tagAccess, h) }
func PropKey(h, k string) []byte             { return key(tagProp, h, k) }
func EdgeKey(src, e string) []byte           { return key(tagEdge, src, e) }
func InKey(dst, src, e string) []byte        { return key(tagIn, dst, src, e) }
func AliasKey(a string) []byte               { return key(tagAlias, a) }
func VAliasKey(h, a string) []byte           { return key(tagVAlias, h, a) }
func PropPrefix(h string) ([]byte, []byte)   { return prefix(tagProp, h) }
func EdgePrefix(src string) ([]byte, []byte) { return prefix(tagEdge, src) }
func InPrefix(dst string) ([]byte, []byte)   { return prefix(tagIn, dst) }
func VAliasPrefix(h string) ([]byte, []byte) { return prefix(tagVAlias, h) }
func VertexRange() (start, end []byte)       { return []byte{tagVertex}, []byte{tagVertex + 1} }
func splitTail(k []byte, skip int) []string  { return splitNUL(k[1:])[skip:] }
func splitNUL(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return append(out, string(b[start:]))
}

// KeyParts splits a composite key (after its tag) into its parts; a key
// without even a tag (a corrupt store) has none.
func KeyParts(k []byte) []string {
	if len(k) == 0 {
		return nil
	}
	return splitTail(k, 0)
}

// AppendStamp encodes a stamp; the zero stamp encodes as nothing.
func AppendStamp(dst []byte, s vclock.Stamp) []byte {
	if s.IsZero() {
		return dst
	}
	dst = binary.AppendUvarint(dst, s.Clock.Epoch)
	dst = binary.AppendUvarint(dst, uint64(s.Owner))
	dst = binary.AppendUvarint(dst, uint64(len(s.Clock.Counters)))
	for _, c := range s.Clock.Counters {
		dst = binary.AppendUvarint(dst, c)
	}
	return dst
}

// EncodeStamp is AppendStamp into a fresh slice.
func EncodeStamp(s vclock.Stamp) []byte { return AppendStamp(nil, s) }

// GatekeepersMax bounds the width of a decoded clock.
const GatekeepersMax = 1024

// DecodeStamp is the inverse of EncodeStamp; empty input is the zero stamp.
func DecodeStamp(b []byte) (vclock.Stamp, error) {
	var s vclock.Stamp
	if len(b) == 0 {
		return s, nil
	}
	r := reader{b: b}
	s.Clock.Epoch = r.uvarint()
	s.Owner = uint32(r.uvarint())
	n := r.uvarint()
	if r.err != nil || n > GatekeepersMax || uint64(s.Owner) >= n {
		return s, fmt.Errorf("%w: stamp", ErrCorrupt)
	}
	s.Clock.Counters = make([]uint64, n)
	for i := range s.Clock.Counters {
		s.Clock.Counters[i] = r.uvarint()
	}
	if r.err != nil || len(r.b) != 0 {
		return s, fmt.Errorf("%w: stamp", ErrCorrupt)
	}
	return s, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = ErrCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = ErrCorrupt
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// VertexRec is the store's record of one vertex handle. A deleted vertex keeps
// its record (Exists false) so that its last-write stamp still validates reads
// of its absence.
type VertexRec struct {
	Exists bool
	// Shard is the shard that owned the vertex when it was created, kept
	// for inspection: operations go to ShardOf(handle, shards) under the
	// current shard count, which a cluster may change in a new epoch.
	Shard     uint32
	LastWrite vclock.Stamp
}

// Encode returns the record's bytes.
func (v VertexRec) Encode() []byte { return v.AppendTo(nil) }

// AppendTo appends the record's bytes to b.
func (v VertexRec) AppendTo(b []byte) []byte {
	var e byte
	if v.Exists {
		e = 1
	}
	b = append(b, e)
	b = binary.AppendUvarint(b, uint64(v.Shard))
	return appendBytes(b, EncodeStamp(v.LastWrite))
}

// DecodeVertexRec is the inverse of Encode.
func DecodeVertexRec(b []byte) (VertexRec, error) {
	var v VertexRec
	if len(b) < 1 || b[0] > 1 {
		return v, fmt.Errorf("%w: vertex", ErrCorrupt)
	}
	v.Exists = b[0] == 1
	r := reader{b: b[1:]}
	v.Shard = uint32(r.uvarint())
	sb := r.bytes()
	if r.err != nil || len(r.b) != 0 {
		return v, fmt.Errorf("%w: vertex", ErrCorrupt)
	}
	var err error
	v.LastWrite, err = DecodeStamp(sb)
	return v, err
}

// Prop is one property.
type Prop struct {
	Key   string
	Value value.Value
}

// EdgeRec is the store's record of one edge.
type EdgeRec struct {
	Dst   string
	Props []Prop // sorted by key
}

// Encode returns the record's bytes.
func (e EdgeRec) Encode() []byte { return e.AppendTo(nil) }

// AppendTo appends the record's bytes to b.
func (e EdgeRec) AppendTo(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(e.Dst)))
	b = append(b, e.Dst...)
	b = binary.AppendUvarint(b, uint64(len(e.Props)))
	for _, p := range e.Props {
		b = appendBytes(b, []byte(p.Key))
		b = value.Append(b, p.Value)
	}
	return b
}

// DecodeEdgeRec is the inverse of Encode.
func DecodeEdgeRec(b []byte) (EdgeRec, error) {
	var e EdgeRec
	r := reader{b: b}
	e.Dst = string(r.bytes())
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return e, fmt.Errorf("%w: edge", ErrCorrupt)
	}
	for i := uint64(0); i < n; i++ {
		k := string(r.bytes())
		if r.err != nil {
			return e, fmt.Errorf("%w: edge", ErrCorrupt)
		}
		v, rest, err := value.Decode(r.b)
		if err != nil {
			return e, fmt.Errorf("%w: edge property: %v", ErrCorrupt, err)
		}
		r.b = rest
		e.Props = append(e.Props, Prop{Key: k, Value: v})
	}
	if len(r.b) != 0 {
		return e, fmt.Errorf("%w: edge", ErrCorrupt)
	}
	return e, nil
}

// AliasRec is the store's record of one alias: the vertex it names (empty when
// removed) and the stamp of its last change.
type AliasRec struct {
	Handle    string
	LastWrite vclock.Stamp
}

// Encode returns the record's bytes.
func (a AliasRec) Encode() []byte {
	return appendBytes(appendBytes(nil, []byte(a.Handle)), EncodeStamp(a.LastWrite))
}

// DecodeAliasRec is the inverse of Encode.
func DecodeAliasRec(b []byte) (AliasRec, error) {
	var a AliasRec
	r := reader{b: b}
	a.Handle = string(r.bytes())
	sb := r.bytes()
	if r.err != nil || len(r.b) != 0 {
		return a, fmt.Errorf("%w: alias", ErrCorrupt)
	}
	var err error
	a.LastWrite, err = DecodeStamp(sb)
	return a, err
}
