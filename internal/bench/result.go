package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// SchemaVersion is bumped when a field of Result changes meaning.
const SchemaVersion = 1

// Result is one sub-benchmark's JSON document (bench/results/<suite>/<name>.json).
type Result struct {
	Benchmark string    `json:"benchmark"` // "kronos/query"
	Schema    int       `json:"schema"`
	Started   time.Time `json:"started"`
	Seconds   float64   `json:"seconds"` // wall time of the whole sub-benchmark
	Env       Env       `json:"env"`
	Params    any       `json:"params"`  // the workload's parameters
	Results   any       `json:"results"` // the measurements
	// Paper holds the Kronos paper's figures for the same experiment, and
	// Target the figures Weft aims for; neither is checked.
	Paper  map[string]any `json:"paper,omitempty"`
	Target map[string]any `json:"target,omitempty"`
	Notes  []string       `json:"notes,omitempty"`
	Plots  []string       `json:"plots"` // PNG files beside the JSON
}

// Env describes the machine and build a result was measured on.
type Env struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	MemTotal   string `json:"mem_total,omitempty"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute load averages when the
	// sub-benchmark started and ended: other work on the machine shows here.
	LoadAvgStart string `json:"load_avg_start,omitempty"`
	LoadAvgEnd   string `json:"load_avg_end,omitempty"`
	// CPUBusy and CPUSteal are the shares of the machine's CPU time, over
	// the run, that were busy and that the hypervisor gave to other guests
	// (SetCPUShares; benchmarks that record them).
	CPUBusy  float64 `json:"cpu_busy,omitempty"`
	CPUSteal float64 `json:"cpu_steal,omitempty"`
	Revision string  `json:"revision,omitempty"` // VCS revision of the binary, when stamped
	Modified bool    `json:"modified,omitempty"` // the work tree had changes
}

// CurrentEnv describes this process's machine and build.
func CurrentEnv() Env {
	e := Env{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel:   procField("/proc/cpuinfo", "model name"),
		MemTotal:   procField("/proc/meminfo", "MemTotal"),
		LoadAvgEnd: LoadAvg(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				e.Revision = s.Value
			case "vcs.modified":
				e.Modified = s.Value == "true"
			}
		}
	}
	return e
}

// procField returns the value of the first "key: value" line of a /proc
// file, or "" where there is none (other systems).
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// WriteJSON writes r to dir/name.json, indented, creating dir.
func WriteJSON(dir, name string, r *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode %s: %w", name, err)
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644)
}

// LoadAvg returns the 1, 5 and 15 minute load averages, or "" without /proc.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Finish stamps a run's result with its start, length and machine,
// and, when out is set, draws its plots and writes it as out/name.json;
// runErr (the run's own error) is returned with any error of those.
func Finish(res *Result, start time.Time, load, out, name string, savePlots func() ([]string, error), runErr error) (*Result, error) {
	res.Started = start.UTC().Truncate(time.Second)
	res.Seconds = Round(time.Since(start).Seconds(), 3)
	res.Env = CurrentEnv()
	res.Env.LoadAvgStart = load
	if out != "" {
		plots, err := savePlots()
		res.Plots = plots
		if err == nil {
			err = WriteJSON(out, name, res)
		}
		runErr = errors.Join(runErr, err)
	}
	return res, runErr
}

// Round rounds x to d decimals, keeping the JSON readable.
func Round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
