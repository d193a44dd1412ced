package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engineapi"
)

// GET or POST /moveTablet?tablet=<predicate>&group=<n>[&namespace=<ns>]:
// Dgraph Zero's tablet move, served on the alpha's port. In the predicate
// placement a predicate's data (its placed vertices, reverse edges,
// has-set and indexes) is one placement unit, and group n is shard n−1;
// the move is online (engine.DB.MoveUnit, docs/online-moves.md):
// transactions and queries go on, strictly serializable. With ACL on only
// a guardian of the galaxy may move tablets. Answers Zero's plain text on
// success ("Predicate: [p] moved from group [1] to [3]"), an error message
// and 400 (bad arguments, vertex placement, a shard still holding the
// tablet's old copy), 403 (not a guardian), 409 (the move raced a
// transaction: retry), 503 (the engine cannot move units now: a cluster between configuration epochs).

func (s *Server) httpMoveTablet(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "/moveTablet answers GET and POST", http.StatusMethodNotAllowed)
		return
	}
	code, msg := s.moveTablet(r.Context(), r.Header.Get("X-Dgraph-AccessToken"), r.URL.Query().Get("tablet"),
		r.URL.Query().Get("group"), r.URL.Query().Get("namespace"))
	if code != http.StatusOK {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, msg)
}

func (s *Server) moveTablet(ctx context.Context, token, tablet, group, namespace string) (int, string) {
	if s.acl.enabled {
		p, err := s.acl.authorize(token)
		if err != nil {
			return http.StatusUnauthorized, err.Error()
		}
		if !p.galaxyGuardian() {
			return http.StatusForbidden, "moving tablets needs a guardian of the galaxy"
		}
	}
	mv, ok := s.db.(engineapi.Mover)
	if !ok {
		return http.StatusServiceUnavailable, "this server's engine cannot move tablets"
	}
	if s.g.Placement() != dgraph.PlacementPredicate {
		return http.StatusBadRequest, "tablets move only in the predicate placement (weft serve --dgraph-placement predicate when the data is created)"
	}
	g, err := strconv.Atoi(group)
	if err != nil || g < 1 {
		return http.StatusBadRequest, fmt.Sprintf("group %q: want a group number from 1", group)
	}
	var ns uint64
	if namespace != "" {
		if ns, err = strconv.ParseUint(namespace, 10, 64); err != nil {
			return http.StatusBadRequest, fmt.Sprintf("namespace %q: %v", namespace, err)
		}
	}
	u, err := dgraph.PredicateUnit(ns, tablet)
	if err != nil {
		return http.StatusBadRequest, err.Error()
	}
	d, err := mv.CurrentDirectory(ctx)
	if err != nil {
		return http.StatusServiceUnavailable, err.Error()
	}
	from := d.HomeOf(u).Shard + 1
	if int(from) == g {
		return http.StatusOK, fmt.Sprintf("Predicate: [%s] is already in group [%d]", tablet, g)
	}
	switch err := mv.MoveUnit(ctx, u, g-1); {
	case err == nil:
		return http.StatusOK, fmt.Sprintf("Predicate: [%s] moved from group [%d] to [%d]", tablet, from, g)
	case errors.Is(err, engineapi.ErrBadRequest):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, engineapi.ErrAborted), errors.Is(err, engineapi.ErrOverloaded):
		return http.StatusConflict, err.Error()
	default:
		return http.StatusInternalServerError, err.Error()
	}
}
