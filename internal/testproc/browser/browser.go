// Package browser gives tests a real headless browser: Debian's chromium
// (installed with apt-get when missing and the test runs as root, as CI
// does), a chromedp context bound to the test, viewport screenshots and a
// directory to keep them in.
package browser

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-db/weft/internal/testproc"
)

// ChromiumPath is where Debian's chromium package puts the browser.
const ChromiumPath = "/usr/bin/chromium"

// Chromium returns Debian's chromium, installing the package with apt-get
// when it is missing and the test runs as root; it fails the test
// otherwise, saying how to install it (a missing browser is never a skip).
func Chromium(t testing.TB) string {
	t.Helper()
	return testproc.DebianPackage(t, ChromiumPath, "chromium")
}

// New starts the browser at path (1280×900, no sandbox, no GPU) and
// returns a chromedp context for it that ends after timeout or with the
// test, the browser stopped.
func New(t testing.TB, path string, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancel()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

// OutDir is where a test's screenshots go: $WEFT_TEST_OUT/sub, else
// out/sub at the repository root (git-ignored), made if missing.
func OutDir(t testing.TB, sub string) string {
	t.Helper()
	root := os.Getenv("WEFT_TEST_OUT")
	if root == "" {
		root = filepath.Join(testproc.RepoRoot(t), "out")
	}
	dir, err := filepath.Abs(filepath.Join(root, sub))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Shot saves a screenshot of the viewport as dir/name. The viewport only:
// a full-page capture changes the device metrics, after which the mouse
// misses a canvas.
func Shot(dir, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var png []byte
		if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), png, 0o644)
	})
}

// Wait polls the JavaScript expression until it is true (20 s at most).
func Wait(expr string) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second))
}
