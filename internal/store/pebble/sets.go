package pebble

import (
	"unsafe"

	"github.com/weft-db/weft/internal/store/txnset"
)

// The transaction's buffers are the ones every store shares.
type (
	write    = txnset.Write
	writeSet = txnset.WriteSet
	readSet  = txnset.ReadSet
	span     = txnset.Span
)

// bytesOf views s as a byte slice without copying. The result must never be
// modified: Pebble and Scan callbacks only read it.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
