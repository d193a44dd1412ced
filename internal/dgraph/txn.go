package dgraph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weft-db/weft/internal/dgraph/schema"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/rdf"
	"github.com/weft-db/weft/internal/txn"
)

// Transactions spanning several requests (Dgraph's start_ts, mutations
// without commit_now, CommitOrAbort): a client of the mapping evaluates
// its mutations at the transaction's snapshot with Prepare, adds the reads
// its queries made, and commits the lot with Commit. Prepare commits
// nothing; it is deterministic for a given snapshot, memo and input, so a
// transaction may re-prepare all its mutations on every request.

// Memo keeps the UIDs given to the blank nodes (and unbound XIDs) of a
// mutation across Prepare calls, so that preparing it again — a retry, or
// a transaction re-preparing its buffered mutations — gives each blank node
// the UID it had. Not safe for concurrent use.
type Memo struct{ m memo }

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{m: memo{blanks: map[string]uint64{}, xids: map[string]uint64{}}}
}

// Prepared is a batch of mutations evaluated at one snapshot: the reads
// they made and the engine operations that apply them. It commits only if
// none of those reads changed.
type Prepared struct {
	// Snapshot is where the mutations were evaluated.
	Snapshot engineapi.Snapshot
	// Reads are the read-set entries of the evaluation (deduplicated).
	Reads []txn.Read
	// Ops are the writes; empty when the mutations change nothing.
	Ops []txn.Op
	// UIDs maps each blank node of the batch (without "_:") to its UID.
	UIDs map[string]string
	// Preds are the predicates the batch sets or deletes, sorted.
	Preds []string
	// Subjects are the UIDs of the nodes the batch changes, sorted.
	Subjects []uint64
	Stats    Stats
	created  []string
	bound    map[string]uint64
}

// Prepare evaluates muts in order (each one's deletions, then its sets) at
// snap as one transaction would, without committing. Blank nodes are shared
// by the whole batch (as in one Dgraph request) and take their UIDs from
// memo (nil: a fresh one). Bad input fails as Mutate does.
func (g *Graph) Prepare(ctx context.Context, snap engineapi.Snapshot, muts []Mutation, memo *Memo) (*Prepared, error) {
	if memo == nil {
		memo = NewMemo()
	}
	for _, m := range muts {
		if err := checkMutation(m); err != nil {
			return nil, err
		}
	}
	return g.prepare(ctx, snap, muts, MutateOptions{Alloc: g.alloc}, &memo.m)
}

// Commit commits p with the extra reads a transaction's queries made (at
// p.Snapshot, or at any snapshot: each read is validated against the
// present). A conflict answers an error for which Retryable is true: the
// whole transaction must be run again, at a new snapshot.
func (g *Graph) Commit(ctx context.Context, p *Prepared, extra []txn.Read) (*Result, error) {
	return g.commitPrepared(ctx, p, extra, MutateOptions{})
}

// Retryable reports whether err is a race worth running the transaction
// again for: a conflict, an index vertex created concurrently, an
// overloaded engine or a snapshot garbage-collected under it.
func Retryable(err error) bool { return retryable(err) }

// SubstituteBlanks returns muts with every blank node replaced by the UID
// uids gives it (uids as in Prepared.UIDs), so that a transaction can keep
// its mutations without their blank nodes: blank nodes are scoped to one
// request, and a later request's _:x is another node.
func SubstituteBlanks(muts []Mutation, uids map[string]string) ([]Mutation, error) {
	sub := func(t rdf.Term) (rdf.Term, error) {
		if t.Kind != rdf.Blank {
			return t, nil
		}
		s, ok := uids[t.Name]
		if !ok {
			return t, fmt.Errorf("dgraph: blank node _:%s has no UID", t.Name)
		}
		u, err := ParseUID(s)
		if err != nil {
			return t, err
		}
		return rdf.Term{Kind: rdf.UID, UID: u}, nil
	}
	out := make([]Mutation, len(muts))
	for i, m := range muts {
		for j, quads := range [][]rdf.NQuad{m.Set, m.Del} {
			cp := slices.Clone(quads)
			for k := range cp {
				var err error
				if cp[k].Subject, err = sub(cp[k].Subject); err != nil {
					return nil, err
				}
				if cp[k].Object, err = sub(cp[k].Object); err != nil {
					return nil, err
				}
			}
			if j == 0 {
				out[i].Set = cp
			} else {
				out[i].Del = cp
			}
		}
	}
	return out, nil
}

