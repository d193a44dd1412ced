package txn

import (
	"reflect"
	"testing"

	"github.com/weft-db/weft/internal/value"
	"github.com/weft-db/weft/internal/vclock"
)

// FuzzDecodeRecords: the store record decoders (stamps, vertex, edge and
// alias records, key parts) never panic on arbitrary bytes, and whatever
// they accept encodes to bytes that decode to the same record.
func FuzzDecodeRecords(f *testing.F) {
	st := vclock.Stamp{Clock: vclock.Clock{Epoch: 3, Counters: []uint64{7, 0, 1 << 40}}, Owner: 2}
	f.Add(EncodeStamp(st))
	f.Add(VertexRec{Exists: true, Shard: 5, LastWrite: st}.Encode())
	f.Add(VertexRec{}.Encode())
	f.Add(EdgeRec{Dst: "v2", Props: []Prop{{Key: "w", Value: value.F64(1.5)}, {Key: "z", Value: value.Str("x")}}}.Encode())
	f.Add(AliasRec{Handle: "v1", LastWrite: st}.Encode())
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeStamp(b); err == nil {
			if s2, err := DecodeStamp(EncodeStamp(s)); err != nil || !reflect.DeepEqual(s, s2) {
				t.Fatalf("stamp %v re-decodes as %v, %v", s, s2, err)
			}
		}
		if v, err := DecodeVertexRec(b); err == nil {
			if v2, err := DecodeVertexRec(v.Encode()); err != nil || !reflect.DeepEqual(v, v2) {
				t.Fatalf("vertex %+v re-decodes as %+v, %v", v, v2, err)
			}
		}
		if e, err := DecodeEdgeRec(b); err == nil {
			if e2, err := DecodeEdgeRec(e.Encode()); err != nil || !reflect.DeepEqual(e, e2) {
				t.Fatalf("edge %+v re-decodes as %+v, %v", e, e2, err)
			}
		}
		if a, err := DecodeAliasRec(b); err == nil {
			if a2, err := DecodeAliasRec(a.Encode()); err != nil || !reflect.DeepEqual(a, a2) {
				t.Fatalf("alias %+v re-decodes as %+v, %v", a, a2, err)
			}
		}
		_ = KeyParts(b)
	})
}
