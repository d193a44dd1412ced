package kv

import (
	"fmt"
	"testing"

	"github.com/weft-db/weft/internal/monitor"
)

// TestWatcherStateRoundTrip: the violations a watcher reported, its next
// id and generation come back in a new watcher on the same DataDir, and a
// violation with a stored identity is a duplicate there.
func TestWatcherStateRoundTrip(t *testing.T) {
	sp, err := monitor.ParseJSON([]byte(`{"servers": 2, "predicates": [{"name": "xy", "type": "conjunctive",
  "clauses": [{"vars": [{"server": 0, "key": "x", "value": 1}, {"server": 1, "key": "y", "value": 1}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultWatcherConfig()
	cfg.Servers, cfg.Spec, cfg.DataDir = []string{"127.0.0.1:1", "127.0.0.1:2"}, sp, t.TempDir()
	w, err := NewWatcher(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := monitor.Violation{Name: "xy", Cut: []monitor.Candidate{{Server: 0, Seq: 3}, {Server: 1, Seq: 5}}, Since: 77}
	boots := []uint64{10, 20}
	if _, rolled := w.handleViolations([]monitor.Violation{v}, 2, boots); rolled {
		t.Fatal("rolled back without Rollback")
	}
	if _, _ = w.handleViolations([]monitor.Violation{v}, 2, boots); w.Stats().Duplicates != 1 || len(w.Violations()) != 1 {
		t.Fatalf("the same violation twice: %d duplicates, %d listed", w.Stats().Duplicates, len(w.Violations()))
	}
	w2, err := NewWatcher(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs := w2.Violations(); len(vs) != 1 || vs[0].ID != 1 || vs[0].Since != 77 {
		t.Fatalf("reloaded violations: %+v", vs)
	}
	if st := w2.Stats(); st.Violations != 1 || st.Gen != 2 {
		t.Fatalf("reloaded stats: %+v", st)
	}
	w2.handleViolations([]monitor.Violation{v}, 2, boots)
	if w2.Stats().Duplicates != 1 || len(w2.Violations()) != 1 {
		t.Fatal("a restarted watcher reported a stored violation again")
	}
	// Another incarnation of server 1: a new violation, id 2.
	w2.handleViolations([]monitor.Violation{v}, 2, []uint64{10, 21})
	if vs := w2.Violations(); len(vs) != 2 || vs[1].ID != 2 {
		t.Fatalf("after a new violation: %+v", vs)
	}
}

// TestWatcherStateBounded: at most ReportedMax identities are kept, the
// oldest forgotten first.
func TestWatcherStateBounded(t *testing.T) {
	w := &Watcher{}
	for i := range ReportedMax + 10 {
		w.rememberLocked(fmt.Sprint(i))
	}
	if len(w.reported) != ReportedMax || len(w.reportedOrder) != ReportedMax || w.reported["9"] || !w.reported["10"] {
		t.Fatalf("kept %d/%d identities", len(w.reported), len(w.reportedOrder))
	}
}
