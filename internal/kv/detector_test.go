package kv

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/vclock"
)

const mutexSpec = `{"servers": 3, "predicates": [
  {"name": "both-in-cs", "type": "conjunctive",
   "clauses": [{"vars": [{"server": 1, "key": "cs0", "value": 1}, {"server": 2, "key": "cs1", "value": 1}]}]}]}`

// TestDetectorSeesReplicaPuts (§V, Fig. 5): the replica's hook hands each
// applied PUT to the detector; a state in which the local part of ¬P held
// becomes a candidate when the next relevant PUT ends it, with its HVC
// interval and the predicate's values; irrelevant keys produce nothing.
func TestDetectorSeesReplicaPuts(t *testing.T) {
	spec, err := monitor.ParseJSON([]byte(mutexSpec))
	if err != nil {
		t.Fatal(err)
	}
	det, err := NewDetector(spec, 1, vclock.HVC{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r := testReplica(t, vfs.NewMem(), det) // server 1 of 3
	defer r.Close()
	put := func(key, val string, v kvcore.Version) vclock.HVC {
		t.Helper()
		_, at, err := r.Put(key, kvcore.Sibling{Version: v, Value: []byte(val)}, vclock.HVC{})
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	put("other", "1", ver(1, 1))
	enter := put("cs0", "1", ver(1, 2))
	if cs, _ := det.Candidates(0, 10); len(cs) != 0 {
		t.Fatalf("candidate before the state ended: %v", cs)
	}
	leave := put("cs0", "0", ver(1, 3))
	cs, missed := det.Candidates(0, 10)
	if len(cs) != 1 || missed != 0 {
		t.Fatalf("candidates %v (missed %d)", cs, missed)
	}
	c := cs[0]
	if c.Index != 1 || c.Predicate != 0 || c.Candidate.Server != 1 || c.Candidate.Values[0] != "1" ||
		vclock.CompareHVC(c.Candidate.Start, enter) != vclock.Equal || vclock.CompareHVC(c.Candidate.End, leave) != vclock.Equal {
		t.Fatalf("candidate %+v, want [%s, %s) with cs0=1", c, enter, leave)
	}
	// Heartbeats send the current state whatever it holds; the buffer keeps
	// the latest 2 and reports what a slow reader missed.
	for range 3 {
		r.Stamp(det.Flush)
	}
	cs, missed = det.Candidates(1, 10)
	if len(cs) != 2 || cs[0].Index != 3 || missed != 1 {
		t.Fatalf("after flushes: %v, missed %d", cs, missed)
	}
	if st := det.Stats(); st.Emitted != 4 || st.Dropped != 2 || st.Errors != 0 {
		t.Fatalf("stats %+v", st)
	}
}
