package api

import (
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/wire/apicode"
)

// Bounds of the error log: every line it writes is within a fixed budget
// per window.
const (
	// errLogWindow is the window of the budgets.
	errLogWindow = 10 * time.Second
	// abortsMin is the aborts in a window above which the window's summary
	// is logged (at most one line per window).
	abortsMin = 10
	// errLinesMax is the other errors logged one by one per window; the
	// rest are counted in one line when the window ends.
	errLinesMax = 5
	// reasonsMax bounds the distinct abort reasons counted per window
	// (the rest count as "other"); reasonBytesMax a reason's length.
	reasonsMax, reasonBytesMax = 16, 120
)

// errorLog logs the errors the API answers to clients, rate-limited:
// aborts (ABORTED) as one INFO line per window saying how many and the
// top reason, when more than abortsMin happened; other errors as WARN
// lines with the code, errLinesMax per window, then one line counting
// those not logged. A window's summaries are written by the first answer
// after it ends. Cancelled requests are not logged. Safe for concurrent
// use; a nil *errorLog logs nothing.
type errorLog struct {
	log *slog.Logger
	now func() time.Time

	mu         sync.Mutex
	start      time.Time      // the window's
	aborts     int            // in the window
	reasons    map[string]int // aborts by reason (at most reasonsMax)
	errLines   int            // other errors logged in the window
	suppressed int            // other errors not logged in the window
}

func newErrorLog(log *slog.Logger, now func() time.Time) *errorLog {
	return &errorLog{log: log, now: now, start: now(), reasons: map[string]int{}}
}

// answered records one answer to op with code and err (OK: nothing).
func (l *errorLog) answered(api, op string, code apicode.Code, err error) {
	if l == nil || err == nil || code == apicode.CodeOK || code == apicode.CodeCancelled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= errLogWindow {
		l.flush(now)
	}
	if code == apicode.CodeAborted {
		l.aborts++
		r := err.Error()
		if len(r) > reasonBytesMax {
			r = r[:reasonBytesMax]
		}
		if _, ok := l.reasons[r]; !ok && len(l.reasons) >= reasonsMax-1 { // one left for "other"
			r = "other"
		}
		l.reasons[r]++
		return
	}
	if l.errLines >= errLinesMax {
		l.suppressed++
		return
	}
	l.errLines++
	l.log.Warn("error answered", "api", api, "op", op, "code", string(code), "err", err.Error())
}

// flush writes the ended window's summaries and starts a new window at now.
func (l *errorLog) flush(now time.Time) {
	d := now.Sub(l.start).Round(time.Second)
	if l.aborts > abortsMin {
		top, n := topReason(l.reasons)
		l.log.Info("aborts", "count", l.aborts, "in", d.String(), "top_reason", top, "top_reason_count", n)
	}
	if l.suppressed > 0 {
		l.log.Warn("errors answered, not logged one by one", "count", l.suppressed, "in", d.String())
	}
	l.start, l.aborts, l.errLines, l.suppressed = now, 0, 0, 0
	clear(l.reasons)
}

// topReason is the most frequent reason (ties: the first in order).
func topReason(reasons map[string]int) (string, int) {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	top, n := "", 0
	for _, k := range keys {
		if reasons[k] > n {
			top, n = k, reasons[k]
		}
	}
	return top, n
}
