package scripttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echo is a toy interpreter: "upper WORD" answers WORD in capitals.
func echo(testing.TB) func(string) string {
	return func(cmd string) string { return strings.ToUpper(strings.TrimPrefix(cmd, "upper ")) }
}

const script = `# a comment kept with its case
upper a
----
A

upper b c
----
B C

# a trailing comment
`

// TestRunComparesAndPlantedCatches: a right script passes (no error
// recorded), and Planted finds every one of its cases altered.
func TestRunComparesAndPlantedCatches(t *testing.T) {
	file := filepath.Join(t.TempDir(), "toy.txt")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	Run(rec, file, echo(rec))
	if rec.errors != 0 {
		t.Fatalf("a right script reported %d mismatches", rec.errors)
	}
	Planted(t, file, echo)
}

// TestRunReportsAWrongOutput: one wrong expected output is one error, and
// a missing one (an interpreter that answers less) is another.
func TestRunReportsAWrongOutput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "toy.txt")
	wrong := strings.Replace(script, "B C", "B D", 1)
	if err := os.WriteFile(file, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	Run(rec, file, echo(rec))
	if rec.errors != 1 {
		t.Fatalf("one wrong output reported %d times", rec.errors)
	}
	rec = &recorder{TB: t}
	Run(rec, file, func(string) string { return "" })
	if rec.errors != 2 {
		t.Fatalf("an interpreter answering nothing reported %d mismatches, want 2", rec.errors)
	}
}

// TestRewriteKeepsComments: -rewrite writes the current outputs and keeps
// every comment where it was.
func TestRewriteKeepsComments(t *testing.T) {
	file := filepath.Join(t.TempDir(), "toy.txt")
	if err := os.WriteFile(file, []byte(strings.Replace(script, "B C", "stale", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	old := *Rewrite
	*Rewrite = true
	defer func() { *Rewrite = old }()
	Run(t, file, echo(t))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != script {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", b, script)
	}
}
