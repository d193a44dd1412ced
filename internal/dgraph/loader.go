package dgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
)

// LoadConfig configures a bulk load (weft load, Dgraph's live loader).
type LoadConfig struct {
	// BatchQuads is the number of quads per transaction (default 1000),
	// more when the last subject of a batch goes on (at most twice as many).
	BatchQuads int
	// Loaders is the number of transactions in flight, each loader with
	// its own UID allocator (default 1). More overlap commits, but batches
	// in flight together conflict when they create the same new XID (on
	// the film data nearly every batch names nodes the previous one
	// created), and the retries cost more than the overlap gains on two
	// cores.
	Loaders int
	// SkipInvalid skips (and reports) lines that do not parse or that the
	// schema rejects, instead of failing the load. Lines whose values Weft
	// cannot hold (rdf.ErrRange: datetimes before 1677 or after 2262,
	// integers beyond int64) are always skipped and reported.
	SkipInvalid bool
	// SkippedMax bounds the skipped lines kept for the report (default
	// 1000); the count goes on.
	SkippedMax int
	// BlanksMax bounds the blank nodes of one load (default 1<<24).
	BlanksMax int
	// XIDCacheMax bounds the cached XID bindings (default 1<<24).
	XIDCacheMax int
	// Progress, when set, is called after each committed batch with the
	// quads loaded so far (from the loaders' goroutines).
	Progress func(quads int64)
	// Stage, when set, is called when a direct load (LoadRDFDirect) starts
	// a phase after reading the file: "writing the nodes' records",
	// "writing the sorted tables".
	Stage func(stage string)
}

// loadRoundsMax bounds the rounds of MutateWith a batch gets when every
// attempt of a round conflicted.
const loadRoundsMax = 10

// busyRoundsMax bounds the waits of a batch for an alter re-indexing one of
// its predicates (backoff is at most 256ms: about ten minutes).
const busyRoundsMax = 2400

// DefaultLoadConfig returns the documented defaults.
func DefaultLoadConfig() LoadConfig {
	return LoadConfig{BatchQuads: 1000, Loaders: 1, SkippedMax: 1000, BlanksMax: 1 << 24, XIDCacheMax: 1 << 24}
}

// Validate reports the first bad field.
func (c *LoadConfig) Validate() error {
	switch {
	case c.BatchQuads < 1 || c.BatchQuads > txn.OpsMax:
		return fmt.Errorf("dgraph: BatchQuads %d out of range [1, %d]", c.BatchQuads, txn.OpsMax)
	case c.Loaders < 1 || c.Loaders > 256:
		return fmt.Errorf("dgraph: Loaders %d out of range [1, 256]", c.Loaders)
	case c.SkippedMax < 0 || c.BlanksMax < 1 || c.XIDCacheMax < 0:
		return errors.New("dgraph: SkippedMax, BlanksMax and XIDCacheMax must not be negative (BlanksMax positive)")
	}
	return nil
}

// LoadStats reports a load.
type LoadStats struct {
	Quads   int64 // quads committed
	Nodes   int64 // nodes created
	Edges   int64 // uid-valued quads
	Values  int64 // scalar quads
	Batches int64 // transactions committed
	// Attempts counts transactions tried; Attempts - Batches were retried
	// after a conflict.
	Attempts int64
	Ops      int64 // engine operations committed
	// Skipped counts the lines skipped; SkippedLines lists the first
	// SkippedMax of them.
	Skipped      int64
	SkippedLines []Skipped
	Elapsed      time.Duration
	// Direct is set by LoadRDFDirect, which commits no transaction per
	// batch (Batches is 1); Runs counts the times it wrote its facts to
	// disk because its memory was full.
	Direct bool
	Runs   int64
}

// Skipped is one line a load left out, and why.
type Skipped struct {
	Where string // file:line, or file: object #n for JSON
	Err   string
}

// batch is a run of quads with where each came from.
type batch struct {
	quads []rdf.NQuad
	where []string
}

