package kronos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/bench"
)

// Benchmarks names the Kronos sub-benchmarks in the order they run.
// create runs last: it is the only one that needs the gRPC server and client.
var Benchmarks = []string{"query", "assign", "memory", "gc", "create"}

// Options configures a run of the Kronos suite.
type Options struct {
	// Out is the directory for the JSON and PNG files ("" writes none).
	Out string
	// Quick shrinks every workload for a fast smoke run.
	Quick bool
	// Addr is an existing Kronos server for the create benchmark; "" starts
	// one in-process for each durability mode.
	Addr string
	// Only lists the sub-benchmarks to run (nil: all).
	Only []string
	// MaxEvents is the largest graph of the memory benchmark (0: 100,000,000,
	// or 1,000,000 when Quick).
	MaxEvents int
	// Seed seeds every workload's generator.
	Seed uint64
	// Progress receives progress bars (nil: none).
	Progress io.Writer
	// Log receives a line per finished phase (nil: discarded).
	Log *slog.Logger
}

// ParseOnly splits a comma-separated list of sub-benchmark names, rejecting
// unknown ones. An empty list selects all.
func ParseOnly(list string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(Benchmarks, name) {
			return nil, fmt.Errorf("bench: unknown kronos benchmark %q (have %s)", name, strings.Join(Benchmarks, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// kronosParams sizes every sub-benchmark of a run.
type kronosParams struct {
	query  QueryParams
	assign AssignParams
	memory MemoryParams
	gc     GCParams
	create CreateParams
}

func defaultKronosParams(opts Options) kronosParams {
	return kronosParams{
		query:  queryParams(opts.Quick),
		assign: assignParams(opts.Quick),
		memory: memoryParams(opts.Quick, opts.MaxEvents),
		gc:     gcParams(opts.Quick),
		create: createParams(opts.Quick, opts.Addr),
	}
}

// kronosRun is the state shared by one run's sub-benchmarks.
type kronosRun struct {
	opts Options
	prm  kronosParams
	log  *slog.Logger
}

// Run runs the selected sub-benchmarks one after another, writing each
// one's JSON and plots to opts.Out as soon as it finishes. A failed
// sub-benchmark does not stop the rest; their errors are joined.
func Run(ctx context.Context, opts Options) (map[string]*bench.Result, error) {
	return runKronos(ctx, opts, defaultKronosParams(opts))
}

func runKronos(ctx context.Context, opts Options, prm kronosParams) (map[string]*bench.Result, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	r := &kronosRun{opts: opts, prm: prm, log: opts.Log}
	runners := map[string]func(context.Context) (*bench.Result, error){
		"query":  r.query,
		"assign": r.assign,
		"memory": r.memory,
		"gc":     r.gc,
		"create": r.create,
	}
	results := map[string]*bench.Result{}
	var errs []error
	for _, name := range Benchmarks {
		if len(opts.Only) > 0 && !slices.Contains(opts.Only, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		start, load := time.Now(), bench.LoadAvg()
		res, err := runners[name](ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("kronos/%s: %w", name, err))
			continue
		}
		res.Benchmark = "kronos/" + name
		res.Schema = bench.SchemaVersion
		res.Started = start.UTC().Truncate(time.Second)
		res.Seconds = bench.Round(time.Since(start).Seconds(), 3)
		res.Env = bench.CurrentEnv()
		res.Env.LoadAvgStart = load
		if opts.Out != "" {
			if err := bench.WriteJSON(opts.Out, name, res); err != nil {
				errs = append(errs, err)
			}
		}
		results[name] = res
		r.log.Info("benchmark done", "name", res.Benchmark, "seconds", res.Seconds)
	}
	return results, errors.Join(errs...)
}

// plotPath returns where a plot file goes, or "" when nothing is written.
func (r *kronosRun) plotPath(file string) string {
	if r.opts.Out == "" {
		return ""
	}
	return r.opts.Out + "/" + file
}

// savePlots renders each chart whose path is set and returns the file names.
func (r *kronosRun) savePlots(charts map[string]bench.Chart) ([]string, error) {
	var names []string
	for _, file := range slices.Sorted(maps.Keys(charts)) {
		path := r.plotPath(file)
		if path == "" {
			continue
		}
		if err := charts[file].Save(path); err != nil {
			return names, err
		}
		names = append(names, file)
	}
	return names, nil
}
