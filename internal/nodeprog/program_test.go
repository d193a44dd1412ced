package nodeprog_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-db/weft/internal/nodeprog"
	"github.com/weft-db/weft/internal/nodeprog/progtest"
)

// A program defined outside the package with Def: the sum of property
// "i" over the vertices within max_hops of src (each counted once).

type sumParams struct {
	Src     string `json:"src"`
	MaxHops int    `json:"max_hops"`
}

type sumArg struct {
	Hops int `json:"hops"`
}

type sumState struct{ hops int }

type sumGather struct{ byVertex map[string]int64 }

func (g *sumGather) Add(e [2]any) (bool, error) {
	g.byVertex[e[0].(string)] = int64(e[1].(float64))
	return false, nil
}

func (g *sumGather) Result() (any, error) {
	var s int64
	for _, x := range g.byVertex {
		s += x
	}
	return map[string]int64{"sum": s}, nil
}

var sumProgram = &nodeprog.Def[sumParams, sumArg, [2]any]{
	ProgName: "sum_within",
	Parse: func(raw json.RawMessage) (*sumParams, error) {
		var p sumParams
		if err := nodeprog.DecodeParams("sum_within", raw, &p); err != nil {
			return nil, err
		}
		if p.Src == "" {
			return nil, &nodeprog.ParamError{Program: "sum_within", Field: "src", Msg: "required"}
		}
		return &p, nil
	},
	Start: func(p *sumParams) []nodeprog.Hop { return []nodeprog.Hop{{To: p.Src, Arg: sumArg{}}} },
	Step: func(c *nodeprog.Ctx, p *sumParams, v nodeprog.Vertex, a sumArg) error {
		if st := nodeprog.LookupState[sumState](c); st != nil && st.hops <= a.Hops {
			return nil
		}
		st, err := nodeprog.StateOf[sumState](c)
		if err != nil {
			return err
		}
		st.hops = a.Hops
		i, _ := v.Prop("i")
		c.Emit([2]any{v.Handle(), float64(i.Int())})
		if a.Hops < p.MaxHops {
			v.Edges(func(e nodeprog.Edge) bool {
				c.Hop(e.Dst(), sumArg{Hops: a.Hops + 1})
				return true
			})
		}
		return nil
	},
	Gather: func(*sumParams) nodeprog.GatherOf[[2]any] { return &sumGather{byVertex: map[string]int64{}} },
}

func TestUserProgram(t *testing.T) {
	r := nodeprog.NewRegistry()
	if err := r.Register(sumProgram); err != nil {
		t.Fatal(err)
	}
	g := ringGraph(6)
	for i := range 6 {
		g.AddVertex("r"+string(rune('0'+i)), props("i", i*10))
	}
	for _, o := range layouts {
		res, _, err := progtest.NewCluster(g, r, o).Run("sum_within", `{"src":"r4","max_hops":3}`)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, res, `{"sum":100}`) // r4, r5, r0, r1
	}
	if _, err := r.Compile("sum_within", []byte(`{"max_hops":1}`)); !errors.Is(err, nodeprog.ErrBadParams) {
		t.Fatalf("missing src: %v", err)
	}
}