// loadRun is the shared state of one load.
type loadRun struct {
	g      *Graph
	cfg    LoadConfig
	blanks *BlankMap
	xids   *XIDCache
	mu     sync.Mutex
	stats  LoadStats
	quads  atomic.Int64
}

func (l *loadRun) skip(where string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Skipped++
	if len(l.stats.SkippedLines) < l.cfg.SkippedMax {
		l.stats.SkippedLines = append(l.stats.SkippedLines, Skipped{Where: where, Err: err.Error()})
	}
}

// LoadRDF loads N-Quads from r (name labels positions in reports): the
// statements are cut into batches of cfg.BatchQuads, each one mutation,
// run by cfg.Loaders loaders in parallel. Blank nodes are shared by the
// whole load; XIDs go through their aliases, so loading a file twice, or two
// files naming the same XIDs, in parallel or not, gives each XID one node.
func (g *Graph) LoadRDF(ctx context.Context, r io.Reader, name string, cfg LoadConfig) (LoadStats, error) {
	l, err := g.newLoad(cfg)
	if err != nil {
		return LoadStats{}, err
	}
	rd := rdf.NewReader(r)
	return l.run(ctx, func(yield func(batch) error) error {
		b := batch{}
		for {
			nq, err := rd.Read()
			if err == io.EOF {
				break
			}
			if skip, err := readFailure(err, name, cfg.SkipInvalid, l.skip); err != nil {
				return err
			} else if skip {
				continue
			}
			// A full batch is cut where the subject changes (up to twice
			// its size): two batches sharing a new subject would both try
			// to create its node, and one would retry.
			if n := len(b.quads); n >= cfg.BatchQuads && (n >= 2*cfg.BatchQuads || !nq.Subject.Equal(b.quads[n-1].Subject)) {
				if err := yield(b); err != nil {
					return err
				}
				b = batch{}
			}
			b.quads = append(b.quads, nq)
			b.where = append(b.where, fmt.Sprintf("%s:%d", name, rd.Line()))
		}
		if len(b.quads) > 0 {
			return yield(b)
		}
		return nil
	})
}

// readFailure sorts out an error of rdf.Reader.Read (nil: none): a line
// that does not parse, or whose value Weft cannot hold, is skipped
// (reported through skip) when skipInvalid or rdf.ErrRange allows it, else
// fails the load with its line; any other error fails it.
func readFailure(err error, name string, skipInvalid bool, skip func(where string, err error)) (skipped bool, fail error) {
	var pe *rdf.Error
	switch {
	case err == nil:
		return false, nil
	case errors.As(err, &pe) && (errors.Is(err, rdf.ErrRange) || skipInvalid):
		skip(fmt.Sprintf("%s:%d", name, pe.Line), err)
		return true, nil
	case errors.As(err, &pe):
		return false, fmt.Errorf("%s:%d: %w: %w", name, pe.Line, ErrInvalid, err)
	}
	return false, fmt.Errorf("%s: %w", name, err)
}

// LoadJSON loads a JSON file in Dgraph's JSON mutation format: a list of
// objects (or one object), streamed one object at a time.
func (g *Graph) LoadJSON(ctx context.Context, r io.Reader, name string, cfg LoadConfig) (LoadStats, error) {
	l, err := g.newLoad(cfg)
	if err != nil {
		return LoadStats{}, err
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return l.run(ctx, func(yield func(batch) error) error {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w: %w", name, ErrInvalid, err)
		}
		list := tok == json.Delim('[')
		if !list && tok != json.Delim('{') {
			return fmt.Errorf("%s: %w: a JSON load file holds a list of objects", name, ErrInvalid)
		}
		c := &jsonConv{}
		b := batch{}
		for i := 1; ; i++ {
			var m map[string]any
			if list {
				if !dec.More() {
					break
				}
				err = dec.Decode(&m)
			} else {
				m, err = decodeRest(dec)
			}
			where := fmt.Sprintf("%s: object #%d", name, i)
			if err != nil {
				return fmt.Errorf("%s: %w: %w", where, ErrInvalid, err)
			}
			n := len(c.quads)
			if _, err := c.object(m, "", 0); err != nil {
				if !cfg.SkipInvalid {
					return fmt.Errorf("%s: %w", where, err)
				}
				c.quads = c.quads[:n]
				l.skip(where, err)
			}
			for range c.quads[n:] {
				b.where = append(b.where, where)
			}
			b.quads = append(b.quads, c.quads[n:]...)
			c.quads = c.quads[:0]
			if len(b.quads) >= cfg.BatchQuads {
				if err := yield(b); err != nil {
					return err
				}
				b = batch{}
			}
			if !list {
				break
			}
		}
		if len(b.quads) > 0 {
			return yield(b)
		}
		return nil
	})
}

