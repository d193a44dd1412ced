package kv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// A watcher that survives its own restart (WatcherConfig.DataDir).
//
// The monitors' state is not stored: it is rebuilt by replaying what the
// servers still retain. Every fetcher of a watcher starts at candidate
// index 0 of each server's current incarnation, so a restarted watcher
// steps, per server, the same candidate sequence an uninterrupted one
// stepped (the detectors' buffers keep the last CandidatesMax candidates;
// if older ones were dropped, the restarted watcher counts them in Missed
// and a violation needing them can be missed). What is stored is what the
// replay must not repeat: the identity of every violation reported — its
// predicate, clause and cut (per state: server, server incarnation,
// generation, state number) — with the reports themselves, the next
// report id and the rollback generation. A violation is written to the
// state file (fsynced, replaced atomically) before it is listed, logged
// or rolled back, so after a crash it is either in the file (and listed
// again from it, never re-reported) or was reported nowhere (and the
// replay finds it again): each violation whose cut the replay finds again
// is reported exactly once. Replayed detections whose identity is stored
// are counted in WatcherStats.Duplicates and dropped.
//
// Limits: the identities kept are the last ReportedMax (older ones could
// be reported again if the servers still retained their candidates); a
// replay with a different interleaving of servers' pages may find a
// violation through another cut than the first run did — that report is
// new by identity and is listed again (a duplicate not identified as
// such). A replayed violation of an older generation than the one stored
// is reported but never rolled back (the store has moved on since). A
// server restarted while the watcher was down numbers its candidates
// afresh: the violations among its previous incarnation's candidates that
// the watcher had not yet seen are lost (as they are for a running
// watcher, whose monitors reset on a server restart).

// watcherStateFile is the state's file name in DataDir.
const watcherStateFile = "monitor-state.json"

// ReportedMax bounds the violation identities a watcher keeps.
const ReportedMax = 1 << 16

// watcherState is the stored state.
type watcherState struct {
	NextID     uint64            `json:"next_id"`
	Gen        uint64            `json:"gen"`
	Violations uint64            `json:"violations"`
	Reported   []string          `json:"reported"` // oldest first, the last ReportedMax
	Reports    []ViolationReport `json:"reports"`  // the last ViolationsKept
}

// violationKey names a violation by its predicate, clause and cut.
func violationKey(v monitor.Violation, gen uint64, boots []uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%d", v.Name, v.Clause)
	for _, c := range v.Cut {
		boot := uint64(0)
		if c.Server >= 0 && c.Server < len(boots) {
			boot = boots[c.Server]
		}
		fmt.Fprintf(&b, "|%d:%d:%d:%d", c.Server, boot, gen, c.Seq)
	}
	return b.String()
}

// loadState reads the stored state (none: a fresh start).
func (w *Watcher) loadState() error {
	if w.cfg.DataDir == "" {
		return nil
	}
	if err := os.MkdirAll(w.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("kv: watcher: data dir: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(w.cfg.DataDir, watcherStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv: watcher: %w", err)
	}
	var st watcherState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%w: watcher state %s: %v", kvcore.ErrCorrupt, watcherStateFile, err)
	}
	w.nextID = max(st.NextID, 1)
	w.startGen = st.Gen
	w.stats.Gen = st.Gen
	w.stats.Violations = st.Violations
	w.viols = st.Reports
	for _, k := range st.Reported {
		w.rememberLocked(k)
	}
	return nil
}

// rememberLocked adds a violation identity, forgetting the oldest beyond
// ReportedMax. Caller holds mu (or owns w before Start).
func (w *Watcher) rememberLocked(k string) {
	if w.reported == nil {
		w.reported = map[string]bool{}
	}
	w.reported[k] = true
	w.reportedOrder = append(w.reportedOrder, k)
	if len(w.reportedOrder) > ReportedMax {
		delete(w.reported, w.reportedOrder[0])
		w.reportedOrder = w.reportedOrder[1:]
	}
}

// saveStateLocked writes the state atomically and durably. Caller holds mu.
func (w *Watcher) saveStateLocked(gen uint64) error {
	if w.cfg.DataDir == "" {
		return nil
	}
	st := watcherState{NextID: w.nextID, Gen: gen, Violations: w.stats.Violations, Reported: w.reportedOrder, Reports: w.viols}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	path := filepath.Join(w.cfg.DataDir, watcherStateFile)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(w.cfg.DataDir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
