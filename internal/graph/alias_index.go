package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weft-db/weft/internal/invariants"
	"github.com/weft-db/weft/internal/vclock"
)

// AliasIndex maps the aliases this partition owns (those that hash to it,
// wherever their vertex lives) to vertex handles, multi-versioned like the
// graph: a binding is created by Bind and deleted by Unbind, and an alias can
// be bound again after it was unbound. Like Graph it is not safe for
// concurrent use, except reads with reads.
//
// An alias's record outlives its bindings: the store keeps an unbound alias's
// last write for optimistic validation, so LastWrite keeps answering it.
type AliasIndex struct {
	cfg    Config
	stamps stampTable
	recs   map[string]*aliasRec
	dirty  []string
	low    vclock.Stamp
	live   int
}

type aliasRec struct {
	binds  []binding // apply order; at most one live (deleted == 0), the last
	writes []sid     // as vertex.writes
	dirty  bool
}

type binding struct {
	handle           string
	created, deleted sid
}

// NewAliasIndex returns an empty index; cfg supplies HandleLenMax and
// KeepHistory. It panics on an invalid Config.
func NewAliasIndex(cfg Config) *AliasIndex {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &AliasIndex{cfg: cfg, stamps: newStampTable(), recs: map[string]*aliasRec{}}
}

func (a *AliasIndex) check(alias, h string, w vclock.Stamp) error {
	if err := checkName("alias", alias, a.cfg.HandleLenMax); err != nil {
		return err
	}
	if err := checkName("vertex handle", h, a.cfg.HandleLenMax); err != nil {
		return err
	}
	return checkStamp(w)
}

func (a *AliasIndex) checkOrder(r *aliasRec, w vclock.Stamp) error {
	if last := lastOf(r.writes); last != 0 {
		if st := a.stamps.get(last); vclock.CompareStamps(w, st) == vclock.Before {
			return fmt.Errorf("%w: %s before %s", ErrStampOrder, w, st)
		}
	}
	return nil
}

func (r *aliasRec) liveBinding() *binding {
	if n := len(r.binds); n > 0 && r.binds[n-1].deleted == 0 {
		return &r.binds[n-1]
	}
	return nil
}

func (a *AliasIndex) touch(alias string, r *aliasRec, s sid) {
	if lastOf(r.writes) != s {
		r.writes = append(r.writes, s)
		a.stamps.ref(s)
	}
	if !r.dirty && !a.cfg.KeepHistory {
		r.dirty = true
		a.dirty = append(a.dirty, alias)
	}
}

// Bind binds alias to vertex handle h at W. The alias must not be bound.
func (a *AliasIndex) Bind(alias, h string, w vclock.Stamp) error {
	if err := a.check(alias, h, w); err != nil {
		return err
	}
	r := a.recs[alias]
	if r != nil {
		if b := r.liveBinding(); b != nil {
			return fmt.Errorf("%w: %q names vertex %q", ErrAliasExists, alias, b.handle)
		}
		if err := a.checkOrder(r, w); err != nil {
			return fmt.Errorf("alias %q: %w", alias, err)
		}
	} else {
		alias = strings.Clone(alias)
		r = &aliasRec{}
		a.recs[alias] = r
	}
	s := a.stamps.intern(w)
	r.binds = append(r.binds, binding{handle: strings.Clone(h), created: s})
	a.stamps.ref(s)
	a.touch(alias, r, s)
	a.live++
	a.checkAfter("bind")
	return nil
}

// Unbind unbinds alias, which must be bound to h, at W.
func (a *AliasIndex) Unbind(alias, h string, w vclock.Stamp) error {
	if err := a.check(alias, h, w); err != nil {
		return err
	}
	r := a.recs[alias]
	var b *binding
	if r != nil {
		b = r.liveBinding()
	}
	if b == nil || b.handle != h {
		return fmt.Errorf("%w: %q bound to %q", ErrAliasMissing, alias, h)
	}
	if err := a.checkOrder(r, w); err != nil {
		return fmt.Errorf("alias %q: %w", alias, err)
	}
	s := a.stamps.intern(w)
	b.deleted = s
	a.stamps.ref(s)
	a.touch(alias, r, s)
	a.live--
	a.checkAfter("unbind")
	return nil
}

