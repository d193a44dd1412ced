package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/client/weft"
)

func init() { subcommands = append(subcommands, newRunCmd) }

func newRunCmd() *cobra.Command {
	var (
		addr, at   string
		coordAddrs []string
		timeout    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run [program ['<json params>']]",
		Short: "Run a node program on a weft serve (gRPC) and print its JSON result",
		Long: `Run a node program by name with JSON parameters (default {}) and print its
result as JSON. Without arguments, list the programs the server has.
--at runs at an earlier snapshot (a commit's or a transaction's): a historic query.

  weft run
  weft run get_node '{"node": "person/alice"}'
  weft run pagerank`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := dialClient(cmd.Context(), addr, coordAddrs, weft.Options{})
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if len(args) == 0 {
				return listPrograms(ctx, cmd, c)
			}
			params := json.RawMessage("{}")
			if len(args) == 2 {
				if !json.Valid([]byte(args[1])) {
					var v any
					return fmt.Errorf("run: params are not JSON: %v", json.Unmarshal([]byte(args[1]), &v))
				}
				params = json.RawMessage(args[1])
			}
			var result json.RawMessage
			if err := c.RunAt(ctx, at, args[0], params, &result); err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), result)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7500", "gRPC address of the server")
	f.StringSliceVar(&coordAddrs, "coord", nil, "coordinator addresses (comma-separated): use the cluster's gatekeepers instead of --addr")
	f.StringVar(&at, "at", "", "snapshot to run at (default: a fresh one)")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	return cmd
}

func listPrograms(ctx context.Context, cmd *cobra.Command, c *weft.Client) error {
	progs, err := c.Programs(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	for _, p := range progs {
		fmt.Fprintf(w, "%s\t%s\n", p.Name, p.Description)
	}
	return w.Flush()
}

// dialClient connects to the server at addr, or with coordinator addresses
// to the cluster's gatekeepers (found and followed through the coordinator).
func dialClient(ctx context.Context, addr string, coordAddrs []string, o weft.Options) (*weft.Client, error) {
	if len(coordAddrs) > 0 {
		return weft.DialCoordinator(ctx, coordAddrs, o)
	}
	return weft.Dial(addr, o)
}
