package doctest

import (
	"regexp"
	"strings"
)

// Ellipsis is the line that matches zero or more whole lines.
const Ellipsis = "..."

// wildcard is a {{name}} inside a line.
var wildcard = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// Match reports whether got matches the expected output want (see the
// package documentation for the wildcards).
func Match(want, got string) bool {
	return matchLines(lines(want), lines(got))
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " \t\r")
	}
	return ls
}

// matchLines matches with backtracking over ellipses; a doc's outputs are
// short, and consecutive ellipses are folded, so this stays cheap.
func matchLines(want, got []string) bool {
	for len(want) > 0 {
		if want[0] == Ellipsis {
			for len(want) > 0 && want[0] == Ellipsis {
				want = want[1:]
			}
			if len(want) == 0 {
				return true
			}
			for i := range got {
				if matchLines(want, got[i:]) {
					return true
				}
			}
			return false
		}
		if len(got) == 0 || !matchLine(want[0], got[0]) {
			return false
		}
		want, got = want[1:], got[1:]
	}
	return len(got) == 0
}

func matchLine(want, got string) bool {
	if !strings.Contains(want, "{{") {
		return want == got
	}
	parts := wildcard.Split(want, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
}
