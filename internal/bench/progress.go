package bench

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// NewBar returns a progress bar over max steps that draws on w, or one that
// draws nothing when w is nil (tests, and output that is not a terminal).
func NewBar(w io.Writer, max int64, desc string) *progressbar.ProgressBar {
	if w == nil {
		return progressbar.DefaultSilent(max, desc)
	}
	return progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		// Redrawing is cheap but not free; a benchmark's timed loop must not
		// pay for it, so callers also advance the bar outside timed sections.
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}
