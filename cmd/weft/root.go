package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var logLevel, logFormat string
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
			h, err := logHandler(logFormat, os.Stderr, lvl)
			if err != nil {
				return err
			}
			slog.SetDefault(slog.New(h))
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "text", `log lines on stderr: "text" (key=value) or "json" (one object a line: time, level, msg, attributes)`)
	root.Version = readBuildVersion().String()
	root.SetVersionTemplate("weft {{.Version}}\n")
	root.AddCommand(newVersionCmd())
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	groupCommands(root)
	return root
}

// commandGroups are the groups of `weft --help`, in the order shown, with
// the top-level commands of each. A command missing here is listed under
// "Additional Commands" (TestHelpGroups fails on it).
var commandGroups = []struct {
	cobra.Group
	commands []string
}{
	{cobra.Group{ID: "use", Title: "Use (a server and its clients):"},
		[]string{"serve", "tx", "run", "load", "kv", "monitor"}},
	{cobra.Group{ID: "operate", Title: "Operate (a cluster's roles and data placement):"},
		[]string{"cluster", "coord", "kronos", "shard", "gatekeeper", "postgres", "placement", "move", "rebalance"}},
	{cobra.Group{ID: "test", Title: "Test and benchmark:"},
		[]string{"bench", "faults"}},
}

// logHandler is the handler of the --log-format named format.
func logHandler(format string, w io.Writer, lvl slog.Level) (slog.Handler, error) {
	o := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.NewTextHandler(w, o), nil
	case "json":
		return slog.NewJSONHandler(w, o), nil
	}
	return nil, fmt.Errorf(`--log-format %q: use "text" or "json"`, format)
}

// groupCommands puts root's subcommands into commandGroups.
func groupCommands(root *cobra.Command) {
	group := map[string]string{}
	for _, g := range commandGroups {
		root.AddGroup(&g.Group)
		for _, n := range g.commands {
			group[n] = g.ID
		}
	}
	for _, c := range root.Commands() {
		c.GroupID = group[c.Name()]
	}
}

// subcommands is filled by the files that define them (one file each), so
// adding a command touches only its own file (and commandGroups).
var subcommands []func() *cobra.Command