// Load adds an alias record from the store at W: bound to h (created at W),
// or, with h empty, an unbound alias remembered for its last write. lastWrite
// zero means W. The alias must be new to the index.
func (a *AliasIndex) Load(alias, h string, lastWrite, w vclock.Stamp) error {
	if err := checkName("alias", alias, a.cfg.HandleLenMax); err != nil {
		return err
	}
	if err := checkStamp(w); err != nil {
		return err
	}
	if h != "" {
		if err := checkName("vertex handle", h, a.cfg.HandleLenMax); err != nil {
			return err
		}
	}
	if !lastWrite.IsZero() && vclock.CompareStamps(lastWrite, w) == vclock.After {
		return fmt.Errorf("%w: last write %s after load stamp %s", ErrInvalid, lastWrite, w)
	}
	if _, ok := a.recs[alias]; ok {
		return fmt.Errorf("%w: %q", ErrAliasExists, alias)
	}
	if lastWrite.IsZero() {
		lastWrite = w
	}
	alias = strings.Clone(alias)
	r := &aliasRec{}
	a.recs[alias] = r
	if h != "" {
		s := a.stamps.intern(w)
		r.binds = []binding{{handle: strings.Clone(h), created: s}}
		a.stamps.ref(s)
		a.live++
	}
	a.touch(alias, r, a.stamps.intern(lastWrite))
	a.checkAfter("load")
	return nil
}

func (a *AliasIndex) reader(r vclock.Stamp, ord Orderer) reader {
	checkWatermark(r, a.low)
	return reader{t: &a.stamps, r: r, ord: ord}
}

// Resolve returns the handle alias names at R.
func (a *AliasIndex) Resolve(alias string, r vclock.Stamp, ord Orderer) (string, bool) {
	rd := a.reader(r, ord)
	rec := a.recs[alias]
	if rec == nil {
		return "", false
	}
	var m memo
	for i := len(rec.binds) - 1; i >= 0; i-- {
		if b := &rec.binds[i]; m.visible(&rd, b.created, b.deleted) {
			return b.handle, true
		}
	}
	return "", false
}

// LastWrite returns the stamp of the latest Bind or Unbind of alias at or
// before R (zero: none), as Graph.LastWrite does for vertices.
func (a *AliasIndex) LastWrite(alias string, r vclock.Stamp, ord Orderer) vclock.Stamp {
	rd := a.reader(r, ord)
	rec := a.recs[alias]
	if rec == nil {
		return vclock.Stamp{}
	}
	for i := len(rec.writes) - 1; i >= 0; i-- {
		if rd.le(rec.writes[i]) {
			st := a.stamps.get(rec.writes[i])
			return vclock.Stamp{Clock: st.Clock.Clone(), Owner: st.Owner}
		}
	}
	return vclock.Stamp{}
}

// Len is the number of aliases bound at the latest stamp.
func (a *AliasIndex) Len() int { return a.live }

// Stamps is the number of interned stamps.
func (a *AliasIndex) Stamps() int { return a.stamps.live }

