package main

import (
	"net"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// defaultAddr matches a flag default naming a loopback port.
var defaultAddr = regexp.MustCompile(`^127\.0\.0\.1:\d+$`)

// TestDefaultPorts checks docs/operations.md's table of default ports
// against the flags: one row per port (so no two services default to the
// same port), each flag listed defaulting to its row's port, and every flag
// of every command whose default is a loopback address listed (a client's
// default points at the service of its row).
func TestDefaultPorts(t *testing.T) {
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := strings.Index(doc, "<!-- default-ports -->"), strings.Index(doc, "<!-- /default-ports -->")
	if start < 0 || end < start {
		t.Fatal("docs/operations.md has no <!-- default-ports --> table")
	}
	root := newRootCmd()
	listed := map[string]string{} // "weft serve --grpc-addr" -> port
	ports := map[string]bool{}
	flagRef := regexp.MustCompile("`(weft [a-z -]+?) --([a-z-]+)`")
	for _, line := range strings.Split(doc[start:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !regexp.MustCompile(`^\s*\d+\s*$`).MatchString(cells[1]) {
			continue
		}
		port := strings.TrimSpace(cells[1])
		if ports[port] {
			t.Errorf("port %s has two rows: two services default to it", port)
		}
		ports[port] = true
		for _, m := range flagRef.FindAllStringSubmatch(cells[3]+cells[4], -1) {
			listed[m[1]+" --"+m[2]] = port
			cmd, _, err := root.Find(strings.Fields(m[1])[1:])
			if err != nil || cmd.CommandPath() != m[1] {
				t.Errorf("table row %s: no command %q", port, m[1])
				continue
			}
			f := cmd.Flags().Lookup(m[2])
			if f == nil {
				t.Errorf("table row %s: %s has no flag --%s", port, m[1], m[2])
				continue
			}
			if got := defaultPort(f.DefValue); got != port {
				t.Errorf("%s --%s defaults to %q, the table says port %s", m[1], m[2], f.DefValue, port)
			}
		}
	}
	if len(ports) == 0 {
		t.Fatal("the default-ports table has no rows")
	}
	var missing []string
	walk(root, func(c *cobra.Command, f *pflag.Flag) {
		if f.Hidden {
			return
		}
		for _, d := range strings.Split(strings.Trim(f.DefValue, "[]"), ",") {
			if defaultAddr.MatchString(d) {
				if _, ok := listed[c.CommandPath()+" --"+f.Name]; !ok {
					missing = append(missing, c.CommandPath()+" --"+f.Name+" ("+f.DefValue+")")
				}
				return
			}
		}
	})
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s: a default address not in docs/operations.md's default-ports table", m)
	}
}

// defaultPort is the port of a flag default: host:port, a list of them
// (the first), or a bare port.
func defaultPort(def string) string {
	def = strings.Split(strings.Trim(def, "[]"), ",")[0]
	if _, p, err := net.SplitHostPort(def); err == nil {
		return p
	}
	return def
}

func walk(c *cobra.Command, fn func(*cobra.Command, *pflag.Flag)) {
	c.LocalFlags().VisitAll(func(f *pflag.Flag) { fn(c, f) })
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}
