package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// lostShownMax bounds the lost writes listed per workload in the report.
const lostShownMax = 20

// Report is a run's outcome, saved as report.json and report.txt.
type Report struct {
	Valid    bool   `json:"valid"`
	Seed     uint64 `json:"seed"`
	Duration string `json:"duration"`
	Elapsed  string `json:"elapsed"`
	Clients  int    `json:"clients_per_workload"`
	// Operations counts every operation (invocations), final reads included.
	Operations int              `json:"operations"`
	OK         int              `json:"ok"`
	Fail       int              `json:"fail"`
	Info       int              `json:"info"`
	Workloads  []WorkloadReport `json:"workloads"`
	// Faults counts the faults injected by kind; FinalKill is the kill -9
	// before the final reads.
	Faults    map[string]int `json:"faults"`
	FinalKill bool           `json:"final_kill"`
	// ServerStarts counts starts of the server, the first included; for a
	// cluster, the restarts of killed processes (`weft cluster up` starts
	// the rest).
	ServerStarts    int      `json:"server_starts"`
	UnexpectedExits []string `json:"unexpected_exits,omitempty"`
	// Cluster is the cluster target's shape (nil: one server).
	Cluster *ClusterConfig `json:"cluster,omitempty"`
	// Recoveries lists each fault of a cluster process and how long the
	// cluster took to recover from it; RecoveryByRole sums them up by fault
	// kind.
	Recoveries     []Recovery        `json:"recoveries,omitempty"`
	RecoveryByRole []RecoverySummary `json:"recovery_by_role,omitempty"`
	// LeaseRefusals counts, by process, the calls a gatekeeper or shard
	// refused because its lease had lapsed (a proxied cluster's partitions;
	// the process's total across its registrations).
	LeaseRefusals map[string]int64 `json:"lease_refusals,omitempty"`
	Adya          []Adya           `json:"adya"`
	// MoveStats are the mover's counts (flat in report.json: moves,
	// move_refusals, move_failures, …); nil when no mover ran
	// (ClusterConfig.MoveEvery 0).
	*MoveStats
	// Problems lists everything that makes the run invalid.
	Problems []string `json:"problems,omitempty"`
	// Notes are remarks that do not make the run invalid (a mover that
	// moved nothing).
	Notes []string `json:"notes,omitempty"`
	// Files are the histories written, relative to the output directory.
	Files []string `json:"files"`
}

// WorkloadReport is one workload's figures and verdicts.
type WorkloadReport struct {
	Name       string         `json:"name"`
	Operations int            `json:"operations"`
	OK         int            `json:"ok"`
	Fail       int            `json:"fail"`
	Info       int            `json:"info"`
	Errors     map[string]int `json:"errors,omitempty"` // fail and info outcomes by error code
	// Aborted counts attempts that aborted (ABORTED, SNAPSHOT_TOO_OLD,
	// OVERLOADED): a measure of contention; most were retried.
	Aborted int           `json:"aborted_attempts"`
	Checks  []CheckReport `json:"checks"`
	// Lost counts acknowledged writes missing from the final read (-1: the
	// workload cannot tell; its checker covers what it can).
	Lost       int      `json:"lost"`
	LostDetail []string `json:"lost_detail,omitempty"`
	// Clients and LiveClients: clients, and those that completed an
	// operation during the healed phase.
	Clients     int `json:"clients"`
	LiveClients int `json:"live_clients"`
}

