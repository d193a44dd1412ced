package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/wire/apicode"
)

// Placement commands over a server's HTTP API (GET /v1/placement, POST
// /v1/move; docs/online-moves.md): `weft placement`, `weft move`,
// `weft rebalance`, and the rebalance after `weft cluster add --role shard`.

func init() {
	subcommands = append(subcommands, newPlacementCmd, newMoveCmd, newRebalanceCmd)
}

type placementJSON struct {
	Base   uint32 `json:"base"`
	Shards uint32 `json:"shards"`
	Slots  []int  `json:"slots"`
	Moved  []struct {
		Unit  string   `json:"unit"`
		Shard uint32   `json:"shard"`
		From  uint32   `json:"from"`
		Held  []uint32 `json:"held"`
	} `json:"moved"`
	Rebalance []struct {
		Unit string `json:"unit"`
		From uint32 `json:"from"`
		To   uint32 `json:"to"`
	} `json:"rebalance"`
}

// apiError is an HTTP API error answer.
type apiError struct {
	Status    int
	Code      apicode.Code `json:"code"`
	Message   string       `json:"message"`
	Retryable bool         `json:"retryable"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message) }

// httpCall sends a JSON request to a Weft HTTP API (base: host:port or a
// URL) and decodes the answer into out, or returns an *apiError.
func httpCall(ctx context.Context, base, method, path string, in, out any) error {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error apiError `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return &apiError{Status: resp.StatusCode, Code: "HTTP", Message: strings.TrimSpace(string(raw))}
		}
		e.Error.Status = resp.StatusCode
		return &e.Error
	}
	return json.Unmarshal(raw, out)
}

func newPlacementCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "placement",
		Short: "Show where placement units live and the plan that evens out the shards",
		Long: `Print a server's placement directory (GET /v1/placement) as JSON: the base
shard count slots are computed over, the slots each shard serves, the units
that moved, and the rebalance plan.

  weft placement --http-addr 127.0.0.1:7580`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var p json.RawMessage
			if err := httpCall(cmd.Context(), addr, "GET", "/v1/placement", nil, &p); err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, p, "", "  "); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), buf.String())
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http-addr", "127.0.0.1:7580", "the server's (or a cluster gatekeeper's) HTTP API address")
	deprecatedAlias(cmd.Flags(), "http", "http-addr")
	return cmd
}

func newMoveCmd() *cobra.Command {
	var (
		addr, unit string
		shard      int
	)
	cmd := &cobra.Command{
		Use:   "move",
		Short: "Move one placement unit to another shard, online",
		Long: `Move a placement unit (s:<slot> or g:<group>; see weft placement) to a shard
while transactions, reads and programs go on (POST /v1/move). A move that
raced a transaction on the unit is retried.

  weft move --http-addr 127.0.0.1:7580 --unit s:17 --shard 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var res struct {
				Unit     string `json:"unit"`
				From, To uint32
			}
			if err := moveRetrying(cmd.Context(), addr, unit, shard, &res); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "unit %s moved from shard %d to %d\n", res.Unit, res.From, res.To)
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "http-addr", "127.0.0.1:7580", "the server's (or a cluster gatekeeper's) HTTP API address")
	deprecatedAlias(cmd.Flags(), "http", "http-addr")
	cmd.Flags().StringVar(&unit, "unit", "", "the unit: s:<slot> or g:<group>")
	cmd.Flags().IntVar(&shard, "shard", -1, "the shard to move it to")
	cmd.MarkFlagRequired("unit")
	cmd.MarkFlagRequired("shard")
	return cmd
}

// moveRetryMax bounds the attempts of one move answered with a retryable
// error (a race with a transaction on the unit, a server between epochs).
const moveRetryMax = 50

// moveRetrying moves unit to shard, retrying retryable answers with a
// growing pause.
func moveRetrying(ctx context.Context, addr, unit string, shard int, out any) error {
	var err error
	for attempt := range moveRetryMax {
		err = httpCall(ctx, addr, "POST", "/v1/move", map[string]any{"unit": unit, "shard": shard}, out)
		var ae *apiError
		if err == nil || !errors.As(err, &ae) || !ae.Retryable {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 20)) * 10 * time.Millisecond):
		}
	}
	return err
}

func newRebalanceCmd() *cobra.Command {
	var (
		addr       string
		noProgress bool
	)
	cmd := &cobra.Command{
		Use:   "rebalance",
		Short: "Even out the slots per shard by online moves (after a cluster grew)",
		Long: `Carry out the rebalance plan of GET /v1/placement: move slot units, one
transaction each, from the shards above their share to those below it, while
transactions and programs go on. weft cluster add --role shard runs it.

  weft rebalance --http-addr 127.0.0.1:7580`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var bars io.Writer
			if !noProgress {
				bars = terminal(os.Stderr)
			}
			_, err := rebalance(cmd.Context(), cmd.OutOrStdout(), bars, addr)
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "http-addr", "127.0.0.1:7580", "the server's (or a cluster gatekeeper's) HTTP API address")
	deprecatedAlias(cmd.Flags(), "http", "http-addr")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar")
	return cmd
}

// rebalanceRoundsMax bounds the plans fetched: each round carries out one
// plan; a round that moves nothing ends the rebalance.
const rebalanceRoundsMax = 10

// rebalance carries out the server's rebalance plan, fetching it again
// when a move is refused (another mover raced it), and reports the moves
// made and the slots per shard at the end; bars (nil: none) shows a
// progress bar.
func rebalance(ctx context.Context, out, bars io.Writer, addr string) (int, error) {
	start, moved := time.Now(), 0
	var p placementJSON
	for range rebalanceRoundsMax {
		if err := httpCall(ctx, addr, "GET", "/v1/placement", nil, &p); err != nil {
			return moved, err
		}
		if len(p.Rebalance) == 0 {
			break
		}
		var bar *progressbar.ProgressBar
		if bars != nil {
			bar = progressbar.NewOptions(len(p.Rebalance), progressbar.OptionSetWriter(bars),
				progressbar.OptionSetDescription("moving slots"), progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		}
		round := 0
		for _, m := range p.Rebalance {
			var res json.RawMessage
			err := moveRetrying(ctx, addr, m.Unit, int(m.To), &res)
			var ae *apiError
			if errors.As(err, &ae) && ae.Code == apicode.CodeInvalidArgument {
				break // the directory changed under the plan: plan again
			}
			if err != nil {
				return moved, fmt.Errorf("moving %s to shard %d: %w", m.Unit, m.To, err)
			}
			moved++
			round++
			if bar != nil {
				bar.Add(1)
			}
		}
		if bar != nil {
			bar.Finish()
		}
		if round == 0 {
			break
		}
	}
	if err := httpCall(ctx, addr, "GET", "/v1/placement", nil, &p); err != nil {
		return moved, err
	}
	fmt.Fprintf(out, "rebalanced: %d slot moves in %v; slots per shard %v\n", moved, time.Since(start).Round(time.Millisecond), p.Slots)
	if len(p.Rebalance) > 0 {
		return moved, fmt.Errorf("rebalance: %d moves still planned (shards holding old copies refuse them)", len(p.Rebalance))
	}
	return moved, nil
}
