package roles

import (
	"github.com/weft-db/weft/internal/dgraph"
	dgraphapi "github.com/weft-db/weft/internal/dgraph/api"
)

// dgraphExecutor is the DQL executor behind Dgraph's API.
func dgraphExecutor(g *dgraph.Graph) dgraphapi.Executor { return dgraphapi.NewExecutor(g) }
