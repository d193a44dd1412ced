package faults

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every Config.Validate error.
var ErrInvalid = errors.New("faults: invalid config")

// Workload names.
const (
	WorkloadListAppend = "list-append"
	WorkloadRWRegister = "rw-register"
	WorkloadBank       = "bank"
	WorkloadRing       = "ring"
	WorkloadSetFull    = "set-full"
	WorkloadSideband   = "sideband"
)

// AllWorkloads lists every workload in the order they are reported.
var AllWorkloads = []string{WorkloadListAppend, WorkloadRWRegister, WorkloadBank, WorkloadRing, WorkloadSetFull, WorkloadSideband}

// AllNemeses lists every fault kind.
var AllNemeses = []FaultKind{FaultKill, FaultPause, FaultPartition, FaultClog}

// Config describes one run. DefaultConfig fills every field; Validate checks
// them.
type Config struct {
	// Duration is the whole workload time: the fault phase plus the healed
	// phase (setup, final reads and checking come on top; so does a last
	// fault's recovery or the healing when they run past the fault phase:
	// the healed phase starts once every fault is undone). Default 60s.
	Duration time.Duration
	// HealedPhase is the fault-free time at the end during which every client
	// must complete an operation. 0: a tenth of Duration, between 8s and 60s.
	HealedPhase time.Duration
	// Clients is the number of concurrent clients per workload, each with its
	// own connection (a sideband client is a writer and a reader). Default 3.
	Clients int
	// Workloads to run, from AllWorkloads. Default all.
	Workloads []string
	// Nemeses are the fault kinds to inject, from AllNemeses; empty runs
	// without faults. Default all.
	Nemeses []FaultKind
	// Seed seeds the fault plan and the clients' choices.
	Seed uint64
	// OutDir receives the histories, the report, the logs and (while the run
	// lasts) the server's data directory. Required.
	OutDir string
	// Bin is the weft binary to run as `weft serve`. Required.
	Bin string
	// Adya is the adya binary; "" looks for adya on PATH and in
	// ~/.cargo/bin; "none" skips the cross-check.
	Adya string
	// KeepData keeps the server's data directory after a valid run (it is
	// always kept after an invalid one).
	KeepData bool
	// Rate bounds each client goroutine's operations per second (0: as fast
	// as it can), which bounds the histories' size. Default 40.
	Rate float64
	// OpTimeout bounds one operation, retries of aborted attempts included.
	// Default 4s.
	OpTimeout time.Duration
	// AttemptsMax bounds the attempts of one operation whose attempts abort
	// (ABORTED, SNAPSHOT_TOO_OLD, OVERLOADED). Default 5.
	AttemptsMax int
	// Timing shapes the fault plan.
	Timing Timing
	// ReadyTimeout bounds a server start or restart (recovery included).
	// Default 60s.
	ReadyTimeout time.Duration
	// Sizes of the workloads' key spaces.
	Sizes Sizes
	// Cluster, when set, runs the workloads against a cluster of real
	// processes started by `weft cluster up` instead of one `weft serve`
	// (cluster.go), and Nemeses are then cluster fault kinds
	// (AllClusterNemeses). nil: one server behind the fault proxy.
	Cluster *ClusterConfig
	// Logger receives the harness's log (faults, restarts); nil discards.
	Logger *slog.Logger
	// Progress receives a status line every ProgressEvery; nil: none.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Timing bounds the fault plan: each fault lasts [FaultMin, FaultMax], each
// quiet gap before a fault [QuietMin, QuietMax], uniformly drawn.
type Timing struct {
	FaultMin, FaultMax time.Duration
	QuietMin, QuietMax time.Duration
}

// Sizes are the workloads' key-space sizes.
type Sizes struct {
	// ListKeys is the number of list-append keys in use at once; a key is
	// retired after ListAppendsMax appends and replaced by a fresh one.
	ListKeys, ListAppendsMax int
	// TxnMopsMax bounds the micro-operations of a list-append or
	// rw-register transaction (1..TxnMopsMax).
	TxnMopsMax int
	// RegisterKeys is the number of rw-register keys.
	RegisterKeys int
	// BankAccounts accounts hold BankBalance each at the start.
	BankAccounts int
	BankBalance  int64
	// RingSize is the number of ring vertices (≥ 4).
	RingSize int
	// SetGeneration is the number of set-full elements per root vertex; a
	// read returns one root's elements.
	SetGeneration int
}

// DefaultConfig returns the documented defaults; OutDir and Bin are empty.
func DefaultConfig() Config {
	return Config{
		Duration:    60 * time.Second,
		Clients:     3,
		Workloads:   slices.Clone(AllWorkloads),
		Nemeses:     slices.Clone(AllNemeses),
		Rate:        50,
		OpTimeout:   4 * time.Second,
		AttemptsMax: 5,
		Timing: Timing{FaultMin: 2 * time.Second, FaultMax: 6 * time.Second,
			QuietMin: 2 * time.Second, QuietMax: 5 * time.Second},
		ReadyTimeout: 60 * time.Second,
		Sizes: Sizes{ListKeys: 8, ListAppendsMax: 64, TxnMopsMax: 4, RegisterKeys: 8,
			BankAccounts: 8, BankBalance: 100, RingSize: 8, SetGeneration: 500},
		ProgressEvery: 10 * time.Second,
	}
}

// healed returns the healed phase's length.
func (c Config) healed() time.Duration {
	if c.HealedPhase > 0 {
		return c.HealedPhase
	}
	return min(max(c.Duration/10, 8*time.Second), 60*time.Second)
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Duration <= 0 || c.Duration > 7*24*time.Hour:
		return bad("Duration %v, want (0, 168h]", c.Duration)
	case c.healed() >= c.Duration:
		return bad("HealedPhase %v leaves no fault phase in Duration %v", c.healed(), c.Duration)
	case c.Clients < 1 || c.Clients > 256:
		return bad("Clients %d, want 1..256", c.Clients)
	case len(c.Workloads) == 0:
		return bad("no workload")
	case c.OutDir == "" || c.Bin == "":
		return bad("OutDir and Bin are required")
	case c.Rate < 0 || c.Rate > 1e6:
		return bad("Rate %v, want 0..1e6", c.Rate)
	case c.OpTimeout <= 0 || c.AttemptsMax < 1 || c.AttemptsMax > 100 || c.ReadyTimeout <= 0:
		return bad("OpTimeout %v, AttemptsMax %d, ReadyTimeout %v", c.OpTimeout, c.AttemptsMax, c.ReadyTimeout)
	}
	for _, w := range c.Workloads {
		if !slices.Contains(AllWorkloads, w) {
			return bad("unknown workload %q (want %s)", w, strings.Join(AllWorkloads, ", "))
		}
	}
	if hasDup(c.Workloads) {
		return bad("a workload is listed twice")
	}
	kinds, want := AllNemeses, "kill, pause, partition, clog"
	if c.Cluster != nil {
		if err := c.Cluster.validate(); err != nil {
			return bad("%v", err)
		}
		kinds, want = AllClusterNemeses, clusterNemesesList
		if c.Cluster.Proxied {
			kinds = append(slices.Clone(kinds), LeaseNemeses...)
		}
	}
	for _, n := range c.Nemeses {
		if !slices.Contains(kinds, n) {
			return bad("unknown nemesis %q (want %s)", n, want)
		}
	}
	t := c.Timing
	if t.FaultMin <= 0 || t.FaultMax < t.FaultMin || t.QuietMin <= 0 || t.QuietMax < t.QuietMin {
		return bad("Timing %+v: want 0 < min <= max", t)
	}
	s := c.Sizes
	if s.ListKeys < 1 || s.ListAppendsMax < 1 || s.TxnMopsMax < 1 || s.RegisterKeys < 1 || s.BankAccounts < 2 ||
		s.BankBalance < 1 || s.RingSize < 4 || s.SetGeneration < 1 || s.SetGeneration > 10000 {
		return bad("Sizes %+v", s)
	}
	return nil
}

func hasDup[T comparable](xs []T) bool {
	seen := make(map[T]bool, len(xs))
	for _, x := range xs {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

// ParseWorkloads parses a comma-separated list ("all" is every workload).
func ParseWorkloads(s string) ([]string, error) {
	if strings.TrimSpace(s) == "all" {
		return slices.Clone(AllWorkloads), nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !slices.Contains(AllWorkloads, f) {
			return nil, fmt.Errorf("%w: unknown workload %q (want %s)", ErrInvalid, f, strings.Join(AllWorkloads, ","))
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no workload in %q", ErrInvalid, s)
	}
	return out, nil
}

// ParseNemeses parses a comma-separated list of fault kinds ("all", or
// "none" for no faults).
func ParseNemeses(s string) ([]FaultKind, error) {
	switch strings.TrimSpace(s) {
	case "all":
		return slices.Clone(AllNemeses), nil
	case "none", "":
		return nil, nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k := FaultKind(f)
		if !slices.Contains(AllNemeses, k) {
			return nil, fmt.Errorf("%w: unknown nemesis %q (want kill,pause,partition,clog)", ErrInvalid, f)
		}
		out = append(out, k)
	}
	return out, nil
}
