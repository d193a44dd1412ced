package faults

import (
	"context"
	"time"

	"github.com/weft-db/weft/internal/check"
)

// sidebandNote is what a writer tells its reader: the key it appended to
// and the index of its acknowledged completion.
type sidebandNote struct {
	key   int64
	after int
}

// sideband checks out-of-band causality: client pair i is a writer (slot
// 2i) that appends to list-append keys sb/k and, once the append is
// acknowledged, hands the key to its reader (slot 2i+1) through a Go
// channel; the reader's next transaction reads the key and must contain
// the append. The history is also a list-append history and is checked as
// one.
type sideband struct {
	*listAppend
	notes []chan sidebandNote // by pair
}

func newSideband(h *harness) *sideband {
	s := &sideband{listAppend: newListAppend(h, "sb", WorkloadSideband)}
	for range h.cfg.Clients {
		s.notes = append(s.notes, make(chan sidebandNote, 1))
	}
	return s
}

func (s *sideband) workers() int { return 2 }

func (s *sideband) run(w *worker, slot int) {
	if slot%2 == 0 {
		s.write(w, s.notes[slot/2])
	} else {
		s.read(w, s.notes[slot/2])
	}
}

// write appends to one key at a time and tells the reader after each
// acknowledged append; it waits while the reader has not taken the last
// note, so the reader's next transaction is always the one that reads it.
func (s *sideband) write(w *worker, notes chan<- sidebandNote) {
	for !w.h.stopping() {
		s.mu.Lock()
		i := w.rng.IntN(len(s.active))
		k := s.active[i]
		m := s.appendTo(k)
		if s.appends[k] >= int64(s.h.cfg.Sizes.ListAppendsMax) {
			s.active[i] = s.fresh()
		}
		s.mu.Unlock()
		t := check.Txn{m}
		typ, idx := w.op(&s.rec, check.FTxn, t, nil, func(ctx context.Context) (any, check.Type, error) {
			return s.exec(ctx, w, t)
		})
		if typ != check.OK {
			continue
		}
		select {
		case notes <- sidebandNote{key: k, after: idx}:
		case <-w.h.stopCh:
			return
		}
	}
}

// read runs one read transaction of the noted key per note.
func (s *sideband) read(w *worker, notes <-chan sidebandNote) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !w.h.stopping() {
		var n sidebandNote
		select {
		case n = <-notes:
		case <-tick.C:
			continue
		}
		t := check.Txn{check.ReadList(n.key, nil)}
		w.op(&s.rec, check.FTxn, t, check.Ref(n.after), func(ctx context.Context) (any, check.Type, error) {
			return s.exec(ctx, w, t)
		})
	}
}

func (s *sideband) check() workloadCheck {
	wc := s.listAppend.check()
	res, err := check.CheckSideband(s.rec.History())
	wc.checks = append(wc.checks, checkOutcome{checker: "sideband", history: WorkloadSideband + ".jsonl", res: res, err: err})
	return wc
}
