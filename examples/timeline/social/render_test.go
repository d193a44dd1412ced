package social

import (
	"slices"
	"testing"

	"github.com/weft-db/weft/client/kronos"
)

const (
	b = kronos.Before
	a = kronos.After
	c = kronos.Concurrent
)

// TestTopoOrder covers the sort behind render_timeline (Figure 5): Kronos
// orders win, arrival order breaks ties.
func TestTopoOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		orders []kronos.Order // pairs (0,1) (0,2) … (1,2) …
		want   []int
	}{
		{"empty", 0, nil, []int{}},
		{"all concurrent keeps arrival", 3, []kronos.Order{c, c, c}, []int{0, 1, 2}},
		{"reply arrived first", 2, []kronos.Order{a}, []int{1, 0}},
		{"chain reversed", 3, []kronos.Order{a, a, a}, []int{2, 1, 0}},
		{"only the constrained pair moves", 4, []kronos.Order{c, a, c, c, c, c}, []int{1, 2, 0, 3}},
		{"unknown is free", 2, []kronos.Order{kronos.Unknown}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := topoOrder(tc.n, tc.orders)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTopoOrderRejectsCycleAndBadLength(t *testing.T) {
	// 0 ⇝ 1, 1 ⇝ 2, 2 ⇝ 0.
	if _, err := topoOrder(3, []kronos.Order{b, a, b}); err == nil {
		t.Fatal("cycle accepted")
	}
	if _, err := topoOrder(3, []kronos.Order{b}); err == nil {
		t.Fatal("short orders accepted")
	}
}

func TestInversions(t *testing.T) {
	p1 := Post{Event: 1}
	r2 := Post{Event: 2, ReplyTo: 1}
	r3 := Post{Event: 3, ReplyTo: 2}
	x4 := Post{Event: 4}
	all := map[uint64]Post{1: p1, 2: r2, 3: r3, 4: x4}
	for _, tc := range []struct {
		name  string
		shown []Post
		want  int
	}{
		{"in order", []Post{p1, r2, r3, x4}, 0},
		{"unrelated anywhere", []Post{x4, p1, r2}, 0},
		{"reply first", []Post{r2, p1}, 1},
		{"grandchild first, parent hidden", []Post{r3, x4, p1}, 1},
		{"all reversed", []Post{r3, r2, p1}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Inversions(tc.shown, all); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}