// CheckReport is one checker's verdict on one history.
type CheckReport struct {
	Checker   string   `json:"checker"`
	History   string   `json:"history"`
	Valid     bool     `json:"valid"`
	Anomalies int      `json:"anomalies"`
	Types     []string `json:"types,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// report checks every workload, runs adya, and writes the report, the
// histories and the nemesis journal.
func (h *harness) report(runs []*clientRun, nem *nemesis, j *journal, problems []string) (*Report, error) {
	rep := &Report{Seed: h.cfg.Seed, Duration: h.cfg.Duration.String(), Clients: h.cfg.Clients,
		Faults: map[string]int{}, FinalKill: h.finalKill, Cluster: h.cfg.Cluster}
	for k, n := range nem.counts {
		rep.Faults[string(k)] = n
	}
	rep.ServerStarts = nem.t.starts()
	rep.UnexpectedExits = nem.t.unexpectedExits()
	for _, e := range rep.UnexpectedExits {
		problems = append(problems, "a process exited unexpectedly: "+firstLine(e))
	}
	rep.Recoveries = nem.t.recoveries()
	if ct, ok := nem.t.(*clusterTarget); ok {
		rep.LeaseRefusals = ct.leaseRefusals()
	}
	rep.RecoveryByRole = summarizeRecoveries(rep.Recoveries)
	for _, r := range rep.Recoveries {
		if !r.Recovered() {
			problems = append(problems, fmt.Sprintf("the %s of %s (%s) at %.1fs did not recover within %v: %s",
				r.Fault, r.Process, r.Victim, float64(r.At)/1e9, h.cfg.Cluster.recoveryTimeout(), r.Why))
		}
	}
	files, err := h.writeHistories(runs)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	if err := j.write(filepath.Join(h.cfg.OutDir, "nemesis.jsonl")); err != nil {
		return nil, err
	}
	var anomalies strings.Builder
	for _, r := range runs {
		wr, ps := h.workloadReport(r, &anomalies)
		rep.Workloads = append(rep.Workloads, wr)
		problems = append(problems, ps...)
		rep.Operations, rep.OK, rep.Fail, rep.Info = rep.Operations+wr.Operations, rep.OK+wr.OK, rep.Fail+wr.Fail, rep.Info+wr.Info
	}
	rep.Adya = h.crossCheck(runs)
	for _, a := range rep.Adya {
		if a.Status == AdyaAnomalies || a.Status == AdyaError {
			problems = append(problems, fmt.Sprintf("adya on %s: %s", a.History, a.Status))
		}
	}
	rep.MoveStats = h.moves
	rep.Notes = moveNotes(h.moves)
	rep.Problems = problems
	rep.Valid = len(problems) == 0
	rep.Elapsed = time.Since(h.began).Round(time.Second).String()
	return rep, h.writeReport(rep, anomalies.String())
}

// workloadReport gathers one workload's figures and verdicts; anomalies
// receives the full explanation of every anomaly.
func (h *harness) workloadReport(r *clientRun, anomalies *strings.Builder) (WorkloadReport, []string) {
	wr := WorkloadReport{Name: r.wl.name(), Errors: map[string]int{}, Clients: len(r.workers)}
	for _, w := range append(slices.Clone(r.workers), r.final) {
		s := w.stats
		s.mu.Lock()
		wr.OK, wr.Fail, wr.Info, wr.Aborted = wr.OK+s.ok, wr.Fail+s.fail, wr.Info+s.info, wr.Aborted+s.aborted
		for k, n := range s.errors {
			wr.Errors[k] += n
		}
		if w != r.final && s.okHealed > 0 {
			wr.LiveClients++
		}
		s.mu.Unlock()
	}
	wr.Operations = wr.OK + wr.Fail + wr.Info
	var problems []string
	if wr.LiveClients < wr.Clients {
		problems = append(problems, fmt.Sprintf("%s: liveness: only %d of %d clients completed an operation after healing",
			wr.Name, wr.LiveClients, wr.Clients))
	}
	wc := r.wl.check()
	for _, c := range wc.checks {
		cr := CheckReport{Checker: c.checker, History: c.history, Valid: c.err == nil && c.res.Valid,
			Anomalies: len(c.res.Anomalies) + c.res.Truncated, Types: c.res.Types()}
		if c.err != nil {
			cr.Error = c.err.Error()
			problems = append(problems, fmt.Sprintf("%s: %s checker on %s: %v", wr.Name, c.checker, c.history, c.err))
		} else if !c.res.Valid {
			problems = append(problems, fmt.Sprintf("%s: %s checker on %s: %d anomalies %v", wr.Name, c.checker,
				c.history, cr.Anomalies, cr.Types))
			fmt.Fprintf(anomalies, "== %s: %s checker on %s\n%s\n\n", wr.Name, c.checker, c.history, c.res)
		}
		wr.Checks = append(wr.Checks, cr)
	}
	wr.Lost = len(wc.lost)
	if wc.lostNA {
		wr.Lost = -1
	}
	if len(wc.lost) > 0 {
		wr.LostDetail = wc.lost[:min(len(wc.lost), lostShownMax)]
		problems = append(problems, fmt.Sprintf("%s: %d acknowledged writes lost", wr.Name, len(wc.lost)))
		fmt.Fprintf(anomalies, "== %s: lost acknowledged writes\n%s\n\n", wr.Name, strings.Join(wc.lost, "\n"))
	}
	return wr, problems
}

func (h *harness) writeReport(rep *Report, anomalies string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(h.cfg.OutDir, "report.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(h.cfg.OutDir, "report.txt"), []byte(rep.String()), 0o644); err != nil {
		return err
	}
	path := filepath.Join(h.cfg.OutDir, "anomalies.txt")
	if anomalies == "" {
		return removeIfExists(path)
	}
	return os.WriteFile(path, []byte(anomalies), 0o644)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// String renders the report for a person.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "VALID"
	if !r.Valid {
		verdict = "INVALID"
	}
	fmt.Fprintf(&b, "weft faults: %s (seed %d, duration %s, elapsed %s, %d clients per workload)\n",
		verdict, r.Seed, r.Duration, r.Elapsed, r.Clients)
	fmt.Fprintf(&b, "operations %d: ok %d, fail %d, info %d\n", r.Operations, r.OK, r.Fail, r.Info)
	if r.Cluster != nil {
		c := r.Cluster
		fmt.Fprintf(&b, "cluster: %d gatekeepers + %d backup, %d shards + %d backup, %d Kronos, %d coordinator replicas\n",
			c.Gatekeepers, c.BackupGatekeepers, c.Shards, c.BackupShards, c.Kronos, c.Coord)
		fmt.Fprintf(&b, "faults: %s; process restarts %d; unexpected exits %d\n",
			countsString(r.Faults), r.ServerStarts, len(r.UnexpectedExits))
		if r.MoveStats != nil {
			b.WriteString(r.MoveStats.summary() + "\n")
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "faults: %s; final kill -9: %v; server starts %d; unexpected exits %d\n\n",
			countsString(r.Faults), r.FinalKill, r.ServerStarts, len(r.UnexpectedExits))
	}
	fmt.Fprintf(&b, "%-12s %8s %8s %7s %7s %6s %6s  %s\n", "workload", "ops", "ok", "fail", "info", "lost", "live", "checks")
	for _, w := range r.Workloads {
		lost := fmt.Sprint(w.Lost)
		if w.Lost < 0 {
			lost = "n/a"
		}
		var checks []string
		for _, c := range w.Checks {
			checks = append(checks, c.summary())
		}
		fmt.Fprintf(&b, "%-12s %8d %8d %7d %7d %6s %6s  %s\n", w.Name, w.Operations, w.OK, w.Fail, w.Info, lost,
			fmt.Sprintf("%d/%d", w.LiveClients, w.Clients), strings.Join(checks, "; "))
	}
	b.WriteString("\nerrors (fail and info outcomes by code; aborted attempts, mostly retried):\n")
	for _, w := range r.Workloads {
		fmt.Fprintf(&b, "  %-12s %s; aborted attempts %d\n", w.Name, countsString(w.Errors), w.Aborted)
	}
	if len(r.Recoveries) > 0 {
		b.WriteString("\n" + recoveryTable(r.Recoveries, r.RecoveryByRole))
	}
	if len(r.LeaseRefusals) > 0 {
		names := slices.Sorted(maps.Keys(r.LeaseRefusals))
		total := int64(0)
		b.WriteString("\nlease refusals (calls refused because the process's lease had lapsed):\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  %-16s %d\n", n, r.LeaseRefusals[n])
			total += r.LeaseRefusals[n]
		}
		fmt.Fprintf(&b, "  %-16s %d\n", "total", total)
	}
	b.WriteString("\nadya:\n")
	for _, a := range r.Adya {
		fmt.Fprintf(&b, "  %-20s %s %s\n", a.History, a.Status, a.Summary)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	if len(r.Problems) > 0 {
		b.WriteString("\nproblems:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	return b.String()
}

// moveNotes remarks on a mover's run: one that moved nothing leaves the
// histories checked without moves (not a problem: every attempt may have
// met a fault).
func moveNotes(s *MoveStats) []string {
	if s == nil || s.Moves > 0 {
		return nil
	}
	return []string{fmt.Sprintf("the mover (every %s) moved no unit in the whole run (%d refused, %d failed; errors %s): "+
		"the histories were checked without online moves", s.Every, s.Refusals, s.Failures, countsString(s.Errors))}
}

func (c CheckReport) summary() string {
	switch {
	case c.Error != "":
		return fmt.Sprintf("%s: error %s", c.Checker, c.Error)
	case c.Valid:
		return c.Checker + ": valid"
	}
	return fmt.Sprintf("%s: %d anomalies %v", c.Checker, c.Anomalies, c.Types)
}

func countsString(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
