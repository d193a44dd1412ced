package kv

import "fmt"

// assert panics on a programmer error (a broken internal invariant).
func assert(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("kv: assertion failed: "+format, args...))
	}
}
