package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-db/weft/internal/dgraph"
	"github.com/weft-db/weft/internal/dgraph/dql"
	"github.com/weft-db/weft/internal/engineapi"
	"github.com/weft-db/weft/internal/txn"
	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// Executor runs DQL for the endpoints, reading through r (which records
// the reads of a transaction). *exec.Executor fits through
// NewExecutor.
type Executor interface {
	// Query answers a query: the JSON object of its blocks, without a
	// "data" wrapper ({"q": [...]}).
	Query(ctx context.Context, r dgraph.Reader, text string, vars map[string]string) (json.RawMessage, error)
	// Upsert runs an upsert block's query and returns the mutations whose
	// conditions hold, with uid(v) and val(v) replaced, and the query's
	// JSON answer.
	Upsert(ctx context.Context, r dgraph.Reader, u *dql.Upsert, vars map[string]string) ([]dgraph.Mutation, json.RawMessage, error)
}

// Server is Dgraph's API on a Weft engine, independent of the transport:
// the gRPC service (grpc.go) and the HTTP handlers (http.go) translate to
// its methods. Safe for concurrent use.
type Server struct {
	cfg    Config
	g      *dgraph.Graph
	db     engineapi.API
	exec   Executor
	txns   *txnTable
	acl    *acl
	log    *slog.Logger
	spaces spaces // the open namespaces (namespace.go)
}

