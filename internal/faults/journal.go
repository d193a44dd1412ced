package faults

import (
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"time"
)

// journal records the nemesis's actions as JSON lines in Jepsen's shape
// ({"type":"info","process":"nemesis","f":…,"value":…,"time":…}), with
// times in nanoseconds since the run started, the same clock as the
// histories. Safe for concurrent use.
type journal struct {
	start time.Time
	log   *slog.Logger

	mu      sync.Mutex
	entries []journalEntry
}

type journalEntry struct {
	Type    string `json:"type"`
	Process string `json:"process"`
	F       string `json:"f"`
	Value   string `json:"value"`
	Time    int64  `json:"time"`
}

func (j *journal) note(f, value string) {
	e := journalEntry{Type: "info", Process: "nemesis", F: f, Value: value, Time: time.Since(j.start).Nanoseconds()}
	j.mu.Lock()
	j.entries = append(j.entries, e)
	j.mu.Unlock()
	j.log.Info("nemesis", "f", f, "value", value)
}

// write saves the journal to path.
func (j *journal) write(path string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, e := range j.entries {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
