package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/store"
	"github.com/weft-db/weft/internal/store/postgres/pgtest"
)

// BenchmarkCommit measures commits of small Txns (read one key, write it
// back) on the test server with synchronous commit (one WAL flush per
// group), from N concurrent committers touching disjoint keys, so nothing
// conflicts and the figure is the commit path: Begin (a pool connection and
// a snapshot), one read, the queue, one SERIALIZABLE group transaction.
// "hook" runs a commit hook reading and writing one more key per Txn in the
// serialized section, as a gatekeeper's ordering hook does; "stores=2"
// splits the committers over two Stores on one schema, as two gatekeeper
// processes sharing the server, with each serializer. It reports commits/s,
// the mean group size and the per-commit latency (p50, p99).
//
//	go test -run '^$' -bench . -benchtime 2000x ./internal/store/postgres
func BenchmarkCommit(b *testing.B) {
	for _, bc := range []struct {
		name       string
		committers int
		stores     int
		hook       bool
		ser        Serializer
	}{
		{"committers=1", 1, 1, false, SerializeAdvisory},
		{"committers=8", 8, 1, false, SerializeAdvisory},
		{"committers=64", 64, 1, false, SerializeAdvisory},
		{"hook/committers=1", 1, 1, true, SerializeAdvisory},
		{"hook/committers=64", 64, 1, true, SerializeAdvisory},
		{"stores=2/advisory/committers=16", 16, 2, true, SerializeAdvisory},
		{"stores=2/row/committers=16", 16, 2, true, SerializeRow},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := DefaultOptions(pgtest.Shared(b).URL())
			o.Schema = pgtest.Schema(b)
			o.ConnsMax = bc.committers + 4
			o.RetryMax = 1000
			var stores []*Store
			for range bc.stores {
				stores = append(stores, openWith(b, o))
			}
			benchCommits(b, stores, bc.committers, bc.hook)
		})
	}
}

func benchCommits(b *testing.B, stores []*Store, committers int, hook bool) {
	before := make([]store.Stats, len(stores))
	for i, s := range stores {
		before[i] = s.Stats()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, committers)
	lat := make([][]time.Duration, committers)
	b.ResetTimer()
	for w := range committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			key := fmt.Appendf(nil, "bench/%03d", w)
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				if err := commitOne(s, key, hook); err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(start))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var commits, groups, grouped float64
	for i, s := range stores {
		st := s.Stats()
		commits += float64(st.Commits - before[i].Commits)
		groups += float64(st.Groups - before[i].Groups)
		grouped += float64(st.GroupedTxns - before[i].GroupedTxns)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(commits/b.Elapsed().Seconds(), "commits/s")
	b.ReportMetric(grouped/groups, "txns/group")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op") // commits/s says it; ns/op would mislead with concurrency
}

// commitOne reads key and writes it back longer (capped), and with hook
// reads and writes a per-key counter in the commit hook.
func commitOne(s *Store, key []byte, hook bool) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Discard()
	v, _, err := tx.Get(key)
	if err != nil {
		return err
	}
	if err := tx.Set(key, append(v[:len(v):len(v)], 'x')[:min(len(v)+1, 64)]); err != nil {
		return err
	}
	var h func(store.Critical) error
	if hook {
		access := append([]byte("access/"), key...)
		h = func(c store.Critical) error {
			v, _, err := c.Get(access)
			if err != nil {
				return err
			}
			return c.Set(access, append(v[:len(v):len(v)], 'a')[:min(len(v)+1, 32)])
		}
	}
	return tx.Commit(context.Background(), h)
}
