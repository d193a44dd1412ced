// Command firealarm demonstrates the CATOCS fire-alarm and shop-floor
// examples as the Kronos paper answers them (§3.4): observers that receive
// "fire", "fire out", "start" and "stop" in different, delayed orders all
// reach the same, correct state by ordering what they hold through Kronos,
// while trusting arrival order leaves fires burning.
//
//	go run ./examples/firealarm [--kronos host:port] [--observers 4] [--seed 1]
//
// Without --kronos it starts an in-process replica in a temporary directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weft-db/weft/examples/firealarm/plant"
	"github.com/weft-db/weft/examples/internal/exkronos"
)

func main() {
	addr := flag.String("kronos", "", "Kronos address (default: start an in-process replica)")
	observers := flag.Int("observers", 4, "observers (the first one's link delivers fire alarms late)")
	seed := flag.Uint64("seed", 1, "seed for delays and controllers")
	flag.Parse()
	cfg := plant.Config{Observers: *observers, LaggingObservers: 1, Seed: *seed}
	if err := run(os.Stdout, *addr, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "firealarm:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, addr string, cfg plant.Config) error {
	addr, stop, err := exkronos.Resolve(addr)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	res, err := plant.Run(ctx, addr, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Kronos at %s: %d messages from sensors, extinguisher, fail-safe and controllers in %v\n\n",
		addr, len(res.Issued), time.Since(start).Round(time.Millisecond))

	lag := res.Observers[0]
	z := plant.Zone(0)
	fmt.Fprintf(w, "%s's link delivers fire alarms late. What it got for %s, by arrival:\n  %s\n",
		lag.Name, z, history(onObject(lag.Arrivals(), z)))
	fmt.Fprintf(w, "and in Kronos order (%d of its arrival-order preferences reversed):\n  %s\n\n",
		lag.Reversals, history(lag.View(z)))

	fmt.Fprintln(w, "final state, ordered by Kronos:")
	for _, o := range res.Observers {
		fmt.Fprintf(w, "  %-11s %s   (fire outs placed before their fire: %d)\n", o.Name, states(o.State()), o.OutBeforeFire)
	}
	fmt.Fprintln(w, "final state, trusting arrival order:")
	for _, o := range res.Observers {
		fmt.Fprintf(w, "  %-11s %s\n", o.Name, states(o.ArrivalState()))
	}
	for _, o := range res.Observers[1:] {
		if !maps.Equal(o.State(), lag.State()) {
			return fmt.Errorf("%s and %s disagree", o.Name, lag.Name)
		}
	}
	return nil
}

func onObject(ms []plant.Msg, obj string) []plant.Msg {
	var out []plant.Msg
	for _, m := range ms {
		if m.Object == obj {
			out = append(out, m)
		}
	}
	return out
}

func history(ms []plant.Msg) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString(" → ")
		}
		fmt.Fprintf(&b, "%s#%d", m.Kind, m.Event)
	}
	return b.String()
}

// states prints zones then machines, shortened: z0=safe … m0.1=running.
func states(st map[string]string) string {
	short := strings.NewReplacer("zone-", "z", "machine-", "m")
	keys := slices.Sorted(maps.Keys(st))
	slices.SortStableFunc(keys, func(a, b string) int {
		return strings.Compare(b[:1], a[:1]) // "zone-" before "machine-"
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, short.Replace(k)+"="+st[k])
	}
	return strings.Join(parts, " ")
}
