//go:build invariants

package graph

import (
	"fmt"
	"strings"
	"testing"
)

// In invariants builds every write verifies the whole graph afterwards.
func TestInvariantsCheckedAfterEachWrite(t *testing.T) {
	g := base(t)
	g.n.edges++ // corrupt the counters behind the graph's back
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "invariant broken after create_vertex") {
			t.Fatalf("panic %v", r)
		}
	}()
	_ = g.CreateVertex("n", at(9))
}
