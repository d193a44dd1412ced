package faults

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// adyaTimeout bounds one adya run.
const adyaTimeout = 10 * time.Minute

// Adya statuses.
const (
	AdyaValid       = "valid"
	AdyaAnomalies   = "anomalies"
	AdyaUnknown     = "unknown"
	AdyaError       = "error"
	AdyaUnavailable = "not available"
)

// Adya is adya's verdict on one history.
type Adya struct {
	History string `json:"history"`
	Model   string `json:"model"`
	Status  string `json:"status"`
	// Summary is adya's last line of output (for a valid history, the file
	// name and "true"); the whole output is saved as adya-<history>.txt.
	Summary string `json:"summary,omitempty"`
}

// FindAdya returns the adya binary to run: setting when it names one ("none"
// disables the cross-check), else adya on PATH, else ~/.cargo/bin/adya;
// "" when there is none.
func FindAdya(setting string) string {
	switch setting {
	case "none":
		return ""
	case "":
	default:
		return setting
	}
	if p, err := exec.LookPath("adya"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cargo", "bin", "adya")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// crossCheck runs adya, the independent checker, on the list-append and
// rw-register shaped histories, under strict serializability.
func (h *harness) crossCheck(runs []*clientRun) []Adya {
	var targets []Adya
	for _, r := range runs {
		switch r.wl.name() {
		case WorkloadListAppend, WorkloadSideband:
			targets = append(targets, Adya{History: r.wl.name() + ".jsonl", Model: "list-append"})
		case WorkloadRWRegister:
			targets = append(targets, Adya{History: r.wl.name() + ".jsonl", Model: "rw-register"})
		}
	}
	bin := FindAdya(h.cfg.Adya)
	for i := range targets {
		if bin == "" {
			targets[i].Status = AdyaUnavailable
			continue
		}
		targets[i] = h.runAdya(bin, targets[i])
	}
	return targets
}

// runAdya runs `adya check -m model -c strict-serializable history`; its
// exit status is 0 valid, 1 anomalies, 2 unknown, 3 error.
func (h *harness) runAdya(bin string, a Adya) Adya {
	ctx, cancel := context.WithTimeout(context.Background(), adyaTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "check", "-m", a.Model, "-c", "strict-serializable",
		filepath.Join(h.cfg.OutDir, a.History))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		a.Status = AdyaValid
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		a.Status = AdyaAnomalies
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		a.Status = AdyaUnknown
	default:
		a.Status = AdyaError
		out.WriteString("\n" + err.Error())
	}
	text := strings.TrimSpace(out.String())
	a.Summary = text[strings.LastIndexByte(text, '\n')+1:]
	name := "adya-" + strings.TrimSuffix(a.History, ".jsonl") + ".txt"
	if werr := os.WriteFile(filepath.Join(h.cfg.OutDir, name), []byte(text+"\n"), 0o644); werr != nil {
		a.Status, a.Summary = AdyaError, werr.Error()
	}
	h.log.Info("adya", "history", a.History, "status", a.Status, "summary", a.Summary)
	return a
}
