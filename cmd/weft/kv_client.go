package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	kvclient "github.com/weft-db/weft/client/kv"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
)

// kvClientFlags are the flags get and put share.
type kvClientFlags struct {
	servers      string
	r, w         int
	roundTimeout time.Duration
	timeout      time.Duration
	asJSON       bool
}

func (f *kvClientFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "servers", "127.0.0.1:7800", "any servers of the ring, comma-separated (the first that answers gives the metadata)")
	fl.IntVar(&f.r, "r", 0, "R: replicas that must answer a read (0: the servers' suggestion)")
	fl.IntVar(&f.w, "w", 0, "W: replicas that must acknowledge a write (0: the servers' suggestion)")
	fl.DurationVar(&f.roundTimeout, "round-timeout", 500*time.Millisecond, "how long a round waits before the second round")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "overall deadline")
	fl.BoolVar(&f.asJSON, "json", false, "print the answer as JSON")
}

func (f *kvClientFlags) dial(ctx context.Context) (*kvclient.Client, error) {
	return kvclient.Dial(ctx, splitList(f.servers), kvclient.Options{R: f.r, W: f.w, RoundTimeout: f.roundTimeout})
}

func newKVGetCmd() *cobra.Command {
	var cf kvClientFlags
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Read a key from R of its replicas: every concurrent value, one per line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			c, err := cf.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := c.Get(ctx, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if cf.asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"key": args[0], "siblings": res.Siblings, "acks": res.Acks, "round": res.Round})
			}
			if len(res.Siblings) == 0 {
				return fmt.Errorf("kv get: %q: not found", args[0])
			}
			for _, s := range res.Siblings {
				fmt.Fprintf(out, "%s\t%s\n", printable(s.Value), s.Version)
			}
			return nil
		},
	}
	cf.add(cmd)
	return cmd
}

func newKVPutCmd() *cobra.Command {
	var cf kvClientFlags
	var blind bool
	cmd := &cobra.Command{
		Use:   "put KEY VALUE",
		Short: "Write a key to W of its replicas, superseding the values a read (R) returns",
		Long: `Write VALUE to KEY. By default put first reads the key (R replicas) and
writes a version that supersedes every value it read (Voldemort's put). With
--blind it writes without reading: values it did not see stay as siblings.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			c, err := cf.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var v kvcore.Version
			if blind {
				v, err = c.Put(ctx, args[0], []byte(args[1]), nil)
			} else {
				v, err = c.Write(ctx, args[0], []byte(args[1]))
			}
			if err != nil {
				return err
			}
			if cf.asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"key": args[0], "version": v})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok %s\n", v)
			return nil
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&blind, "blind", false, "write without reading first (concurrent values stay as siblings)")
	return cmd
}

// loadSpec reads a monitor spec: YAML if the file is named .yaml or .yml,
// JSON otherwise.
func loadSpec(path string) (*monitor.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec *monitor.Spec
	if strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") {
		spec, err = monitor.ParseYAML(data)
	} else {
		spec, err = monitor.ParseJSON(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printable shows a value as text when it is UTF-8, else quoted.
func printable(b []byte) string {
	if utf8.Valid(b) && !strings.ContainsAny(string(b), "\t\n") {
		return string(b)
	}
	return fmt.Sprintf("%q", b)
}
