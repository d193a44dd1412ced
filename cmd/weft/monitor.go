package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/kv"
)

func init() { subcommands = append(subcommands, newMonitorCmd) }

func newMonitorCmd() *cobra.Command {
	cfg := kv.DefaultWatcherConfig()
	var spec, servers, addr string
	var epsilon time.Duration
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Watch the kv servers' predicate detectors, report violations, optionally roll back",
		Long: `Run the monitor process of "Optimistic Execution in Key-Value Store" (§IV-V):
fetch (long-poll) every kv server's detector candidates, run one monitor per
predicate of --spec (the same spec the servers were started with), and report
each violation of P — a consistent cut in which some clause of ¬P holds — with
the cut, the earliest time it could have begun (since) and the detection
latency (now − the start of the state that completed it; exact when the
servers share this machine's clock).

With --rollback each violation pauses every server (they answer PAUSED),
restores every replica to the consistent cut before 'since' from its window
of undo records (everything with a stamp entry ≥ since is discarded, whether
acknowledged or not), and resumes them in a new rollback generation.

  weft monitor --spec preds.yaml --servers 127.0.0.1:7600,127.0.0.1:7601 --rollback

With --data-dir a restarted monitor reports no violation twice: it replays
the candidates the servers still retain and drops those it already reported
(stored, fsynced, before each report).

HTTP (--addr): GET /v1/monitor/violations, /v1/monitor/rollbacks,
/v1/monitor/stats, /metrics (Prometheus text), /healthz. Violations are also
logged (structured, to stderr). SIGINT or SIGTERM stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sp, err := loadSpec(spec)
			if err != nil {
				return err
			}
			cfg.Spec, cfg.Servers = sp, splitList(servers)
			cfg.Monitor.Epsilon = uint64(epsilon.Nanoseconds())
			w, err := kv.NewWatcher(cfg, slog.Default())
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("monitor: listen %s: %w", addr, err)
			}
			if err := w.Start(); err != nil {
				ln.Close()
				return err
			}
			defer w.Stop()
			hs := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					slog.Error("monitor: serve", "err", err, "role", "monitor")
				}
			}()
			fmt.Fprintf(cmd.OutOrStdout(), "weft monitor watching %d servers, %d predicates; HTTP on %s\n",
				len(cfg.Servers), len(sp.Predicates), ln.Addr())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			return hs.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec, "spec", "", "predicate spec (JSON, or YAML if named .yaml/.yml): the servers' --predicates (required)")
	f.StringVar(&servers, "servers", "", "every kv server's host:port, comma-separated, in ring order (required)")
	f.StringVar(&addr, "addr", "127.0.0.1:7700", "HTTP listen address for violations and metrics")
	f.DurationVar(&epsilon, "epsilon", time.Duration(cfg.Monitor.Epsilon), "HVC ε: must equal the servers' --epsilon")
	f.IntVar(&cfg.Monitor.QueueMax, "queue-max", cfg.Monitor.QueueMax, "candidates a monitor buffers per server")
	f.StringVar(&cfg.DataDir, "data-dir", "", "directory for the monitor's state (the violations reported), so that a restarted monitor reports none twice (empty: none kept)")
	f.DurationVar(&cfg.PollWait, "poll-wait", cfg.PollWait, "how long one candidate fetch waits on a server (long poll)")
	f.BoolVar(&cfg.Rollback, "rollback", false, "roll every server back to the cut before each violation")
	f.DurationVar(&cfg.RollbackTimeout, "rollback-timeout", cfg.RollbackTimeout, "bound on each call of a rollback")
	f.IntVar(&cfg.AdviseAfter, "advise-after", 0, "advise clients to switch to --advise-r/--advise-w after this many violations within --advise-window (0: never)")
	f.DurationVar(&cfg.AdviseWindow, "advise-window", cfg.AdviseWindow, "window for --advise-after")
	f.IntVar(&cfg.Advice.R, "advise-r", 1, "R to advise")
	f.IntVar(&cfg.Advice.W, "advise-w", 0, "W to advise (0: N, i.e. sequential with R=1)")
	_ = cmd.MarkFlagRequired("spec")
	_ = cmd.MarkFlagRequired("servers")
	return cmd
}
