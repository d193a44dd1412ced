// Command robobrain is a RoboBrain-style knowledge graph on Weft's graph
// database (Weaver dissertation §4.8): it generates seeded knowledge —
// concepts (objects, categories, places, affordances) and typed relations
// with a confidence, with duplicate concepts such as cup and mug and
// ambiguous ones such as mouse — loads it through the Go client, then merges
// the duplicates and splits the ambiguous concepts, each restructuring one
// transaction, from several goroutines while readers read the whole graph at
// one snapshot after another and check that none shows a restructuring half
// done.
//
//	go run ./examples/robobrain                      # an in-process engine
//	go run ./examples/robobrain --addr 127.0.0.1:7500 # a running `weft serve`
//
// Every run stores its graph under a fresh handle prefix, so it can run
// again against the same server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/examples/internal/exweft"
	"github.com/weft-db/weft/examples/robobrain/brain"
)

// config is what one run does.
type config struct {
	Addr               string
	Seed               uint64
	Objects, PerObject int
	Dups, Ambiguous    int
	Batch              int
	Writers, Readers   int
	Prefix             string // "" derives one from the clock
}

func defaults() config {
	return config{Seed: 1, Objects: 260, PerObject: 10, Dups: 40, Ambiguous: 20, Batch: 200, Writers: 4, Readers: 2}
}

