package kvcore

import "github.com/weft-db/weft/internal/vclock"

// MergeHVC is what a client carries between requests: the entry-wise
// maximum of the server clocks it has seen, each read under its own ε rule
// (vclock.HVC.At). Sending it with the next request makes that server's
// clock Receive it, so causality that flows through clients (read at server
// a, then write at server b) shows in the HVCs the monitors compare
// (§III-A). The result's owner is the entry holding the maximum, so its
// floor is the highest of the inputs' floors. A zero input is ignored;
// clocks of different sizes (a changed ring) keep only the newer, b.
func MergeHVC(a, b vclock.HVC) vclock.HVC {
	if b.IsZero() {
		return a
	}
	if a.IsZero() || len(a.Entries) != len(b.Entries) || a.Epsilon != b.Epsilon {
		return b.Clone()
	}
	out := vclock.HVC{Epsilon: a.Epsilon, Entries: make([]uint64, len(a.Entries))}
	for k := range out.Entries {
		out.Entries[k] = max(a.At(k), b.At(k))
		if out.Entries[k] > out.Entries[out.Self] {
			out.Self = uint32(k)
		}
	}
	return out
}
