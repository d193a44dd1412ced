package kv

import (
	"bytes"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// Test helpers for versions and siblings (kvcore's tests have their own).

func ver(pairs ...uint64) kvcore.Version {
	var v kvcore.Version
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Entries = append(v.Entries, kvcore.Entry{Actor: pairs[i], Counter: pairs[i+1]})
	}
	return v
}

func sib(v kvcore.Version, val string) kvcore.Sibling {
	return kvcore.Sibling{Version: v, Value: []byte(val)}
}

func sameSiblings(a, b []kvcore.Sibling) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if kvcore.Compare(a[i].Version, b[i].Version) != vclock.Equal || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// quorum is N, R, W with rounds of 3 ticks and no read repair.
func quorum(n, r, w int) kvcore.Quorum {
	q := kvcore.DefaultQuorum()
	q.N, q.R, q.W, q.RoundTicks, q.ReadRepair = n, r, w, 3, false
	return q
}
