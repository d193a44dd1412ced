package api

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	"github.com/weft-db/weft/internal/value"
)

// Namespaces (Dgraph's multi-tenancy): each namespace has its own
// predicates, schema, types, indexes, XIDs and users; its data lives under
// its own names in the engine (dgraph.NamespaceView) and a request acts in
// its token's namespace. Guardians of namespace 0 (the galaxy) create and
// delete namespaces.
//
// The registry: vertex "_dgacl|namespaces" keeps "next", the first id never
// given out (ids are never reused), and an edge to each namespace's vertex
// "_dgacl|ns|<n>", whose "state" is "live" or "deleted". Creating a
// namespace is one transaction (the registry, the namespace's vertex and
// its groot user); deleting one sets "deleted" in one transaction, then
// drops its data. Every transaction of a namespace n > 0 reads n's vertex
// into its read set, so a transaction racing the deletion of its namespace
// aborts rather than commit into a deleted namespace.

const (
	nsRegistryVertex = "_dgacl|namespaces"
	nsVertexPrefix   = "_dgacl|ns|"
	nsNextKey        = "next"
	nsStateKey       = "state"
	nsLive           = "live"
	nsDeleted        = "deleted"
	// spacesMax bounds the namespaces whose Graph a Server keeps open; a
	// full cache is cleared (reopening a namespace reads its schema).
	spacesMax = 1024
	// DefaultNamespacePassword is groot's password in a new namespace
	// when none is given, as in Dgraph.
	DefaultNamespacePassword = "password"
)

func nsVertex(ns uint64) string { return nsVertexPrefix + strconv.FormatUint(ns, 10) }

// space is one namespace as the server uses it: its Graph, the engine as
// it sees it, and its executor.
type space struct {
	id   uint64
	g    *dgraph.Graph
	db   engineapi.API
	exec Executor
}

// spaces caches the open namespaces.
type spaces struct {
	mu sync.Mutex
	m  map[uint64]*space
}

// graphExecutor is an Executor that can run over another Graph: the
// executor of a namespace. NewExecutor's is one.
type graphExecutor interface {
	forGraph(g *dgraph.Graph) Executor
}

func (a execAdapter) forGraph(g *dgraph.Graph) Executor { return NewExecutor(g) }

// space returns namespace ns, opening it when needed: a namespace that
// does not exist (or was deleted) is not opened, since opening creates its
// schema. That it still exists when a transaction commits is checked by
// the commit (enter).
func (s *Server) space(ctx context.Context, ns uint64) (*space, error) {
	s.spaces.mu.Lock()
	sp, ok := s.spaces.m[ns]
	s.spaces.mu.Unlock()
	if ok {
		return sp, nil
	}
	if err := s.live(ctx, ns); err != nil {
		return nil, err
	}
	return s.open(ctx, ns)
}

// open opens namespace ns and caches it.
func (s *Server) open(ctx context.Context, ns uint64) (*space, error) {
	g, err := s.g.Namespace(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("opening namespace %d: %w", ns, err)
	}
	sp := &space{id: ns, g: g, db: g.Engine(), exec: s.exec}
	if ge, ok := s.exec.(graphExecutor); ok {
		sp.exec = ge.forGraph(g)
	}
	s.spaces.mu.Lock()
	defer s.spaces.mu.Unlock()
	if cur, ok := s.spaces.m[ns]; ok {
		return cur, nil
	}
	if len(s.spaces.m) >= spacesMax {
		clear(s.spaces.m)
	}
	s.spaces.m[ns] = sp
	return sp, nil
}

// forget drops namespace ns from the cache (it was deleted).
func (s *Server) forget(ns uint64) {
	s.spaces.mu.Lock()
	delete(s.spaces.m, ns)
	s.spaces.mu.Unlock()
}

// nsState reads namespace ns's vertex at snap: its read and state ("" when
// it never existed).
func (s *Server) nsState(ctx context.Context, snap engineapi.Snapshot, ns uint64) (txn.Read, string, error) {
	v, err := s.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: nsVertex(ns)}, engineapi.ReadOptions{Props: true})
	if err != nil {
		return txn.Read{}, "", err
	}
	if !v.Exists {
		return v.Read, "", nil
	}
	return v.Read, v.Props[nsStateKey].Str(), nil
}

// checkState answers the error for a namespace that is not live.
func checkState(ns uint64, state string) error {
	switch state {
	case nsLive:
		return nil
	case nsDeleted:
		return errorf(CodeInvalid, "namespace %#x was deleted", ns)
	}
	return errorf(CodeInvalid, "namespace %#x does not exist", ns)
}

// live reports (as an error) whether namespace ns exists now.
func (s *Server) live(ctx context.Context, ns uint64) error {
	if ns == 0 {
		return nil
	}
	snap, err := s.db.Begin(ctx)
	if err != nil {
		return err
	}
	_, state, err := s.nsState(ctx, snap, ns)
	if err != nil {
		return err
	}
	return checkState(ns, state)
}

// enter returns p's namespace for a request at snap and the read of its
// registry vertex, which the request's transaction must validate (none
// for namespace 0, which always exists).
func (s *Server) enter(ctx context.Context, p principal, snap engineapi.Snapshot) (*space, *txn.Read, error) {
	if p.ns == 0 {
		sp, err := s.space(ctx, 0)
		return sp, nil, err
	}
	read, state, err := s.nsState(ctx, snap, p.ns)
	if err != nil {
		return nil, nil, err
	}
	if err := checkState(p.ns, state); err != nil {
		return nil, nil, err
	}
	sp, err := s.space(ctx, p.ns)
	return sp, &read, err
}

