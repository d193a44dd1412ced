//go:build invariants

package faultproxy

// invariantsOn makes every queue operation recheck the whole queue: held
// bytes match the chunks, stay within HoldBytesMax, due times never go
// backwards and the FIN comes last (go test -tags invariants).
const invariantsOn = true
