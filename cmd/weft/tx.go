package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/client/weft"
)

func init() { subcommands = append(subcommands, newTxCmd) }

// txOutput is what weft tx prints.
type txOutput struct {
	Reads  []any              `json:"reads,omitempty"`
	Commit *weft.CommitResult `json:"commit"`
}

func newTxCmd() *cobra.Command {
	var (
		addr, file string
		coordAddrs []string
		timeout    time.Duration
		attempts   int
	)
	cmd := &cobra.Command{
		Use:   "tx [statement]...",
		Short: "Run one transaction against a weft serve (gRPC): reads, then writes, committed atomically",
		Long: `Run one transaction. Each argument is a statement: a read,

  get_vertex <vertex>
  get_edge <src> <edge>

or a write:

` + weft.OpSyntax() + `
A vertex written @name is named by alias. A value is the rest of the argument
as JSON: "Alice", 42, 4.0, true, [1, 2], {"$datetime": "2024-01-02T03:04:05Z"}.
With --file, the writes are read from a JSON file instead ("-": stdin): an
array of operations in the HTTP API's form, or {"ops": [...]}.

Reads happen at the transaction's snapshot and are validated at commit; on a
retryable abort the whole transaction is run again (up to --attempts). The
result is printed as JSON: the reads, then the commit's handles and snapshot.

  weft tx 'create_vertex a' 'create_vertex b' 'create_edge a b knows' \
          'set_edge_prop a knows weight 0.5' 'add_alias a alice'
  weft tx 'get_vertex @alice'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			stmts, err := parseStatements(args, file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := dialClient(cmd.Context(), addr, coordAddrs, weft.Options{Attempts: attempts})
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var out txOutput
			out.Commit, err = c.UpdateResult(ctx, func(tx *weft.Tx) error {
				out.Reads = nil // from the last attempt only
				return runStatements(ctx, tx, stmts, &out)
			})
			if err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7500", "gRPC address of the server")
	f.StringSliceVar(&coordAddrs, "coord", nil, "coordinator addresses (comma-separated): use the cluster's gatekeepers instead of --addr")
	f.StringVar(&file, "file", "", "read the operations from this JSON file (\"-\": stdin)")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
	f.IntVar(&attempts, "attempts", 0, "tries of the transaction on retryable aborts (0: as many as fit in 30s)")
	return cmd
}

// statement is one read or write of weft tx.
type statement struct {
	read   string // "get_vertex" or "get_edge"; "" for a write
	ref    weft.Ref
	edge   string
	writes []weft.Op
}

func parseStatements(args []string, file string, stdin io.Reader) ([]statement, error) {
	var stmts []statement
	for _, a := range args {
		s, err := parseStatement(a)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
	if file != "" {
		ops, err := readOpsFile(file, stdin)
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, statement{writes: ops})
	}
	if len(stmts) == 0 {
		return nil, errors.New("tx: no statements (give them as arguments or with --file; see weft tx --help)")
	}
	return stmts, nil
}

func parseStatement(s string) (statement, error) {
	f := strings.Fields(s)
	ref := func(name string) weft.Ref {
		if a, ok := strings.CutPrefix(name, "@"); ok {
			return weft.Alias(a)
		}
		return weft.Handle(name)
	}
	switch {
	case len(f) > 0 && f[0] == "get_vertex":
		if len(f) != 2 {
			return statement{}, fmt.Errorf("tx: %q: usage: get_vertex <vertex>", s)
		}
		return statement{read: f[0], ref: ref(f[1])}, nil
	case len(f) > 0 && f[0] == "get_edge":
		if len(f) != 3 {
			return statement{}, fmt.Errorf("tx: %q: usage: get_edge <src> <edge>", s)
		}
		return statement{read: f[0], ref: ref(f[1]), edge: f[2]}, nil
	}
	op, err := weft.ParseOp(s)
	if err != nil {
		return statement{}, fmt.Errorf("tx: %w", err)
	}
	return statement{writes: []weft.Op{op}}, nil
}

// readOpsFile reads a JSON array of operations, or {"ops": [...]}.
func readOpsFile(name string, stdin io.Reader) ([]weft.Op, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("tx: %w", err)
	}
	b = bytes.TrimSpace(b)
	var ops []weft.Op
	if len(b) > 0 && b[0] == '{' {
		var wrapped struct {
			Ops []weft.Op `json:"ops"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		err = dec.Decode(&wrapped)
		ops = wrapped.Ops
	} else {
		err = json.Unmarshal(b, &ops)
	}
	if err != nil {
		return nil, fmt.Errorf("tx: %s: %w", name, err)
	}
	return ops, nil
}

func runStatements(ctx context.Context, tx *weft.Tx, stmts []statement, out *txOutput) error {
	for _, s := range stmts {
		switch s.read {
		case "get_vertex":
			v, err := tx.GetVertex(ctx, s.ref)
			if err != nil {
				return err
			}
			out.Reads = append(out.Reads, v)
		case "get_edge":
			e, err := tx.GetEdge(ctx, s.ref, s.edge)
			if err != nil {
				return err
			}
			out.Reads = append(out.Reads, e)
		default:
			tx.Add(s.writes...)
		}
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
