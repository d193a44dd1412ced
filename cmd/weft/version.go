package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Set at link time by the Makefile (-ldflags "-X main.version=$(git describe
// --always --dirty) -X main.vcsRevision=…"). version, when set, replaces the
// module version; the vcs* values stand in for the build info's vcs.revision,
// vcs.time and vcs.modified when Go stamped none — it stamps none with
// -buildvcs=false, outside a checkout, and in a git worktree (cmd/go looks for
// a .git directory, and a worktree's .git is a file).
var (
	version     = ""
	vcsRevision = ""
	vcsTime     = ""
	vcsModified = ""
)

// buildVersion is what `weft version` and `weft --version` print: the
// version, the git revision, commit time and dirtiness Go stamps into the
// build info when it builds in a git checkout (-buildvcs), and the Go
// version. Fields not known are "".
type buildVersion struct {
	Version  string // link-time version, else the module version; "(devel)" for a local build
	Revision string // vcs.revision, full
	Time     string // vcs.time, RFC 3339
	Modified string // vcs.modified: "true", "false" or ""
	Go       string // runtime.Version()
	Platform string // GOOS/GOARCH
}

// readBuildVersion reads the running binary's build info, then the
// link-time values for what it lacks.
func readBuildVersion() buildVersion {
	v := buildVersion{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value
			}
		}
	}
	if v.Revision == "" {
		v.Revision, v.Time, v.Modified = vcsRevision, vcsTime, vcsModified
	}
	return v
}

// String is one line, e.g.
//
//	v0.3.0-12-g1a2b3c4-dirty (revision 1a2b3c4d5e6f, 2026-12-03T07:10:00Z, modified; go1.26.8 linux/amd64)
//
// A local build without a link-time or pseudo-version says "devel", never only
// "(devel)"; one built without VCS information says so.
func (v buildVersion) String() string {
	label := v.Version
	if label == "" || label == "(devel)" {
		label = "devel"
	}
	var parts []string
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append(parts, "revision "+rev)
		if v.Time != "" {
			parts = append(parts, v.Time)
		}
		if v.Modified == "true" {
			parts = append(parts, "modified")
		}
	} else if v.Version == "" || v.Version == "(devel)" {
		parts = append(parts, "no VCS information: built outside a git checkout or with -buildvcs=false")
	}
	tail := strings.TrimSpace(v.Go + " " + v.Platform)
	if len(parts) == 0 {
		return fmt.Sprintf("%s (%s)", label, tail)
	}
	return fmt.Sprintf("%s (%s; %s)", label, strings.Join(parts, ", "), tail)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, git revision and Go version of this binary",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "weft", readBuildVersion())
		},
	}
}
