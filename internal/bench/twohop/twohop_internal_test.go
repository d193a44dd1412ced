package twohop

import (
	"slices"
	"strings"
	"testing"
)

// TestTwoHopCounts: the generator's answers against a count by sets.
func TestTwoHopCounts(t *testing.T) {
	g := NewGraph(200, 900, 7)
	if g.Vertices() != 200 || g.Edges() != 900 {
		t.Fatalf("graph of %d vertices, %d edges", g.Vertices(), g.Edges())
	}
	srcs, want := g.Answers(50, 7)
	for i, v := range srcs {
		set := map[int32]bool{}
		for _, b := range g.Out(v) {
			for _, c := range g.Out(int(b)) {
				set[c] = true
			}
		}
		if len(set) != want[i] {
			t.Fatalf("query %d (%s): %d, by sets %d", i, Handle(v), want[i], len(set))
		}
	}
	if s2, w2 := NewGraph(200, 900, 7).Answers(50, 7); !slices.Equal(s2, srcs) || !slices.Equal(w2, want) {
		t.Fatal("the same seed drew other queries or answers")
	}
}

// TestCheckAnswers: one wrong answer fails the cell, naming the source.
func TestCheckAnswers(t *testing.T) {
	if err := checkAnswers([]int{1, 2}, []int{5, 6}, []int{5, 6}); err != nil {
		t.Fatal(err)
	}
	err := checkAnswers([]int{1, 2}, []int{5, 7}, []int{5, 6})
	if err == nil || !strings.Contains(err.Error(), "1 of 2 answers wrong: v2 answered 7, want 6") {
		t.Fatalf("a wrong answer: %v", err)
	}
}
