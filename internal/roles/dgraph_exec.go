package roles

import (
	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraphapi"
)

// dgraphExecutor is the DQL executor behind Dgraph's API.
func dgraphExecutor(g *dgraph.Graph) dgraphapi.Executor { return dgraphapi.NewExecutor(g) }
