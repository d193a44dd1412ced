package weft_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Test data lives in the checkout (testdata/README.md), so a test never
// skips because its data is missing: it fails. TestNoSkipForMissingData
// scans every Go test file for a Skip whose line, or one of the few lines
// before it, speaks of a missing file or of data that is not present, and
// for paths that lead outside the checkout. It is a scan of the text, not
// of the program: a skip worded otherwise gets past it, which is why
// docs/testing.md asks for the wording "not present" in every data check.

// missingData matches what a skip for missing data says or tests.
var missingData = regexp.MustCompile(`(?i)ErrNotExist|IsNotExist|not present|no such file|missing (file|data)|data (is )?missing|not found`)

// outsidePath matches a path that leads outside the checkout.
// (The character classes keep this file's own text free of such paths.)
var outsidePath = regexp.MustCompile(`"/w[o]rk/|\.\./sh[a]red/|"/h[o]me/|"/t[m]p/[^"]*\.(rdf|gz|json|schema)"`)

var skipCall = regexp.MustCompile(`\.Skip(f|Now)?\(`)

// skipsForMissingData returns "file:line: text" for each offending line of
// one test file's text.
func skipsForMissingData(name, text string) []string {
	const before = 3 // lines above a Skip that may hold its condition
	var out []string
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "//") {
			continue
		}
		if outsidePath.MatchString(l) {
			out = append(out, name+":"+strconv.Itoa(i+1)+": path outside the checkout: "+strings.TrimSpace(l))
		}
		if !skipCall.MatchString(l) {
			continue
		}
		for j := max(0, i-before); j <= i; j++ {
			if missingData.MatchString(lines[j]) {
				out = append(out, name+":"+strconv.Itoa(i+1)+": skip for missing data: "+strings.TrimSpace(l))
				break
			}
		}
	}
	return out
}

func TestNoSkipForMissingData(t *testing.T) {
	var bad []string
	files := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") || path == "testdata_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		bad = append(bad, skipsForMissingData(path, string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned %d test files; run from the module root", files)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestNoSkipForMissingDataCatches: the scan finds what it is for and lets
// ordinary skips pass.
func TestNoSkipForMissingDataCatches(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"errnotexist", "f, err := os.Open(p)\nif errors.Is(err, os.ErrNotExist) {\n\tt.Skipf(\"no data\")\n}", 1},
		{"not present", "if err != nil {\n\tt.Skip(\"film data not present\")\n}", 1},
		{"short", "if testing.Short() {\n\tt.Skip(\"slow\")\n}", 0},
		{"fatal", "if errors.Is(err, os.ErrNotExist) {\n\tt.Fatalf(\"film data not present\")\n}", 0},
		{"outside", "const dir = \"/" + "wo" + "rk/sh" + "ared/data/film\"", 1},
		{"comment", "// t.Skip(\"data not present\")", 0},
	} {
		if got := len(skipsForMissingData(tc.name, tc.text)); got != tc.want {
			t.Errorf("%s: %d findings; want %d", tc.name, got, tc.want)
		}
	}
}
