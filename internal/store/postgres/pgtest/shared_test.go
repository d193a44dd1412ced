package pgtest

import (
	"regexp"
	"strings"
	"testing"
)

// TestSchemaName: names are plain identifiers of at most 63 bytes, distinct
// for every call, whatever the test's name holds.
func TestSchemaName(t *testing.T) {
	ident := regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	seen := map[string]bool{}
	for _, name := range []string{"A/b c", strings.Repeat("Ü", 80), "x;DROP TABLE y", ""} {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				n := schemaName(t)
				if !ident.MatchString(n) || seen[n] {
					t.Fatalf("schema name %q: not a fresh plain identifier", n)
				}
				seen[n] = true
			}
		})
	}
}
