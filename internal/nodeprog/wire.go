package nodeprog

import (
	"encoding/json"
	"fmt"
)

// Wire form. Batches and Reports encode with encoding/json as they are (hop
// arguments and emitted values are JSON-encodable by contract). Decoding
// needs the program, to turn each argument and value back into the Go type
// its Step and Gather expect: Runner.DecodeBatch and
// Coordinator.DecodeReport do that.

type wireHop struct {
	To  string          `json:"to"`
	Arg json.RawMessage `json:"arg,omitempty"`
}

type wireBatch struct {
	ID     BatchID         `json:"id"`
	Prog   ProgID          `json:"prog"`
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params,omitempty"`
	Shard  int             `json:"shard"`
	Hops   []wireHop       `json:"hops"`
	Bound  *float64        `json:"bound,omitempty"`
}

type wireReport struct {
	Prog     ProgID            `json:"prog"`
	Shard    int               `json:"shard"`
	Consumed []BatchID         `json:"consumed"`
	Produced []BatchID         `json:"produced,omitempty"`
	Emits    []json.RawMessage `json:"emits,omitempty"`
	Steps    int               `json:"steps"`
	Code     string            `json:"code,omitempty"`
	Err      string            `json:"err,omitempty"`
}

// DecodeBatch decodes a batch for this runner, compiling its program on
// first sight (ErrFinished if the runner already finished it).
func (r *Runner) DecodeBatch(data []byte) (Batch, error) {
	var w wireBatch
	if err := json.Unmarshal(data, &w); err != nil {
		return Batch{}, fmt.Errorf("nodeprog: decode batch: %w", err)
	}
	p, err := r.program(w.Prog, w.Name, w.Params, nil)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{ID: w.ID, Prog: w.Prog, Name: w.Name, Params: w.Params, Shard: w.Shard, Hops: make([]Hop, len(w.Hops)), Bound: w.Bound}
	for i, h := range w.Hops {
		arg, err := p.comp.DecodeArg(h.Arg)
		if err != nil {
			return Batch{}, fmt.Errorf("nodeprog: decode batch: hop %d: %w", i, err)
		}
		b.Hops[i] = Hop{To: h.To, Arg: arg}
	}
	return b, nil
}

// DecodeReport decodes a report for this coordinator's program.
func (c *Coordinator) DecodeReport(data []byte) (Report, error) {
	var w wireReport
	if err := json.Unmarshal(data, &w); err != nil {
		return Report{}, fmt.Errorf("nodeprog: decode report: %w", err)
	}
	r := Report{Prog: w.Prog, Shard: w.Shard, Consumed: w.Consumed, Produced: w.Produced, Steps: w.Steps, Code: w.Code, Err: w.Err}
	if len(w.Emits) > 0 {
		r.Emits = make([]any, len(w.Emits))
		for i, raw := range w.Emits {
			e, err := c.comp.DecodeEmit(raw)
			if err != nil {
				return Report{}, fmt.Errorf("nodeprog: decode report: value %d: %w", i, err)
			}
			r.Emits[i] = e
		}
	}
	return r, nil
}
