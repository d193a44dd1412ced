package pebble

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkCommit measures commit throughput of small Txns (read one key,
// write it back) on a real directory with fsync, for 1, 8 and 64 concurrent
// committers. Workers touch disjoint keys, so nothing conflicts and the
// figure is the commit path alone. It reports fsyncs per commit (1/mean
// group size) and commits per second.
//
//	go test -run '^$' -bench Commit -benchtime 2000x ./internal/store/pebble
func BenchmarkCommit(b *testing.B) {
	for _, committers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("committers=%d", committers), func(b *testing.B) {
			s, err := Open(b.TempDir(), DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, committers)
			before := s.Stats()
			b.ResetTimer()
			for w := range committers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := fmt.Appendf(nil, "bench/%03d", w)
					for next.Add(1) <= int64(b.N) {
						if err := commitOne(s, key); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			st := s.Stats()
			commits := float64(st.Commits - before.Commits)
			b.ReportMetric(float64(st.Syncs-before.Syncs)/commits, "fsyncs/commit")
			b.ReportMetric(float64(st.GroupedTxns-before.GroupedTxns)/float64(st.Groups-before.Groups), "txns/group")
			b.ReportMetric(commits/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

func commitOne(s *Store, key []byte) error {
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
	return tx.Commit(context.Background(), nil)
}
