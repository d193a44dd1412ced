package api

import (
	"context"
	"encoding/json"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/dgraph/exec"
)

// NewExecutor returns the DQL executor of package exec over g as an
// Executor.
func NewExecutor(g *dgraph.Graph) Executor { return execAdapter{exec.New(g)} }

type execAdapter struct{ e *exec.Executor }

func (a execAdapter) Query(ctx context.Context, r dgraph.Reader, text string, vars map[string]string) (json.RawMessage, error) {
	res, err := a.e.Query(ctx, r, text, vars)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func (a execAdapter) Upsert(ctx context.Context, r dgraph.Reader, u *dql.Upsert, vars map[string]string) ([]dgraph.Mutation, json.RawMessage, error) {
	muts, res, err := a.e.Upsert(ctx, r, u, vars)
	if err != nil {
		return nil, nil, err
	}
	return muts, res.Data, nil
}