// createNamespace makes a namespace with a groot user (group guardians)
// whose password is password: Dgraph's addNamespace.
func (s *Server) createNamespace(ctx context.Context, p principal, password string) (uint64, error) {
	if err := s.checkNamespaceAdmin(p, "create"); err != nil {
		return 0, err
	}
	if password == "" {
		password = DefaultNamespacePassword
	}
	if len([]rune(password)) < 6 {
		return 0, errorf(CodeInvalid, "the password of groot in a new namespace needs at least 6 characters")
	}
	var id uint64
	err := s.retryEngine(ctx, func() error {
		snap, err := s.db.Begin(ctx)
		if err != nil {
			return err
		}
		reg, err := s.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: nsRegistryVertex}, engineapi.ReadOptions{Props: true})
		if err != nil {
			return err
		}
		id = 1
		var ops []txn.Op
		if reg.Exists {
			id = uint64(reg.Props[nsNextKey].Int())
		} else {
			ops = append(ops, txn.Op{Kind: txn.CreateVertex, Vertex: nsRegistryVertex})
		}
		h := nsVertex(id)
		ops = append(ops,
			txn.Op{Kind: txn.SetVertexProp, Vertex: nsRegistryVertex, Key: nsNextKey, Value: value.I64(int64(id + 1))},
			txn.Op{Kind: txn.CreateVertex, Vertex: h},
			txn.Op{Kind: txn.SetVertexProp, Vertex: h, Key: nsStateKey, Value: value.Str(nsLive)},
			txn.Op{Kind: txn.CreateEdge, Vertex: nsRegistryVertex, Edge: strconv.FormatUint(id, 10), Dst: h})
		uops, uread, err := s.acl.userOps(ctx, snap, id, Groot, password, []string{Guardians}, true)
		if err != nil {
			return err
		}
		_, err = s.db.Commit(ctx, []txn.Read{reg.Read, uread}, append(ops, uops...))
		return err
	})
	if err != nil {
		return 0, wrap(err)
	}
	if _, err := s.space(ctx, id); err != nil { // creates its schema now rather than on first use
		return 0, wrap(err)
	}
	s.log.Info("dgraph namespace created", "namespace", id, "by", p.user)
	return id, nil
}

// deleteNamespace marks namespace ns deleted (its users can no longer log
// in, its open transactions abort) and drops its data: Dgraph's
// deleteNamespace.
func (s *Server) deleteNamespace(ctx context.Context, p principal, ns uint64) error {
	if err := s.checkNamespaceAdmin(p, "delete"); err != nil {
		return err
	}
	if ns == 0 {
		return errorf(CodeInvalid, "namespace 0 (the galaxy) cannot be deleted")
	}
	err := s.retryEngine(ctx, func() error {
		snap, err := s.db.Begin(ctx)
		if err != nil {
			return err
		}
		read, state, err := s.nsState(ctx, snap, ns)
		if err != nil {
			return err
		}
		if err := checkState(ns, state); err != nil {
			return err
		}
		_, err = s.db.Commit(ctx, []txn.Read{read},
			[]txn.Op{{Kind: txn.SetVertexProp, Vertex: nsVertex(ns), Key: nsStateKey, Value: value.Str(nsDeleted)}})
		return err
	})
	if err != nil {
		return wrap(err)
	}
	sp, err := s.open(ctx, ns) // the data is still there: open its Graph to drop it
	if err == nil {
		err = s.dropData(ctx, sp, true, true)
	}
	s.forget(ns)
	if err != nil {
		return wrap(fmt.Errorf("namespace %#x is deleted, but dropping its data failed (run deleteNamespace again is refused; the data is unreachable): %w", ns, err))
	}
	s.log.Info("dgraph namespace deleted", "namespace", ns, "by", p.user)
	return nil
}

// listNamespaces returns the live namespaces, 0 included, sorted.
func (s *Server) listNamespaces(ctx context.Context, p principal) ([]uint64, error) {
	if err := s.checkNamespaceAdmin(p, "list"); err != nil {
		return nil, err
	}
	snap, err := s.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return s.liveNamespaces(ctx, snap)
}

func (s *Server) liveNamespaces(ctx context.Context, snap engineapi.Snapshot) ([]uint64, error) {
	reg, err := s.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: nsRegistryVertex},
		engineapi.ReadOptions{Edges: true, EdgesMax: 1 << 20})
	if err != nil {
		return nil, err
	}
	if reg.EdgesTruncated {
		return nil, errorf(CodeInvalid, "more than %d namespaces", 1<<20)
	}
	out := []uint64{0}
	for _, e := range reg.Edges {
		id, err := strconv.ParseUint(e.Handle, 10, 64)
		if err != nil {
			continue
		}
		_, state, err := s.nsState(ctx, snap, id)
		if err != nil {
			return nil, err
		}
		if state == nsLive {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *Server) checkNamespaceAdmin(p principal, what string) error {
	if !s.acl.enabled {
		return errorf(CodeInvalid, "namespaces need access control (weft serve --acl-secret-file)")
	}
	if !p.galaxyGuardian() {
		return errorf(CodePermission, "only guardians of the galaxy (group %s of namespace 0) may %s namespaces", Guardians, what)
	}
	return nil
}

// retryEngine runs fn until it succeeds or fails for good (at most
// AttemptsMax attempts on conflicts).
func (s *Server) retryEngine(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !dgraph.Retryable(err) || attempt+1 >= s.cfg.AttemptsMax {
			return err
		}
		d := 1 << min(attempt, 8)
		if err := sleep(ctx, time.Duration(d)*time.Millisecond); err != nil {
			return err
		}
	}
}