// report is what a run printed, for the test to check against the graph.
type report struct {
	Prefix   string
	K        *brain.Knowledge
	Merged   map[[2]string]brain.MergeResult
	Split    map[string][2]string
	Dropped  int
	Attempts int // transaction attempts of the restructurings
	Checks   []brain.Check
	Before   [2]brain.View // the sample pair before its merge
	After    brain.View    // and the merged concept
	Final    brain.Check
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Addr, "addr", "", "gRPC address of a running `weft serve` (default: an in-process engine)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated knowledge")
	flag.IntVar(&cfg.Objects, "objects", cfg.Objects, "object concepts")
	flag.IntVar(&cfg.PerObject, "relations-per-object", cfg.PerObject, "relations generated per object")
	flag.IntVar(&cfg.Dups, "dups", cfg.Dups, "generated duplicate pairs, besides the named ones (cup and mug …)")
	flag.IntVar(&cfg.Ambiguous, "ambiguous", cfg.Ambiguous, "generated ambiguous concepts, besides the named ones (mouse …)")
	flag.IntVar(&cfg.Writers, "writers", cfg.Writers, "goroutines merging and splitting")
	flag.IntVar(&cfg.Readers, "readers", cfg.Readers, "goroutines checking snapshots meanwhile")
	flag.Parse()
	if _, err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "robobrain:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, cfg config) (*report, error) {
	// Restructurings contend on the stats vertex: allow Update enough retries.
	c, closeC, err := exweft.Connect(ctx, cfg.Addr, weft.Options{Attempts: 1000, BackoffMin: 200 * time.Microsecond, BackoffMax: 20 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer closeC()
	r := &report{Prefix: exweft.Prefix("robobrain", cfg.Prefix), Merged: map[[2]string]brain.MergeResult{}, Split: map[string][2]string{}}
	g := brain.New(c, r.Prefix)
	r.K = brain.Generate(cfg.Seed, cfg.Objects, cfg.PerObject, cfg.Dups, cfg.Ambiguous)
	start := time.Now()
	txs, err := g.Load(ctx, r.K, cfg.Batch)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "loaded %d concepts, %d relations (%d edges with their mirrors) in %d transactions, %v\n",
		len(r.K.Concepts), len(r.K.Relations), 2*len(r.K.Relations), txs, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "handles start with %s/\n", r.Prefix)
	fmt.Fprintf(w, "to merge: %d duplicate pairs; to split: %d ambiguous concepts\n\n", len(r.K.Merges), len(r.K.Splits))

	sample := r.K.Merges[0]
	for i, n := range sample {
		v, ok, err := g.Read(ctx, n)
		if err != nil || !ok {
			return nil, fmt.Errorf("read %s: %v (found %v)", n, err, ok)
		}
		r.Before[i] = v
	}
	var watch []string
	for _, p := range r.K.Merges {
		watch = append(watch, p[0], p[1])
	}
	watch = append(watch, r.K.Splits...)

	// Readers check snapshot after snapshot until the writers are done.
	st0, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	var done atomic.Bool
	var mu sync.Mutex
	var errs []error
	var rg sync.WaitGroup
	for range cfg.Readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for !done.Load() {
				ck, err := g.CheckAt(ctx, watch)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				r.Checks = append(r.Checks, ck)
				mu.Unlock()
			}
		}()
	}
	// Writers take restructurings from one queue, merges and splits mixed.
	type job struct {
		merge [2]string
		split string
	}
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		for i := range max(len(r.K.Merges), len(r.K.Splits)) {
			if i < len(r.K.Merges) {
				jobs <- job{merge: r.K.Merges[i]}
			}
			if i < len(r.K.Splits) {
				jobs <- job{split: r.K.Splits[i]}
			}
		}
	}()
	start = time.Now()
	var wg sync.WaitGroup
	for range cfg.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if j.split != "" {
					kh, uh, n, err := g.Split(ctx, j.split)
					mu.Lock()
					r.Attempts += n
					if err != nil {
						errs = append(errs, fmt.Errorf("split %s: %w", j.split, err))
					} else {
						r.Split[j.split] = [2]string{kh, uh}
					}
					mu.Unlock()
					continue
				}
				res, n, err := g.Merge(ctx, j.merge[0], j.merge[1])
				mu.Lock()
				r.Attempts += n
				if err != nil {
					errs = append(errs, fmt.Errorf("merge %s and %s: %w", j.merge[0], j.merge[1], err))
				} else {
					r.Merged[j.merge] = res
					r.Dropped += res.Dropped
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	// Let every reader finish at least one check after the writers.
	time.Sleep(10 * time.Millisecond)
	done.Store(true)
	rg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	restructurings := len(r.Merged) + len(r.Split)
	fmt.Fprintf(w, "%d writers: %d merges and %d splits, each one transaction, in %v; %d attempts (%d aborted and retried; the server counts %d aborts meanwhile)\n",
		cfg.Writers, len(r.Merged), len(r.Split), took.Round(time.Millisecond), r.Attempts, r.Attempts-restructurings, st.Aborts-st0.Aborts)
	fmt.Fprintf(w, "  merges deduplicated or dropped %d relations (%d → %d)\n", r.Dropped, len(r.K.Relations), len(r.K.Relations)-r.Dropped)
	violations, distinct := 0, map[string]bool{}
	for _, ck := range r.Checks {
		violations += len(ck.Violations)
		distinct[fmt.Sprintf("%d/%d", ck.StatsC, ck.StatsR)] = true
	}
	fmt.Fprintf(w, "%d readers checked the whole graph at %d snapshots meanwhile (%d distinct states of the counts): %d violations\n",
		cfg.Readers, len(r.Checks), len(distinct), violations)
	fmt.Fprintln(w, "  (every registered concept exists, every relation's ends are live concepts with both edges, the stats")
	fmt.Fprintln(w, "   counts match, every name is held by exactly one concept and resolves to it)")
	for _, ck := range r.Checks {
		for i, v := range ck.Violations {
			if i == 3 {
				break
			}
			fmt.Fprintf(w, "  VIOLATION at %s: %s\n", ck.Snapshot, v)
		}
	}

	if r.Final, err = g.CheckAt(ctx, watch); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\nnow: %d concepts (%d + %d splits − %d merges), %d relations; final check: %d violations\n",
		r.Final.Concepts, len(r.K.Concepts), len(r.Split), len(r.Merged), r.Final.Relations, len(r.Final.Violations))

	if r.After, _, err = g.Read(ctx, sample[0]); err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "\nbefore the merge:")
	for _, v := range r.Before {
		printView(w, r.Prefix, v)
	}
	fmt.Fprintln(w, "after:")
	printView(w, r.Prefix, r.After)
	if sp, ok := r.Split[r.K.Splits[0]]; ok {
		fmt.Fprintf(w, "%s was split into %s and %s\n", r.K.Splits[0], short(r.Prefix, sp[0]), short(r.Prefix, sp[1]))
	}
	if violations > 0 || len(r.Final.Violations) > 0 {
		return r, fmt.Errorf("%d violations in reader snapshots, %d at the end", violations, len(r.Final.Violations))
	}
	return r, nil
}

func printView(w io.Writer, prefix string, v brain.View) {
	fmt.Fprintf(w, "  %s (%s), names %s, %d relations", short(prefix, v.Handle), v.Kind, strings.Join(v.Names, ", "), len(v.Rels))
	if len(v.MergedFrom) > 0 {
		fmt.Fprintf(w, ", from %s", strings.Join(shortAll(prefix, v.MergedFrom), ", "))
	}
	fmt.Fprintln(w, ":")
	var parts []string
	for i, r := range v.Rels {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(v.Rels)-6))
			break
		}
		if r.Out {
			parts = append(parts, fmt.Sprintf("%s→%s %.2f", r.Kind, short(prefix, r.Other), r.Confidence))
		} else {
			parts = append(parts, fmt.Sprintf("%s←%s %.2f", r.Kind, short(prefix, r.Other), r.Confidence))
		}
	}
	fmt.Fprintf(w, "    %s\n", strings.Join(parts, "; "))
}

// short drops the run's prefix from a handle.
func short(prefix, h string) string { return strings.TrimPrefix(h, prefix+"/c/") }

func shortAll(prefix string, hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = short(prefix, h)
	}
	return out
}
