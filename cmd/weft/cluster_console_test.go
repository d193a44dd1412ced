package main

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-db/weft/internal/launch"
	"github.com/weft-db/weft/internal/testproc/browser"
)

// checkConsoleClusterView opens the web console of the first gatekeeper
// of a `weft cluster up` in headless Chromium, switches to the Cluster
// view and checks it against the launcher's state: every gatekeeper and
// shard is a member holding a slot at its address, and each gatekeeper's request
// rate (read from that gatekeeper's own /metrics) is above zero while the
// test sends requests to the other gatekeepers. It saves the view as
// cluster-coordinated.png in browser.OutDir(t, "console").
func checkConsoleClusterView(t *testing.T, gks, shards []*launch.Proc) {
	t.Helper()
	chromium := browser.Chromium(t)
	out := browser.OutDir(t, "console")
	ctx := browser.New(t, chromium, 90*time.Second)

	// Requests to every other gatekeeper meanwhile, so that each one's
	// rate is measured from its own counters.
	load, stop := context.WithCancel(context.Background())
	defer stop()
	for _, p := range gks[1:] {
		go func() {
			for load.Err() == nil {
				if resp, err := http.Get("http://" + p.HTTPAddr + "/v1/status"); err == nil {
					resp.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	var rows [][]string
	var mode string
	err := chromedp.Run(ctx,
		chromedp.Navigate("http://"+gks[0].HTTPAddr+"/"),
		chromedp.Click("#nav-cluster", chromedp.ByQuery),
		browser.Wait(`window.weftConsole.samples >= 3 && window.weftConsole.cluster &&
			[...document.querySelectorAll("#members tbody tr")].filter((tr) => tr.cells[3].textContent === "slot").length >= `+
			strconv.Itoa(len(gks)+len(shards))+` &&
			[...document.querySelectorAll("#members tbody tr")].filter((tr) => tr.cells[2].textContent === "gatekeeper" && Number(tr.cells[8].textContent) > 0).length === `+
			strconv.Itoa(len(gks))),
		chromedp.Evaluate(`[...document.querySelectorAll("#members tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent))`, &rows),
		chromedp.Text("#cluster-summary", &mode, chromedp.ByQuery),
		browser.Shot(out, "cluster-coordinated.png"),
	)
	if err != nil {
		_ = chromedp.Run(ctx, browser.Shot(out, "cluster-coordinated-failure.png"))
		t.Fatalf("console cluster view on %s: %v (members %q; screenshot in %s)", gks[0].Name, err, rows, out)
	}
	byAddr := map[string][]string{}
	for _, r := range rows {
		byAddr[r[5]] = r
	}
	for _, p := range append(append([]*launch.Proc{}, gks...), shards...) {
		r, ok := byAddr[p.Addr]
		if !ok {
			t.Errorf("the console lists no member at %s's address %s: %q", p.Name, p.Addr, rows)
			continue
		}
		if r[2] != p.Role || r[3] != "slot" {
			t.Errorf("%s's row %q: want a %s holding a slot", p.Name, r, p.Role)
		}
	}
	t.Logf("console cluster view (%s): %d members; screenshot in %s", mode, len(rows), out)
}