// Collect drops bindings unbound before the watermark and flattens old
// creation stamps, by the rules of Graph.Collect, and returns the number of
// bindings freed.
func (a *AliasIndex) Collect(watermark vclock.Stamp) (freed int) {
	if a.cfg.KeepHistory || watermark.IsZero() {
		return 0
	}
	if a.low.IsZero() || vclock.CompareStamps(watermark, a.low) != vclock.Before {
		a.low = vclock.Stamp{Clock: watermark.Clock.Clone(), Owner: watermark.Owner}
	}
	m := gcMemo{t: &a.stamps, w: watermark}
	keep := a.dirty[:0]
	for _, alias := range a.dirty {
		r := a.recs[alias]
		f, pending := a.collectRec(r, &m)
		freed += f
		r.dirty = pending
		if pending {
			keep = append(keep, alias)
		}
	}
	clear(a.dirty[len(keep):])
	a.dirty = keep
	if a.stamps.sparse() {
		a.stamps.compact(func(fn func(*sid)) {
			for _, r := range a.recs {
				for i := range r.binds {
					fn(&r.binds[i].created)
					fn(&r.binds[i].deleted)
				}
				for i := range r.writes {
					fn(&r.writes[i])
				}
			}
		})
	}
	a.checkAfter("collect")
	return freed
}

func (a *AliasIndex) collectRec(r *aliasRec, m *gcMemo) (freed int, pending bool) {
	n := 0
	for _, b := range r.binds {
		if m.before(b.deleted) {
			a.stamps.unref(b.created)
			a.stamps.unref(b.deleted)
			freed++
			continue
		}
		if m.atOrBefore(b.created) {
			a.stamps.unref(b.created)
			b.created = 0
		}
		pending = pending || b.created != 0 || b.deleted != 0
		r.binds[n] = b
		n++
	}
	clear(r.binds[n:])
	r.binds = shrinkOrNil(r.binds[:n])
	k := -1
	for i := len(r.writes) - 1; i > 0; i-- {
		if m.before(r.writes[i]) {
			k = i
			break
		}
	}
	if k > 0 {
		for _, s := range r.writes[:k] {
			a.stamps.unref(s)
		}
		r.writes = shrink(append(r.writes[:0], r.writes[k:]...))
	}
	return freed, pending || len(r.writes) > 1
}

func (a *AliasIndex) checkAfter(op string) {
	if !invariants.On {
		return
	}
	if err := a.CheckInvariants(); err != nil {
		panic("graph: alias index invariant broken after " + op + ": " + err.Error())
	}
}

// CheckInvariants verifies reference counts, at most one live binding per
// alias (the last), the write logs, the dirty list and the live count.
func (a *AliasIndex) CheckInvariants() error {
	refs := make([]uint32, len(a.stamps.ents))
	dirty := map[string]bool{}
	for _, al := range a.dirty {
		if dirty[al] || a.recs[al] == nil || !a.recs[al].dirty {
			return fmt.Errorf("dirty alias %q: duplicate, missing or not flagged", al)
		}
		dirty[al] = true
	}
	live := 0
	aliases := make([]string, 0, len(a.recs))
	for al := range a.recs {
		aliases = append(aliases, al)
	}
	slices.Sort(aliases) // report the same first error every time
	for _, al := range aliases {
		r := a.recs[al]
		if len(r.writes) == 0 || r.dirty != dirty[al] {
			return fmt.Errorf("alias %q: empty write log or dirty flag %v but listed %v", al, r.dirty, dirty[al])
		}
		for i, b := range r.binds {
			if b.deleted == 0 {
				if i != len(r.binds)-1 {
					return fmt.Errorf("alias %q: live binding not the last", al)
				}
				live++
			}
			if b.created != 0 {
				refs[b.created]++
			}
			if b.deleted != 0 {
				refs[b.deleted]++
			}
			pendingWork := b.created != 0 || b.deleted != 0
			if pendingWork && !r.dirty && !a.cfg.KeepHistory {
				return fmt.Errorf("alias %q: has work for Collect but is not dirty", al)
			}
		}
		for i, s := range r.writes {
			if s == 0 || (i > 0 && r.writes[i-1] == s) {
				return fmt.Errorf("alias %q: write log %v", al, r.writes)
			}
			refs[s]++
		}
	}
	if live != a.live {
		return fmt.Errorf("%d live bindings, counter says %d", live, a.live)
	}
	return checkStamps(&a.stamps, refs)
}