// New returns a Server over g. exec may be nil: queries then fail, and
// mutations without queries still work. Call Init before serving.
func New(g *dgraph.Graph, exec Executor, cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := newACL(g.Engine(), cfg.ACL, cfg.Now)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, g: g, db: g.Engine(), exec: exec, txns: newTxnTable(cfg.TxnsMax, cfg.TxnIdle, cfg.Now),
		acl: a, log: cfg.Logger, spaces: spaces{m: map[uint64]*space{}}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Init creates the groot user (ACL on) unless it exists.
func (s *Server) Init(ctx context.Context) error {
	if !s.acl.enabled {
		return nil
	}
	return s.acl.setUser(ctx, 0, Groot, s.cfg.ACL.GrootPassword, []string{Guardians}, false)
}

// OpenTxns is the number of transactions the server remembers.
func (s *Server) OpenTxns() int { return s.txns.len() }

// request is one Dgraph request, from either face.
type request struct {
	startTs    uint64
	hash       string
	readOnly   bool
	bestEffort bool
	commitNow  bool
	query      string
	vars       map[string]string
	muts       []*dql.Mutation
	upsert     *dql.Upsert // a whole upsert block or { set … } (RDF /mutate, RunDQL)
}

func (rq *request) mutating() bool {
	return len(rq.muts) > 0 || (rq.upsert != nil && len(rq.upsert.Mutations) > 0)
}

// outcome is a request's answer.
type outcome struct {
	data    json.RawMessage
	uids    map[string]string
	txn     *pb.TxnContext
	latency *pb.Latency
}

// do runs one request for p.
func (s *Server) do(ctx context.Context, p principal, rq *request) (*outcome, error) {
	start := time.Now()
	switch {
	case rq.query == "" && !rq.mutating():
		return nil, errorf(CodeInvalid, "empty request")
	case rq.bestEffort && !rq.readOnly:
		return nil, errorf(CodeInvalid, "A best effort query must be read-only.")
	case rq.mutating() && rq.readOnly:
		return nil, errorf(CodeInvalid, "Readonly transaction cannot run mutations")
	}
	var out *outcome
	var err error
	if rq.startTs == 0 && rq.commitNow {
		out, err = s.oneShot(ctx, p, rq)
	} else {
		out, err = s.inTxn(ctx, p, rq)
	}
	if err != nil {
		return nil, classify(err)
	}
	total := uint64(time.Since(start).Nanoseconds())
	out.latency = &pb.Latency{ProcessingNs: total, TotalNs: total}
	return out, nil
}

// oneShot runs a request that is a whole transaction (no start_ts, commit
// now): at a fresh snapshot, committed with every read it made, retried
// from the start on conflicts.
func (s *Server) oneShot(ctx context.Context, p principal, rq *request) (*outcome, error) {
	memo := dgraph.NewMemo()
	for attempt := 0; ; attempt++ {
		out, err := s.oneAttempt(ctx, p, rq, memo)
		if err == nil || !dgraph.Retryable(err) || attempt+1 >= s.cfg.AttemptsMax {
			return out, err
		}
		d := time.Millisecond << min(attempt, 8)
		if err := sleep(ctx, d/2+rand.N(d/2+1)); err != nil {
			return nil, err
		}
	}
}

func (s *Server) oneAttempt(ctx context.Context, p principal, rq *request, memo *dgraph.Memo) (*outcome, error) {
	snap, err := s.db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	sp, nsRead, err := s.enter(ctx, p, snap)
	if err != nil {
		return nil, err
	}
	r := dgraph.NewSnapshotReader(sp.db, snap, true)
	if nsRead != nil {
		r.Note(*nsRead)
	}
	muts, data, err := s.evaluate(ctx, sp, r, rq)
	if err != nil {
		return nil, err
	}
	out := &outcome{data: data, txn: &pb.TxnContext{StartTs: s.txns.newID()}}
	if len(muts) > 0 {
		prep, err := sp.g.Prepare(ctx, snap, muts, memo)
		if err != nil {
			return nil, err
		}
		if _, err = sp.g.Commit(ctx, prep, r.Reads()); err != nil {
			return nil, err
		}
		out.uids, out.txn.Preds = prep.UIDs, predNames(sp.id, prep.Preds)
	}
	out.txn.CommitTs = s.txns.newID()
	return out, nil
}

// inTxn runs a request of a transaction that spans requests.
func (s *Server) inTxn(ctx context.Context, p principal, rq *request) (*outcome, error) {
	var t *txnState
	if rq.startTs == 0 {
		snap, err := s.db.Begin(ctx)
		if err != nil {
			return nil, err
		}
		_, nsRead, err := s.enter(ctx, p, snap)
		if err != nil {
			return nil, err
		}
		if t, err = s.txns.open(snap, p.user, p.ns, rq.readOnly); err != nil {
			return nil, err
		}
		if nsRead != nil { // validated at commit: the namespace must still exist
			t.reads, t.readSeen[txnReadKey{nsRead.Vertex, nsRead.Alias}] = append(t.reads, *nsRead), true
		}
	} else {
		var err error
		if t, err = s.txns.get(rq.startTs); err != nil {
			return nil, err
		}
		if err := s.checkOwner(t, p, rq.hash); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, errAborted(fmt.Errorf("transaction %d is finished", t.id))
	}
	if rq.mutating() && t.readOnly {
		return nil, errorf(CodeInvalid, "Readonly transaction cannot run mutations")
	}
	sp, err := s.space(ctx, t.ns)
	if err != nil {
		return nil, err
	}
	out, err := s.step(ctx, sp, t, rq)
	if err != nil {
		if rq.startTs == 0 && !t.mutated() {
			// The client never learns this start_ts: forget it now.
			t.done = true
			s.txns.remove(t.id)
		}
		return nil, err
	}
	out.txn.StartTs = t.id
	if s.acl.enabled {
		out.txn.Hash = s.acl.txnHash(t.id, t.ns, t.user)
	}
	return out, nil
}

func (s *Server) checkOwner(t *txnState, p principal, hash string) error {
	if !s.acl.enabled {
		return nil
	}
	if t.user != p.user || t.ns != p.ns {
		return errorf(CodePermission, "transaction %d belongs to another user", t.id)
	}
	return s.acl.checkHash(t.id, t.ns, t.user, hash)
}

// step runs rq inside t (locked): its query reads at t's snapshot and
// joins t's read set; its mutations join t's buffer, evaluated with the
// earlier ones; commit_now commits the lot.
func (s *Server) step(ctx context.Context, sp *space, t *txnState, rq *request) (*outcome, error) {
	r := dgraph.NewSnapshotReader(sp.db, t.snap, !t.readOnly)
	var qr dgraph.Reader = r
	if t.prepared != nil {
		qr = newOverlayReader(r, t.prepared.Ops) // the transaction sees its own writes
	}
	muts, data, err := s.evaluate(ctx, sp, qr, rq)
	if err != nil {
		return nil, err
	}
	var reads []txn.Read
	for _, rd := range r.Reads() {
		if !t.readSeen[txnReadKey{rd.Vertex, rd.Alias}] {
			reads = append(reads, rd)
		}
	}
	if len(t.reads)+len(reads) > txn.ReadsMax {
		return nil, errorf(CodeInvalid, "transaction %d read %d vertices, more than one transaction may validate (%d)",
			t.id, len(t.reads)+len(reads), txn.ReadsMax)
	}
	out := &outcome{data: data, txn: &pb.TxnContext{}}
	if len(muts) > 0 {
		all := append(slices.Clone(t.muts), muts...)
		prep, err := sp.g.Prepare(ctx, t.snap, all, nil)
		if err != nil {
			return nil, err
		}
		if len(prep.Ops) > txn.OpsMax {
			return nil, errorf(CodeInvalid, "transaction %d needs %d operations, at most %d fit in one transaction",
				t.id, len(prep.Ops), txn.OpsMax)
		}
		sub, err := dgraph.SubstituteBlanks(muts, prep.UIDs)
		if err != nil {
			return nil, err
		}
		t.muts, t.prepared, out.uids = append(t.muts, sub...), prep, prep.UIDs
		out.txn.Keys, out.txn.Preds = t.note(prep)
	}
	for _, rd := range reads {
		t.readSeen[txnReadKey{rd.Vertex, rd.Alias}] = true
	}
	t.reads = append(t.reads, reads...)
	if rq.commitNow {
		ts, err := s.commit(ctx, sp, t)
		if err != nil {
			return nil, err
		}
		out.txn.CommitTs, out.txn.Keys = ts, nil
	}
	return out, nil
}

// note records prep's keys and predicates in t and returns the new ones.
// A key names a changed node ("<uid>"), a predicate is "<ns>-<pred>"
// (Dgraph's namespace-predicate form); clients only echo them.
func (t *txnState) note(prep *dgraph.Prepared) (keys, preds []string) {
	for _, u := range prep.Subjects {
		k := dgraph.FormatUID(u)
		if !t.keys[k] {
			t.keys[k] = true
			keys = append(keys, k)
		}
	}
	for _, p := range predNames(t.ns, prep.Preds) {
		if !t.preds[p] {
			t.preds[p] = true
			preds = append(preds, p)
		}
	}
	return keys, preds
}

func predNames(ns uint64, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.FormatUint(ns, 10) + "-" + p
	}
	return out
}

