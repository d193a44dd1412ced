package txkv

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/client/kronos"
)

// verifyBatch bounds the pairs of one query_order call made by Verify
// (below the service's PairsMax).
const verifyBatch = 1 << 14

// Serial is a serial schedule Verify found equivalent to a history.
type Serial struct {
	Order []int   // indexes into the history, in a topological order of their events
	Final []int64 // every key's value after replaying the history in Order
}

// Verify checks that a history — every committed transaction of a store
// that started with all keys at initial — is serializable in Kronos's
// order (§3.3: "any topological sort of the event dependency graph will
// yield a schedule of transactions that is equivalent to the actual
// execution"). It asks Kronos the order of every pair of committed events,
// requires transactions sharing a key to be ordered, sorts topologically, and
// replays the history serially from the initial state, requiring each
// transaction to read exactly what it read in the store. It does so for two
// topological orders (ties to the oldest, ties to the newest) and requires
// the same final state. It returns the first schedule.
func Verify(ctx context.Context, kc *kronos.Client, history []Commit, keys int, initial int64) (*Serial, error) {
	n := len(history)
	before, err := pairOrders(ctx, kc, history)
	if err != nil {
		return nil, err
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if !before[i][j] && !before[j][i] && shareKey(history[i], history[j]) {
				return nil, fmt.Errorf("txkv: events %d and %d share a key but Kronos leaves them unordered",
					history[i].Event, history[j].Event)
			}
		}
	}
	var first *Serial
	for _, newest := range []bool{false, true} {
		order, err := topoSort(before, newest)
		if err != nil {
			return nil, err
		}
		final, err := replay(history, order, keys, initial)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = &Serial{Order: order, Final: final}
			continue
		}
		for k := range final {
			if final[k] != first.Final[k] {
				return nil, fmt.Errorf("txkv: two topological orders end with key %d at %d and %d", k, first.Final[k], final[k])
			}
		}
	}
	return first, nil
}

// pairOrders returns before[i][j]: Kronos orders history[i] before
// history[j]. An event Kronos does not know fails.
func pairOrders(ctx context.Context, kc *kronos.Client, history []Commit) ([][]bool, error) {
	n := len(history)
	before := make([][]bool, n)
	for i := range before {
		before[i] = make([]bool, n)
	}
	type ij struct{ i, j int }
	var idx []ij
	var pairs []kronos.Pair
	flush := func() error {
		if len(pairs) == 0 {
			return nil
		}
		os, err := kc.QueryOrder(ctx, pairs)
		if err != nil {
			return err
		}
		for k, o := range os {
			i, j := idx[k].i, idx[k].j
			switch o {
			case kronos.Before:
				before[i][j] = true
			case kronos.After:
				before[j][i] = true
			case kronos.Unknown:
				return fmt.Errorf("txkv: Kronos does not know event %d or %d", history[i].Event, history[j].Event)
			}
		}
		idx, pairs = idx[:0], pairs[:0]
		return nil
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			idx = append(idx, ij{i, j})
			pairs = append(pairs, kronos.Pair{A: kronos.ID(history[i].Event), B: kronos.ID(history[j].Event)})
			if len(pairs) == verifyBatch {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	return before, flush()
}

func shareKey(a, b Commit) bool {
	for _, x := range a.Keys {
		for _, y := range b.Keys {
			if x == y {
				return true
			}
		}
	}
	return false
}

// topoSort orders 0..n-1 so i precedes j whenever before[i][j], breaking
// ties to the lowest index, or to the highest when newest is set.
func topoSort(before [][]bool, newest bool) ([]int, error) {
	n := len(before)
	indeg := make([]int, n)
	for i := range n {
		for j := range n {
			if before[i][j] {
				indeg[j]++
			}
		}
	}
	done := make([]bool, n)
	out := make([]int, 0, n)
	for len(out) < n {
		next := -1
		for k := range n {
			i := k
			if newest {
				i = n - 1 - k
			}
			if !done[i] && indeg[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, fmt.Errorf("txkv: Kronos's order of %d committed transactions has a cycle", n-len(out))
		}
		done[next] = true
		out = append(out, next)
		for j := range n {
			if before[next][j] {
				indeg[j]--
			}
		}
	}
	return out, nil
}

// replay runs history serially in order and checks every read.
func replay(history []Commit, order []int, keys int, initial int64) ([]int64, error) {
	state := make([]int64, keys)
	for k := range state {
		state[k] = initial
	}
	for step, i := range order {
		c := history[i]
		for j, k := range c.Keys {
			if c.Read[j] != state[k] {
				return nil, fmt.Errorf("txkv: not serializable: step %d, event %d read key %d = %d, the serial schedule has %d",
					step, c.Event, k, c.Read[j], state[k])
			}
		}
		for j, k := range c.Keys {
			if c.Wrote != nil {
				state[k] = c.Wrote[j]
			}
		}
	}
	return state, nil
}
