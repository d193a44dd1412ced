package faults

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Recovery is one fault of a cluster process (a kill or a pause) and how
// long the cluster took to get over it, both measured from the fault's
// start: until every workload client completed an operation invoked after
// it (ClientsMs), and until the coordinator served an active configuration
// with every slot held (ConfigMs) — after a kill with the killed slot
// holder replaced, after a pause only once the process resumed. -1: not
// within the recovery timeout (Why says what was missing).
type Recovery struct {
	Fault   FaultKind `json:"fault"`
	Role    string    `json:"role"`
	Process string    `json:"process"`
	// Victim says which one: "leader", "follower", or the slot it held.
	Victim    string `json:"victim"`
	At        int64  `json:"at_ns"` // since the clients' start, the histories' clock
	ClientsMs int64  `json:"clients_ms"`
	ConfigMs  int64  `json:"config_ms"`
	Why       string `json:"why,omitempty"`
}

// Recovered reports whether both recoveries were seen.
func (r Recovery) Recovered() bool { return r.ClientsMs >= 0 && r.ConfigMs >= 0 }

func (r Recovery) String() string {
	ms := func(v int64) string {
		if v < 0 {
			return "not recovered"
		}
		return (time.Duration(v) * time.Millisecond).String()
	}
	verb := "kill -9"
	if isPause(r.Fault) {
		verb = "pause"
	} else if isIsolation(r.Fault) {
		verb = "partition:"
	}
	s := fmt.Sprintf("%s %s (%s): clients %s, configuration %s", verb, r.Process, r.Victim, ms(r.ClientsMs), ms(r.ConfigMs))
	if isIsolation(r.Fault) {
		s = fmt.Sprintf("%s %s: clients %s, configuration %s", verb, r.Process, ms(r.ClientsMs), ms(r.ConfigMs))
	}
	if r.Why != "" {
		s += " (" + r.Why + ")"
	}
	return s
}

// RecoverySummary sums up one fault kind's recoveries (one role's kills or
// pauses), in milliseconds, over the faults that recovered (Faults counts
// them all).
type RecoverySummary struct {
	Fault     FaultKind `json:"fault"`
	Role      string    `json:"role"`
	Faults    int       `json:"faults"`
	Recovered int       `json:"recovered"`
	Clients   Spread    `json:"clients_ms"`
	Config    Spread    `json:"config_ms"`
}

// Spread is the minimum, median and maximum of a set of figures.
type Spread struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
}

// spreadOf returns xs's spread (the median of an even count is the lower
// middle one: a figure that was measured). Zero for no figures.
func spreadOf(xs []int64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return Spread{Min: xs[0], Median: xs[(len(xs)-1)/2], Max: xs[len(xs)-1]}
}

// summarizeRecoveries groups recs by fault kind, in the order of
// AllClusterNemeses.
func summarizeRecoveries(recs []Recovery) []RecoverySummary {
	var out []RecoverySummary
	for _, k := range append(slices.Clone(AllClusterNemeses), LeaseNemeses...) {
		s := RecoverySummary{Fault: k, Role: roleOf(k)}
		var clients, conf []int64
		for _, r := range recs {
			if r.Fault != k {
				continue
			}
			s.Faults++
			if r.Recovered() {
				s.Recovered++
				clients, conf = append(clients, r.ClientsMs), append(conf, r.ConfigMs)
			}
		}
		if s.Faults > 0 {
			s.Clients, s.Config = spreadOf(clients), spreadOf(conf)
			out = append(out, s)
		}
	}
	return out
}

// recoveryTable renders the per-role summary and every kill.
func recoveryTable(recs []Recovery, sums []RecoverySummary) string {
	var b strings.Builder
	b.WriteString("recovery (ms, min/median/max; from the fault until every client's next success, and until the configuration is active with every slot held):\n")
	fmt.Fprintf(&b, "  %-17s %6s %9s  %-20s %-20s\n", "fault", "faults", "recovered", "clients", "configuration")
	for _, s := range sums {
		fmt.Fprintf(&b, "  %-17s %6d %9d  %-20s %-20s\n", s.Fault, s.Faults, s.Recovered, s.Clients, s.Config)
	}
	b.WriteString("faults:\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "  %7.1fs %s\n", float64(r.At)/1e9, r)
	}
	return b.String()
}

func (s Spread) String() string { return fmt.Sprintf("%d/%d/%d", s.Min, s.Median, s.Max) }
