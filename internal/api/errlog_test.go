package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/wire/apicode"
)

// TestErrorLogBudget: whatever the error rate, a window gets at most one
// aborts line (count and top reason), errLinesMax error lines with their
// code, and one line counting the rest.
func TestErrorLogBudget(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	l := newErrorLog(slog.New(slog.NewJSONHandler(&buf, nil)), func() time.Time { return now })
	for i := range 1000 {
		reason := "write conflict on v1"
		if i%3 == 0 {
			reason = fmt.Sprintf("read of v%d changed", i) // many distinct: bounded by reasonsMax
		}
		l.answered("grpc", "commit", apicode.CodeAborted, errors.New(reason))
		l.answered("http", "get_vertex", apicode.CodeUnavailable, errors.New("shard down"))
		l.answered("grpc", "run", apicode.CodeCancelled, errors.New("context canceled"))
		l.answered("grpc", "run", apicode.CodeOK, nil)
	}
	if len(l.reasons) > reasonsMax {
		t.Fatalf("%d reasons counted, at most %d", len(l.reasons), reasonsMax)
	}
	now = now.Add(errLogWindow)
	l.answered("grpc", "commit", apicode.CodeAborted, errors.New("x")) // ends the window
	var lines []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		lines = append(lines, m)
	}
	if len(lines) != errLinesMax+2 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), errLinesMax+2, buf.String())
	}
	for _, m := range lines[:errLinesMax] {
		if m["level"] != "WARN" || m["code"] != "UNAVAILABLE" || m["msg"] != "error answered" {
			t.Errorf("error line: %v", m)
		}
	}
	ab := lines[errLinesMax]
	if ab["msg"] != "aborts" || ab["level"] != "INFO" || ab["count"] != 1000.0 || ab["top_reason"] != "write conflict on v1" {
		t.Errorf("aborts line: %v", ab)
	}
	if s := lines[errLinesMax+1]; s["msg"] != "errors answered, not logged one by one" || s["count"] != float64(1000-errLinesMax) {
		t.Errorf("suppressed line: %v", s)
	}
	// A quiet window (a few aborts) logs nothing.
	buf.Reset()
	now = now.Add(errLogWindow)
	l.answered("grpc", "commit", apicode.CodeAborted, errors.New("x"))
	if buf.Len() != 0 {
		t.Errorf("a window of %d aborts logged: %s", 1, buf.String())
	}
	var nilLog *errorLog
	nilLog.answered("grpc", "commit", apicode.CodeAborted, errors.New("x")) // no panic
}
