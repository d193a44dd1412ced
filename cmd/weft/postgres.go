package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/store/postgres/pgserver"
)

func init() { subcommands = append(subcommands, newPostgresCmd) }

func newPostgresCmd() *cobra.Command {
	var (
		dir  string
		port int
	)
	cmd := &cobra.Command{
		Use:   "postgres",
		Short: "Run PostgreSQL (Debian's, installed if missing) on a directory, as a local cluster's shared store",
		Long: `Run PostgreSQL from Debian's packages on --dir (initdb on first use) at
127.0.0.1:--port until SIGINT or SIGTERM, which stop it cleanly. As root it
installs the package with apt-get when missing and runs the server as an
unprivileged user. weft cluster up starts one when it is given no
--postgres-url; for a production cluster use a PostgreSQL you operate.

  weft postgres --dir weft-data/pg --port 5433`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := pgserver.Open(dir, port)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "postgres serving on 127.0.0.1:%d (%s)\n", port, s.URL())
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			<-sig
			return s.Stop()
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "weft-data/postgres", "the server's directory (data/, socket, log)")
	cmd.Flags().IntVar(&port, "port", 5433, "TCP port on 127.0.0.1")
	return cmd
}