// commit commits t (locked) and forgets it, whatever the outcome.
func (s *Server) commit(ctx context.Context, sp *space, t *txnState) (uint64, error) {
	t.done = true
	s.txns.remove(t.id)
	if !t.mutated() {
		return s.txns.newID(), nil // reads at one snapshot: nothing to validate
	}
	_, err := sp.g.Commit(ctx, t.prepared, t.reads)
	for attempt := 1; err != nil && dgraph.Retryable(err) && attempt < s.cfg.AttemptsMax; attempt++ {
		err = s.recommit(ctx, sp, t)
	}
	if err != nil {
		if dgraph.Retryable(err) {
			return 0, errAborted(err)
		}
		return 0, err
	}
	return s.txns.newID(), nil
}

// errStale reports a query read that changed since the transaction's
// snapshot: a true conflict.
var errStale = errAborted(errors.New("a vertex the transaction read has changed"))

// recommit evaluates t's mutations again at a fresh snapshot and commits
// them with t's query reads. A commit of mutations prepared at t's
// snapshot can fail without any conflict with what t read: a concurrent
// transaction created an index or has-set vertex t also creates, or
// changed a node t only writes. Re-evaluating is sound because every read
// t's queries made is still validated by the commit (the client saw only
// those, and the UIDs of its blank nodes, which are fixed); a query read
// that did change is a real conflict and aborts at once.
func (s *Server) recommit(ctx context.Context, sp *space, t *txnState) error {
	snap, err := s.db.Begin(ctx)
	if err != nil {
		return err
	}
	if err := s.checkReads(ctx, snap, t.reads); err != nil {
		return err
	}
	prep, err := sp.g.Prepare(ctx, snap, t.muts, nil)
	if err != nil {
		return err
	}
	_, err = sp.g.Commit(ctx, prep, t.reads)
	return err
}

