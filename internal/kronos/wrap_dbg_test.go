package kronos

import (
	"encoding/binary"
	"testing"
)

func TestDbgWrap(t *testing.T) {
	b := []byte("KRN1")
	b = binary.AppendUvarint(b, 1<<63) // nextID
	b = binary.AppendUvarint(b, 2)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, 2)
	b = binary.AppendUvarint(b, 5000)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, ^uint64(0)-3999) // wraps to id 1000
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 0)
	b = append(b, 0, 0, 0)
	t.Logf("%q", b)
	_, err := Restore(DefaultConfig(), b)
	t.Log(err)
}

func TestDbgSpan(t *testing.T) {
	b := []byte("KRN1")
	b = binary.AppendUvarint(b, 1<<62) // nextID
	b = binary.AppendUvarint(b, 2)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, 2)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, 1<<61)
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, 0)
	b = append(b, 0, 0, 0)
	t.Logf("%q", b)
	_, err := Restore(DefaultConfig(), b)
	t.Log(err)
}