func checkMutation(m Mutation) error {
	for i := range m.Del {
		if err := checkQuad(&m.Del[i], true); err != nil {
			return fmt.Errorf("delete quad %d (%s): %w", i+1, m.Del[i].String(), err)
		}
	}
	for i := range m.Set {
		if err := checkQuad(&m.Set[i], false); err != nil {
			return fmt.Errorf("set quad %d (%s): %w", i+1, m.Set[i].String(), err)
		}
	}
	return nil
}

// prepare is one attempt at muts at snap: resolve every term of the batch,
// apply each mutation in order, derive the internal writes.
func (g *Graph) prepare(ctx context.Context, snap engineapi.Snapshot, muts []Mutation, o MutateOptions, mem *memo) (*Prepared, error) {
	st, err := g.schemaAt(ctx, snap)
	if err != nil {
		return nil, err
	}
	a := &attempt{g: g, ctx: ctx, snap: snap, st: st, o: o, mem: mem, nodes: map[uint64]*node{},
		terms: map[termKey]*node{}, preds: map[string]schema.Predicate{}, added: map[string]schema.Predicate{},
		reads: []txn.Read{st.read}, bound: map[string]uint64{}}
	var all Mutation
	for _, m := range muts {
		all.Set = append(all.Set, m.Set...)
		all.Del = append(all.Del, m.Del...)
	}
	if err := a.resolve(all); err != nil {
		return nil, err
	}
	preds := map[string]bool{}
	for i, m := range muts {
		for j := range m.Del {
			if err := a.applyDel(&m.Del[j]); err != nil {
				return nil, fmt.Errorf("%sdelete quad %d (%s): %w", mutationNo(i, len(muts)), j+1, m.Del[j].String(), err)
			}
			preds[m.Del[j].Predicate] = true
		}
		for j := range m.Set {
			if err := a.applySet(&m.Set[j]); err != nil {
				return nil, fmt.Errorf("%sset quad %d (%s): %w", mutationNo(i, len(muts)), j+1, m.Set[j].String(), err)
			}
			preds[m.Set[j].Predicate] = true
		}
	}
	if err := a.applyXIDs(); err != nil {
		return nil, err
	}
	a.stats.Quads = len(all.Set) + len(all.Del)
	ops, created, err := a.build()
	if err != nil {
		return nil, err
	}
	reads := dedupeReads(a.reads)
	if pl, ok := g.db.(*placedAPI); ok { // the placement's own reads and operations, at snap
		var placed []string
		if reads, ops, placed, err = pl.translate(ctx, snap, reads, ops); err != nil {
			return nil, err
		}
		created = append(created, placed...)
	}
	p := &Prepared{Snapshot: snap, Reads: reads, Ops: ops, UIDs: map[string]string{},
		Stats: a.stats, created: created, bound: a.bound}
	if o.Blanks == nil {
		for name, u := range mem.blanks {
			p.UIDs[name] = FormatUID(u)
		}
	}
	delete(preds, rdf.Star)
	p.Preds = slices.Sorted(maps.Keys(preds))
	for uid, n := range a.nodes {
		if n.create || n.props != nil || len(n.next) > 0 {
			p.Subjects = append(p.Subjects, uid)
		}
	}
	slices.Sort(p.Subjects)
	return p, nil
}

func mutationNo(i, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("mutation %d: ", i+1)
}

// commitPrepared commits p's operations with its reads and extra.
func (g *Graph) commitPrepared(ctx context.Context, p *Prepared, extra []txn.Read, o MutateOptions) (*Result, error) {
	res := &Result{UIDs: p.UIDs, Stats: p.Stats}
	if len(p.Ops) == 0 { // nothing to write: the reads all happened at one snapshot
		res.Snapshot = p.Snapshot
		return res, nil
	}
	if len(p.Ops) > txn.OpsMax {
		return nil, fmt.Errorf("%w: the mutation needs %d operations, at most %d fit in one transaction (split it)",
			txn.ErrTooLarge, len(p.Ops), txn.OpsMax)
	}
	reads := p.Reads
	if len(extra) > 0 {
		reads = dedupeReads(append(slices.Clone(extra), p.Reads...))
	}
	cr, err := g.db.Commit(ctx, reads, p.Ops)
	if errors.Is(err, txn.ErrInvalid) || errors.Is(err, engineapi.ErrBadRequest) {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err) // a value the engine refuses (too large)
	}
	if err != nil {
		return nil, err
	}
	g.known.add(p.created...)
	if o.XIDs != nil {
		o.XIDs.addAll(p.bound)
	}
	res.Snapshot = cr.Snapshot
	res.Stats.Ops = len(p.Ops)
	return res, nil
}
