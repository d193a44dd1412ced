package nodeprog

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weft-db/weft/internal/value"
)

var appendStrings = []string{"", "v1", "a b", `q"uote`, `back\slash`, "<tag>&amp;", "é", "\u2028", "\x00\x1f", "\xff\xfe", "日本", "tab\t"}

func randProps(r *rand.Rand) map[string]value.Value {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return map[string]value.Value{}
	}
	m := map[string]value.Value{}
	for i := r.IntN(5); i >= 0; i-- {
		k := appendStrings[r.IntN(len(appendStrings))]
		switch r.IntN(6) {
		case 0:
			m[k] = value.Str(appendStrings[r.IntN(len(appendStrings))])
		case 1:
			m[k] = value.I64(r.Int64() - r.Int64())
		case 2:
			m[k] = value.F64(r.NormFloat64() * 1e10)
		case 3:
			m[k] = value.Boolean(r.IntN(2) == 0)
		case 4:
			m[k] = value.Time(time.Unix(r.Int64N(1e10), r.Int64N(1e9)).UTC())
		default:
			m[k] = value.ListOf(value.I64(1), value.Str(appendStrings[r.IntN(len(appendStrings))]))
		}
	}
	return m
}

func randEdges(r *rand.Rand) []EdgeView {
	if r.IntN(4) == 0 {
		return nil
	}
	out := []EdgeView{}
	for i := r.IntN(4); i > 0; i-- {
		s := func() string { return appendStrings[r.IntN(len(appendStrings))] }
		out = append(out, EdgeView{Handle: s(), Src: s(), Dst: s(), Props: randProps(r)})
	}
	return out
}

// TestAppendJSONMatchesMarshal: every result type's AppendJSON gives the
// bytes json.Marshal gives, on random values with awkward strings.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		s := appendStrings[r.IntN(len(appendStrings))]
		var aliases []string
		if r.IntN(2) == 0 {
			aliases = []string{s, "x"}
		}
		for _, v := range []JSONAppender{
			EdgeList{Edges: randEdges(r)},
			EdgeCount{Count: r.IntN(1000) - 10},
			NodeView{Handle: s, Props: randProps(r), Edges: randEdges(r), Aliases: aliases},
			NodeProps{Node: s, Props: randProps(r)},
		} {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.AppendJSON(nil)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%T %+v:\nAppendJSON %s (%v)\njson.Marshal %s", v, v, got, err, want)
			}
		}
	}
}
