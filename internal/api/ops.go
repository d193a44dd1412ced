package api

import (
	"fmt"
	"strings"

	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/wire/apicode"
)

// Op fields, as named in JSON and proto. An operation may set only the fields
// its kind uses: a stray field is almost always a client bug (a value sent with
// a delete, an edge handle with a vertex property), so it is rejected rather
// than ignored.
const (
	fVertex = 1 << iota
	fVertexAlias
	fEdge
	fDst
	fDstAlias
	fKey
	fValue
	fAlias
)

var fieldNames = []string{"vertex", "vertex_alias", "edge", "dst", "dst_alias", "key", "value", "alias"}

// opFields lists the fields each kind may set.
var opFields = map[txn.Kind]int{
	txn.CreateVertex:     fVertex,
	txn.DeleteVertex:     fVertex | fVertexAlias,
	txn.CreateEdge:       fVertex | fVertexAlias | fEdge | fDst | fDstAlias,
	txn.DeleteEdge:       fVertex | fVertexAlias | fEdge,
	txn.SetVertexProp:    fVertex | fVertexAlias | fKey | fValue,
	txn.DeleteVertexProp: fVertex | fVertexAlias | fKey,
	txn.SetEdgeProp:      fVertex | fVertexAlias | fEdge | fKey | fValue,
	txn.DeleteEdgeProp:   fVertex | fVertexAlias | fEdge | fKey,
	txn.AddAlias:         fVertex | fVertexAlias | fAlias,
	txn.RemoveAlias:      fVertex | fVertexAlias | fAlias,
}

// setFields reports which fields of o are set (non-zero).
func setFields(o *txn.Op) int {
	f := 0
	set := func(bit int, on bool) {
		if on {
			f |= bit
		}
	}
	set(fVertex, o.Vertex != "")
	set(fVertexAlias, o.VertexAlias)
	set(fEdge, o.Edge != "")
	set(fDst, o.Dst != "")
	set(fDstAlias, o.DstAlias)
	set(fKey, o.Key != "")
	set(fValue, !o.Value.IsNull())
	set(fAlias, o.Alias != "")
	return f
}

// opKindNames lists the operation names for error messages.
func opKindNames() string {
	names := make([]string, 0, txn.RemoveAlias)
	for k := txn.CreateVertex; k <= txn.RemoveAlias; k++ {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// checkOp checks one operation's shape: only its kind's fields set, a value
// for set_*_prop, then txn's own validation (names, lengths, value size).
func checkOp(i int, o *txn.Op) error {
	allowed, ok := opFields[o.Kind]
	if !ok {
		return invalid(fmt.Sprintf("ops[%d]: unknown operation (want one of %s)", i, opKindNames()))
	}
	if stray := setFields(o) &^ allowed; stray != 0 {
		var names []string
		for b, n := range fieldNames {
			if stray&(1<<b) != 0 {
				names = append(names, n)
			}
		}
		return invalid(fmt.Sprintf("ops[%d] (%s): field %s is not used by %s", i, o.Kind, strings.Join(names, ", "), o.Kind))
	}
	if (o.Kind == txn.SetVertexProp || o.Kind == txn.SetEdgeProp) && o.Value.IsNull() {
		return invalid(fmt.Sprintf("ops[%d] (%s): missing value (to remove a property, use %s)", i, o.Kind,
			strings.Replace(o.Kind.String(), "set_", "delete_", 1)))
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("ops[%d] (%s): %w", i, o.Kind, err)
	}
	return nil
}

// checkSizes checks a commit's counts against txn's limits.
func checkSizes(reads, ops int) error {
	if ops > txn.OpsMax {
		return &Error{Code: apicode.CodeTooLarge, Message: fmt.Sprintf("%d operations, at most %d", ops, txn.OpsMax)}
	}
	if reads > txn.ReadsMax {
		return &Error{Code: apicode.CodeTooLarge, Message: fmt.Sprintf("%d reads, at most %d", reads, txn.ReadsMax)}
	}
	return nil
}

// checkCommit checks a commit request's shape before it reaches the engine.
func checkCommit(reads []txn.Read, ops []txn.Op) error {
	if err := checkSizes(len(reads), len(ops)); err != nil {
		return err
	}
	for i := range reads {
		if err := txn.ValidName("vertex", reads[i].Vertex, txn.HandleLenMax); err != nil {
			return fmt.Errorf("reads[%d]: %w", i, err)
		}
	}
	for i := range ops {
		if err := checkOp(i, &ops[i]); err != nil {
			return err
		}
	}
	return nil
}