// checkReads answers errStale, which is not retried, when a read's
// version differs at snap.
func (s *Server) checkReads(ctx context.Context, snap engineapi.Snapshot, reads []txn.Read) error {
	for _, r := range reads {
		v, err := s.db.GetVertex(ctx, snap, engineapi.VertexRef{Name: r.Vertex, Alias: r.Alias}, engineapi.ReadOptions{})
		if err != nil {
			return err
		}
		got := v.Read
		if r.Alias && v.AliasRead != nil {
			got = *v.AliasRead
		}
		if !bytes.Equal(got.Version, r.Version) {
			return &Error{Code: errStale.Code, Msg: errStale.Msg}
		}
	}
	return nil
}

// evaluate runs rq's query (or upsert query) through r and returns the
// mutations to apply and the query's JSON.
func (s *Server) evaluate(ctx context.Context, sp *space, r dgraph.Reader, rq *request) ([]dgraph.Mutation, json.RawMessage, error) {
	up := rq.upsert
	if up == nil && len(rq.muts) > 0 {
		var plain []dgraph.Mutation
		for _, m := range rq.muts {
			if pm, ok := plainMutation(m); ok {
				plain = append(plain, pm)
			}
		}
		if rq.query == "" {
			if len(plain) < len(rq.muts) {
				return nil, nil, errorf(CodeInvalid, "a mutation with a condition or uid()/val() needs a query")
			}
			return plain, nil, nil
		}
		var uses []string
		for _, m := range rq.muts {
			uses = append(uses, m.Uses()...)
		}
		q, err := dql.ParseWith(rq.query, dql.Options{Vars: rq.vars, Uses: uses})
		if err != nil {
			return nil, nil, err
		}
		up = &dql.Upsert{Query: q, Mutations: rq.muts}
	}
	if up != nil && up.Query == nil {
		var plain []dgraph.Mutation
		for _, m := range up.Mutations {
			pm, ok := plainMutation(m)
			if !ok {
				return nil, nil, errorf(CodeInvalid, "a mutation with a condition or uid()/val() needs a query")
			}
			plain = append(plain, pm)
		}
		return plain, nil, nil
	}
	if sp.exec == nil {
		return nil, nil, errorf(CodeUnimplemented, "DQL queries are not available: no query executor is configured")
	}
	if up != nil {
		return sp.exec.Upsert(ctx, r, up, rq.vars)
	}
	data, err := sp.exec.Query(ctx, r, rq.query, rq.vars)
	return nil, data, err
}

// commitOrAbort ends transaction startTs: Dgraph's CommitOrAbort and /commit.
func (s *Server) commitOrAbort(ctx context.Context, p principal, startTs uint64, hash string, abort bool) (*pb.TxnContext, error) {
	if startTs == 0 {
		return nil, errorf(CodeInvalid, "StartTs cannot be zero while committing a transaction")
	}
	t, err := s.txns.get(startTs)
	if err != nil {
		if abort {
			return &pb.TxnContext{StartTs: startTs, Aborted: true}, nil
		}
		return nil, err
	}
	if err := s.checkOwner(t, p, hash); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if abort || t.done {
		t.done = true
		s.txns.remove(t.id)
		if abort {
			return &pb.TxnContext{StartTs: startTs, Aborted: true}, nil
		}
		return nil, errAborted(fmt.Errorf("transaction %d is finished", t.id))
	}
	sp, err := s.space(ctx, t.ns)
	if err != nil {
		return nil, classify(err)
	}
	ts, err := s.commit(ctx, sp, t)
	if err != nil {
		return nil, classify(err)
	}
	return &pb.TxnContext{StartTs: startTs, CommitTs: ts}, nil
}