// decodeRest decodes the rest of an object whose '{' was consumed.
func decodeRest(dec *json.Decoder) (map[string]any, error) {
	m := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	_, err := dec.Token()
	return m, err
}

func (g *Graph) newLoad(cfg LoadConfig) (*loadRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &loadRun{g: g, cfg: cfg, blanks: NewBlankMap(cfg.BlanksMax), xids: NewXIDCache(cfg.XIDCacheMax)}, nil
}

// run feeds the batches produce yields to the loaders and waits for them.
func (l *loadRun) run(ctx context.Context, produce func(yield func(batch) error) error) (LoadStats, error) {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan batch, l.cfg.Loaders)
	var wg sync.WaitGroup
	for range l.cfg.Loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := MutateOptions{Alloc: l.g.NewAllocator(), Blanks: l.blanks, XIDs: l.xids}
			for b := range ch {
				if err := l.apply(ctx, b, o); err != nil {
					cancel(err)
				}
			}
		}()
	}
	err := produce(func(b batch) error {
		select {
		case ch <- b:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(ch)
	wg.Wait()
	if err == nil {
		err = context.Cause(ctx) // a loader's error, or the caller's cancellation
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Elapsed = time.Since(start)
	return l.stats, err
}

// apply commits one batch: split in halves when it does not fit in one
// transaction, waiting while a predicate is re-indexed, and — when a quad
// is rejected — quad by quad, to report (or skip) the culprit.
func (l *loadRun) apply(ctx context.Context, b batch, o MutateOptions) error {
	for attempt := 0; ; attempt++ {
		res, err := l.g.MutateWith(ctx, Mutation{Set: b.quads}, o)
		switch {
		case err == nil:
			l.record(res.Stats)
			return nil
		case errors.Is(err, ErrBusy) && attempt < busyRoundsMax || retryable(err) && attempt < loadRoundsMax:
			// An alter is re-indexing, or conflicts outlasted the
			// mutation's own attempts: wait, then try again.
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
			continue
		case errors.Is(err, txn.ErrTooLarge) && len(b.quads) > 1:
			h := len(b.quads) / 2
			if err := l.apply(ctx, batch{b.quads[:h], b.where[:h]}, o); err != nil {
				return err
			}
			return l.apply(ctx, batch{b.quads[h:], b.where[h:]}, o)
		case (errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported)) && len(b.quads) > 1:
			for i := range b.quads {
				if err := l.apply(ctx, batch{b.quads[i : i+1], b.where[i : i+1]}, o); err != nil {
					return err
				}
			}
			return nil
		case errors.Is(err, ErrInvalid) || errors.Is(err, ErrUnsupported):
			if l.cfg.SkipInvalid {
				l.skip(b.where[0], err)
				return nil
			}
			return fmt.Errorf("%s: %w", b.where[0], err)
		}
		return err
	}
}

func (l *loadRun) record(s Stats) {
	l.mu.Lock()
	l.stats.Quads += int64(s.Quads)
	l.stats.Nodes += int64(s.Nodes)
	l.stats.Edges += int64(s.Edges)
	l.stats.Values += int64(s.Values)
	l.stats.Ops += int64(s.Ops)
	l.stats.Attempts += int64(s.Attempts)
	l.stats.Batches++
	l.mu.Unlock()
	q := l.quads.Add(int64(s.Quads))
	if l.cfg.Progress != nil {
		l.cfg.Progress(q)
	}
}
