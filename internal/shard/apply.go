package shard

import (
	"context"
	"fmt"

	"github.com/weft-db/weft/internal/graph"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/vclock"
)

// Apply executes one transaction's operations for a shard at stamp w on its
// graph partition and alias index. The store validated them, so an error is
// a bug (or a corrupt store). The engine and the simulator share it.
func Apply(g *graph.Graph, a *graph.AliasIndex, ops []txn.ShardOp, w vclock.Stamp) error {
	for _, op := range ops {
		var err error
		switch op.Kind {
		case txn.OpCreateVertex:
			err = g.CreateVertex(op.Vertex, w)
		case txn.OpDeleteVertex:
			err = g.DeleteVertex(op.Vertex, w)
		case txn.OpCreateEdge:
			err = g.CreateEdge(op.Vertex, op.Edge, op.Dst, w)
		case txn.OpDeleteEdge:
			err = g.DeleteEdge(op.Vertex, op.Edge, w)
		case txn.OpSetVertexProp:
			err = g.SetVertexProp(op.Vertex, op.Key, op.Value, w)
		case txn.OpDeleteVertexProp:
			err = g.DeleteVertexProp(op.Vertex, op.Key, w)
		case txn.OpSetEdgeProp:
			err = g.SetEdgeProp(op.Vertex, op.Edge, op.Key, op.Value, w)
		case txn.OpDeleteEdgeProp:
			err = g.DeleteEdgeProp(op.Vertex, op.Edge, op.Key, w)
		case txn.OpAddAlias:
			err = g.AddAlias(op.Vertex, op.Alias, w)
		case txn.OpRemoveAlias:
			err = g.RemoveAlias(op.Vertex, op.Alias, w)
		case txn.OpBindAlias:
			err = a.Bind(op.Alias, op.Vertex, w)
		case txn.OpUnbindAlias:
			err = a.Unbind(op.Alias, op.Vertex, w)
		default:
			err = fmt.Errorf("unknown shard operation %d", op.Kind)
		}
		if err != nil {
			return fmt.Errorf("%v %q: %w", op.Kind, op.Vertex, err)
		}
	}
	return nil
}

// ReadOrderer decides visibility for a read at stamp T: an applied write
// concurrent with T is ordered before it unless Kronos already holds the
// opposite ("writes before programs", dissertation §3.5.1). The first
// oracle failure is kept in Err; the read's answer is then unusable.
type ReadOrderer struct {
	Res *order.Resolver
	T   vclock.Stamp
	Err error
}

var background = context.Background()

// Before reports whether version stamp a precedes b for this read.
func (o *ReadOrderer) Before(a, b vclock.Stamp) bool {
	var before bool
	var err error
	switch {
	case vclock.CompareStamps(b, o.T) == vclock.Equal && a.Owner == o.T.Owner:
		before, err = o.Res.Prefer(background, a, o.T)
	case vclock.CompareStamps(a, o.T) == vclock.Equal && a.Owner == o.T.Owner:
		var bBefore bool
		bBefore, err = o.Res.Prefer(background, b, o.T)
		before = !bBefore
	default:
		before, err = o.Res.Prefer(background, a, b)
	}
	if err != nil && o.Err == nil {
		o.Err = err
	}
	return before
}