// alter applies a schema change or a drop (guardians only) in p's
// namespace.
func (s *Server) alter(ctx context.Context, p principal, op *pb.Operation) error {
	if !p.guardian() {
		return errorf(CodePermission, "only members of %s may alter the schema", Guardians)
	}
	if err := s.live(ctx, p.ns); err != nil {
		return err
	}
	sp, err := s.space(ctx, p.ns)
	if err != nil {
		return wrap(err)
	}
	drop := op.DropOp
	if op.DropAll {
		drop = pb.Operation_ALL
	}
	if op.DropAttr != "" {
		drop, op.DropValue = pb.Operation_ATTR, op.DropAttr
	}
	switch drop {
	case pb.Operation_NONE:
		if strings.TrimSpace(op.Schema) == "" {
			return errorf(CodeInvalid, "operation is empty: no schema and no drop")
		}
		_, err := sp.g.Alter(ctx, op.Schema)
		return wrap(err)
	case pb.Operation_ATTR:
		if op.DropValue == "" {
			return errorf(CodeInvalid, "drop_op ATTR needs drop_value, the predicate")
		}
		return wrap(sp.g.DropPredicate(ctx, op.DropValue))
	case pb.Operation_ALL:
		if p.ns == 0 {
			return s.dropGalaxy(ctx)
		}
		return s.dropData(ctx, sp, true, false)
	case pb.Operation_DATA:
		return s.dropData(ctx, sp, false, false)
	}
	return errorf(CodeUnimplemented, "drop_op %v is not supported", drop)
}

// dropData drops every predicate's data of namespace sp (Dgraph's DROP_ALL
// and DROP_DATA), predicate by predicate. DATA then restores the
// definitions. Nodes stay (Weft never deletes them; with no values they
// match nothing) and type definitions stay. everything drops xid too (a
// deleted namespace's data); Dgraph's own dgraph.* predicates cannot be
// dropped, so a deleted namespace's dgraph.type values stay, unreachable.
func (s *Server) dropData(ctx context.Context, sp *space, all, everything bool) error {
	sch, err := sp.g.Schema(ctx)
	if err != nil {
		return wrap(err)
	}
	text := sch.String()
	for _, P := range sch.Predicates() {
		if strings.HasPrefix(P.Name, "dgraph.") || (!everything && P.Name == dgraph.XIDPred) {
			continue
		}
		if err := sp.g.DropPredicate(ctx, P.Name); err != nil {
			return wrap(fmt.Errorf("dropping %s: %w", P.Name, err))
		}
	}
	if !all {
		if _, err := sp.g.Alter(ctx, text); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// dropGalaxy is drop_all by a guardian of the galaxy: as in Dgraph, it
// drops the data and schema of every namespace (the namespaces and their
// users stay).
func (s *Server) dropGalaxy(ctx context.Context) error {
	snap, err := s.db.Begin(ctx)
	if err != nil {
		return wrap(err)
	}
	ids, err := s.liveNamespaces(ctx, snap)
	if err != nil {
		return wrap(err)
	}
	for _, ns := range ids {
		sp, err := s.space(ctx, ns)
		if err != nil {
			return wrap(err)
		}
		if err := s.dropData(ctx, sp, true, false); err != nil {
			return fmt.Errorf("namespace %#x: %w", ns, err)
		}
	}
	return nil
}

// allocate leases IDs: UIDs from the graph, timestamps from the
// transaction counter; namespaces do not exist. end is inclusive.
func (s *Server) allocate(ctx context.Context, p principal, n uint64, kind pb.LeaseType) (start, end uint64, err error) {
	if !p.guardian() {
		return 0, 0, errorf(CodePermission, "only members of %s may allocate IDs", Guardians)
	}
	if n == 0 {
		return 0, 0, errorf(CodeInvalid, "how_many must be positive")
	}
	switch kind {
	case pb.LeaseType_UID:
		start, end, err := s.g.Lease(ctx, n)
		if err != nil {
			return 0, 0, classify(err)
		}
		return start, end - 1, nil
	case pb.LeaseType_TS:
		if n > 1<<20 {
			return 0, 0, errorf(CodeInvalid, "at most %d timestamps at once", 1<<20)
		}
		start = s.txns.newID()
		for range n - 1 {
			end = s.txns.newID()
		}
		return start, max(start, end), nil
	}
	return 0, 0, errorf(CodeUnimplemented, "lease type %v: namespaces are created with addNamespace (/admin) or CreateNamespace", kind)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
