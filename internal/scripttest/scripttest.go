// Package scripttest runs golden scripts: text files of cases, each a
// command line, a "----" line, and the command's expected output up to the
// next blank line. Lines starting with "#" are comments; they are kept, with
// the case they precede, when -rewrite regenerates the outputs. A test
// supplies the interpreter (a function from a command to its output); this
// package reads the cases, compares, reports a difference by file and line,
// and rewrites. The scripts are reviewed like code: a rewritten output is a
// change of behaviour to explain.
//
// It is for tests only (it registers the -rewrite flag) and is not safe for
// concurrent use on one file.
package scripttest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rewrite is the -rewrite flag: write the current outputs into the scripts
// instead of comparing.
var Rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/ with the current output")

// Case is one command of a script.
type Case struct {
	Line    int    // of the command, from 1
	Comment string // the comment lines before it, "#" included
	Cmd     string
	Want    string
}

// Files returns the scripts matching glob, failing the test if there are
// none (a misspelt glob must not pass silently).
func Files(t testing.TB, glob string) []string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", glob, err)
	}
	return files
}

// Parse reads a script's cases, and the comment lines after its last case.
func Parse(t testing.TB, s string) (cases []Case, trailer string) {
	t.Helper()
	var comment []string
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			comment = append(comment, l)
			continue
		}
		c := Case{Line: i + 1, Cmd: l, Comment: strings.Join(comment, "\n")}
		comment = nil
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "----" {
			t.Fatalf("line %d: %q is not followed by ----", i+1, l)
		}
		i += 2
		var want []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		c.Want = strings.Join(want, "\n")
		cases = append(cases, c)
	}
	return cases, strings.Join(comment, "\n")
}

// Run runs the script in file through run, one command at a time, and
// reports every output that differs from the expected one (file:line, the
// command, got and want); with -rewrite it writes the outputs back instead.
// An output may not contain a blank line: that would end the case.
func Run(t testing.TB, file string, run func(cmd string) string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cases, trailer := Parse(t, string(b))
	var out strings.Builder
	for _, c := range cases {
		got := strings.TrimRight(run(c.Cmd), "\n")
		if strings.Contains(got, "\n\n") {
			t.Fatalf("%s:%d: %s: the output has a blank line:\n%s", file, c.Line, c.Cmd, got)
		}
		if !*Rewrite && got != c.Want {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, c.Line, c.Cmd, got, c.Want)
		}
		if c.Comment != "" {
			fmt.Fprintf(&out, "%s\n", c.Comment)
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", c.Cmd, got)
	}
	if trailer != "" {
		fmt.Fprintf(&out, "%s\n", trailer)
	}
	if *Rewrite {
		if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Planted is the scripts' self-test: it runs the script in file once more,
// in a temporary copy whose every expected output has a line appended, and
// fails t unless Run reports every case as a mismatch. It shows that a
// script's outputs are really compared, so a golden file that passes says
// something. newRun returns a fresh interpreter (the one the script's own
// test uses). Under -rewrite it does nothing: there is nothing to compare.
func Planted(t *testing.T, file string, newRun func(t testing.TB) func(cmd string) string) {
	t.Helper()
	if *Rewrite {
		t.Skip("-rewrite: nothing is compared")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cases, trailer := Parse(t, string(b))
	var out strings.Builder
	for _, c := range cases {
		if c.Comment != "" {
			fmt.Fprintf(&out, "%s\n", c.Comment)
		}
		want := "planted: not the output"
		if c.Want != "" {
			want = c.Want + "\n" + want
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", c.Cmd, want)
	}
	fmt.Fprintf(&out, "%s\n", trailer)
	planted := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(planted, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	Run(rec, planted, newRun(rec))
	if rec.errors != len(cases) {
		t.Fatalf("%s: %d of %d altered outputs reported as mismatches", file, rec.errors, len(cases))
	}
}

// recorder counts the mismatches Run reports instead of failing the test;
// anything else (Fatal, Log) goes to the real test.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }
