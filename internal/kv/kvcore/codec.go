package kvcore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Stored form of a key's siblings (the Pebble value; the Pebble key is
// keyPrefix + the user key):
//
//	version byte (1)
//	uvarint sibling count
//	per sibling: uvarint entry count, then (uvarint actor, uvarint counter)
//	             per entry; uvarint value length, value bytes
//
// DecodeSiblings is strict (minimal varints, no trailing bytes, valid
// versions, counts within limits), so a damaged value is reported as
// ErrCorrupt instead of being misread.
const codecVersion = 1

// AppendSiblings appends the stored form of sibs to b.
func AppendSiblings(b []byte, sibs []Sibling) []byte {
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(sibs)))
	for _, s := range sibs {
		b = binary.AppendUvarint(b, uint64(len(s.Version.Entries)))
		for _, e := range s.Version.Entries {
			b = binary.AppendUvarint(b, e.Actor)
			b = binary.AppendUvarint(b, e.Counter)
		}
		b = binary.AppendUvarint(b, uint64(len(s.Value)))
		b = append(b, s.Value...)
	}
	return b
}

// DecodeSiblings decodes AppendSiblings' form. Values are copied out of b.
func DecodeSiblings(b []byte) ([]Sibling, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, fmt.Errorf("%w: missing version byte %d", ErrCorrupt, codecVersion)
	}
	r := reader{b: b[1:]}
	n := r.uvarint()
	if r.err == nil && n > SiblingsLimit {
		return nil, fmt.Errorf("%w: %d siblings (at most %d)", ErrCorrupt, n, SiblingsLimit)
	}
	sibs := make([]Sibling, 0, min(n, 16))
	for i := uint64(0); i < n && r.err == nil; i++ {
		var s Sibling
		ne := r.uvarint()
		if ne > VersionEntriesMax {
			return nil, fmt.Errorf("%w: sibling %d: %d version entries", ErrCorrupt, i, ne)
		}
		s.Version.Entries = make([]Entry, ne)
		for j := range s.Version.Entries {
			s.Version.Entries[j] = Entry{Actor: r.uvarint(), Counter: r.uvarint()}
		}
		s.Value = r.bytes(r.uvarint())
		if r.err != nil {
			break
		}
		if err := s.Version.Validate(); err != nil {
			return nil, fmt.Errorf("%w: sibling %d: %v", ErrCorrupt, i, err)
		}
		sibs = append(sibs, s)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	return sibs, nil
}

// reader reads minimal uvarints and byte strings, keeping the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != max(1, (bits.Len64(v)+6)/7) {
		r.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: value of %d bytes, %d left", ErrCorrupt, n, len(r.b))
		return nil
	}
	out := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return out
}
