package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=..."); otherwise the
// module build info is used.
var version = ""

func newRootCmd() *cobra.Command {
	var logLevel string
	root := &cobra.Command{
		Use:           "weft",
		Short:         "Weft: a strictly serializable distributed graph database",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return err
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.AddCommand(newVersionCmd())
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands is filled by the files that define them (one file each), so
// adding a command touches only its own file.
var subcommands []func() *cobra.Command

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			v := version
			if v == "" {
				if bi, ok := debug.ReadBuildInfo(); ok {
					v = bi.Main.Version
				}
			}
			cmd.Println("weft", v)
		},
	}
}
