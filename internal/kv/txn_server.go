package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// The network shell of the Kronos transactional mode (txn.go): any server
// coordinates the transactions its clients send to POST /v1/kv/txn; each
// part goes to its key's primary server as POST /v1/kv/txn/prepare (the
// participant queues it and asks the shared Kronos, ServerConfig.Oracle, to
// order it after the transactions before it on its keys: its vote), then
// POST /v1/kv/txn/decide (commit or abort; a committed part runs once it
// heads its keys' queues, and the answer carries its reads). The
// coordinator answers the client once every part ran.

// TxnPrepareRequest is POST /v1/kv/txn/prepare: one server's part.
type TxnPrepareRequest struct {
	Txn    kvcore.StampJSON      `json:"txn"`
	Reads  []string              `json:"reads,omitempty"`
	Writes []kvcore.TxnWriteJSON `json:"writes,omitempty"`
}

// TxnVote answers a prepare: OK, or the reason for a no.
type TxnVote struct {
	OK    bool              `json:"ok"`
	Error *kvcore.ErrorBody `json:"error,omitempty"`
}

// TxnDecideRequest is POST /v1/kv/txn/decide.
type TxnDecideRequest struct {
	Txn    kvcore.StampJSON `json:"txn"`
	Commit bool             `json:"commit"`
}

// TxnDecideResponse answers it; for a commit, once the part ran.
type TxnDecideResponse struct {
	Reads map[string][]kvcore.Sibling `json:"reads,omitempty"`
}

// txnShell is a server's transactional state: the participant core, the
// reads of parts that ran (until their decide call takes them), and the
// coordinator's stamp counter.
type txnShell struct {
	mu      sync.Mutex
	part    *TxnParticipant
	results map[string]txnResult
	waiters map[string]chan struct{}
	seq     uint64
	hc      *http.Client
	// Participant bookkeeping: each pending part's stored sequence number
	// (txn_store.go), and the undecided ones with when they were prepared
	// (the janitor asks their coordinators after TxnTimeout; recovered
	// ones at once).
	pseq      uint64
	seqOf     map[string]uint64
	undecided map[string]undecidedTxn
	// Coordinator bookkeeping: transactions this incarnation is deciding
	// (a status query answers "pending" for them).
	deciding map[string]bool
}

type undecidedTxn struct {
	id    vclock.Stamp
	since time.Time
}

type txnResult struct {
	reads map[string][]kvcore.Sibling
	out   []outboxEntry // the part's writes still to push
	err   error
}

func newTxnShell(pendingMax int) *txnShell {
	return &txnShell{
		part: NewTxnParticipant(pendingMax), results: map[string]txnResult{}, waiters: map[string]chan struct{}{},
		pseq: 1, seqOf: map[string]uint64{}, undecided: map[string]undecidedTxn{}, deciding: map[string]bool{},
		// A new incarnation's stamps must not reuse an old one's: start the
		// coordinator's counter at the wall clock (ns).
		seq: uint64(time.Now().UnixNano()),
		hc:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}},
	}
}

func txnWrites(ws []kvcore.TxnWriteJSON) []TxnWrite {
	out := make([]TxnWrite, len(ws))
	for i, w := range ws {
		out[i] = TxnWrite{Key: w.Key, Value: w.Value, Add: w.Add}
	}
	return out
}

func txnWritesJSON(ws []TxnWrite) []kvcore.TxnWriteJSON {
	out := make([]kvcore.TxnWriteJSON, len(ws))
	for i, w := range ws {
		out[i] = kvcore.TxnWriteJSON{Key: w.Key, Value: w.Value, Add: w.Add}
	}
	return out
}

// nextStamp names a new transaction coordinated here: owner = this server,
// own counter = the next sequence number, other entries 0, so two
// coordinators' transactions are concurrent until Kronos orders them.
func (s *Server) nextStamp() vclock.Stamp {
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	s.txn.seq++
	c := make([]uint64, len(s.cfg.Peers))
	c[s.cfg.Replica.Self] = s.txn.seq
	return vclock.Stamp{Owner: uint32(s.cfg.Replica.Self), Clock: vclock.Clock{Epoch: 1, Counters: c}}
}

// txnCoordinate runs POST /v1/kv/txn: prepare every part in parallel,
// decide, tell every part, and answer once every committed part ran.
func (s *Server) txnCoordinate(r *http.Request) (any, error) {
	if s.cfg.Oracle == nil {
		return nil, fmt.Errorf("%w: transactions need a Kronos (weft kv serve --kronos)", kvcore.ErrInvalid)
	}
	var req kvcore.TxnRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	for _, w := range req.Writes {
		if err := s.rep.checkKey(w.Key); err != nil {
			return nil, err
		}
		if _, err := strconv.ParseInt(string(w.Value), 10, 64); w.Add && err != nil {
			return nil, fmt.Errorf("%w: add of %q to %q: not a decimal integer", kvcore.ErrInvalid, w.Value, w.Key)
		}
	}
	id := s.nextStamp()
	s.txn.mu.Lock()
	s.txn.deciding[stampKey(id)] = true
	s.txn.mu.Unlock()
	defer func() {
		s.txn.mu.Lock()
		delete(s.txn.deciding, stampKey(id))
		s.txn.mu.Unlock()
	}()
	t, err := NewTxn(id, req.Reads, txnWrites(req.Writes), func(key string) int { return s.ring.Replicas(nil, key, 1)[0] })
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.TxnTimeout)
	defer cancel()
	parts := t.Parts()
	votes := s.prepareParts(ctx, id, parts)
	var commit bool
	for i, p := range parts {
		commit, _ = t.Vote(p.Server, votes[i])
	}
	if commit {
		// Presumed abort: the commit is durable before any part hears of
		// it, so a part that lost touch asks (status) and learns it.
		if err := s.rep.SaveCommit(id); err != nil {
			s.abortAll(id, parts)
			return nil, fmt.Errorf("%w: transaction %s aborted: recording its commit failed: %v", kvcore.ErrUnavailable, id, err)
		}
	}
	s.txn.mu.Lock()
	delete(s.txn.deciding, stampKey(id))
	s.txn.mu.Unlock()
	outs, errs := s.decideParts(id, parts, commit)
	for i, p := range parts {
		if errs[i] == nil {
			t.Applied(p.Server, outs[i].Reads)
		}
	}
	if commit && errors.Join(errs...) == nil {
		_ = s.rep.DropCommit(id) // every part ran: nobody will ask
	}
	reads, done, err := t.Done()
	if err != nil {
		return nil, err
	}
	if !done {
		// Committed, but some part did not confirm it ran: its server may
		// have failed. The outcome there is unknown to the client.
		return nil, fmt.Errorf("%w: transaction %s committed but not confirmed by every part: %v", kvcore.ErrUnavailable, id, errors.Join(errs...))
	}
	if reads == nil {
		reads = map[string][]kvcore.Sibling{}
	}
	return kvcore.TxnResponse{Reads: reads, Txn: kvcore.ToStampJSON(id)}, nil
}

// prepareParts sends every part its prepare in parallel and returns the
// votes (nil: yes).
func (s *Server) prepareParts(ctx context.Context, id vclock.Stamp, parts []TxnPart) []error {
	votes := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v TxnVote
			err := s.txnCall(ctx, p.Server, "/v1/kv/txn/prepare", TxnPrepareRequest{Txn: kvcore.ToStampJSON(id), Reads: p.Reads, Writes: txnWritesJSON(p.Writes)}, &v)
			switch {
			case err != nil:
				votes[i] = err
			case !v.OK && v.Error != nil:
				votes[i] = kvcore.ErrorOf(v.Error.Code, v.Error.Message)
			case !v.OK:
				votes[i] = kvcore.ErrTxnConflict
			}
		}()
	}
	wg.Wait()
	return votes
}

// decideParts sends every part the decision in parallel, even after the
// client gave up (a prepared part holds its keys until it hears), and
// returns their answers.
func (s *Server) decideParts(id vclock.Stamp, parts []TxnPart, commit bool) ([]TxnDecideResponse, []error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TxnTimeout)
	defer cancel()
	errs := make([]error, len(parts))
	outs := make([]TxnDecideResponse, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.txnCall(ctx, p.Server, "/v1/kv/txn/decide", TxnDecideRequest{Txn: kvcore.ToStampJSON(id), Commit: commit}, &outs[i])
		}()
	}
	wg.Wait()
	return outs, errs
}

// abortAll tells every part to abort (best effort: a part that does not
// hear learns it from the janitor's status query).
func (s *Server) abortAll(id vclock.Stamp, parts []TxnPart) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TxnTimeout)
	defer cancel()
	for _, p := range parts {
		var out TxnDecideResponse
		_ = s.txnCall(ctx, p.Server, "/v1/kv/txn/decide", TxnDecideRequest{Txn: kvcore.ToStampJSON(id), Commit: false}, &out)
	}
}

// txnCall posts one JSON request to server i (itself included).
func (s *Server) txnCall(ctx context.Context, i int, path string, in, out any) error {
	return exchangeJSON(ctx, s.txn.hc, http.MethodPost, s.cfg.Peers[i], path, in, out, 64<<20)
}

// txnPrepare runs POST /v1/kv/txn/prepare: queue the part, then ask Kronos
// to order it after its predecessors here; the answer is the vote.
func (s *Server) txnPrepare(r *http.Request) (any, error) {
	if s.cfg.Oracle == nil {
		return nil, fmt.Errorf("%w: transactions need a Kronos (weft kv serve --kronos)", kvcore.ErrInvalid)
	}
	var req TxnPrepareRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	id := req.Txn.Stamp()
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if n := s.rep.OutboxLen(); n >= s.cfg.OutboxMax && len(req.Writes) > 0 {
		return nil, fmt.Errorf("%w: %d transactional writes wait for their replicas", kvcore.ErrOverloaded, n)
	}
	s.txn.mu.Lock()
	prevs, err := s.txn.part.Prepare(id, req.Reads, txnWrites(req.Writes))
	if err == nil {
		// Durable before the vote, in prepare order (the queues' order).
		seq := s.txn.pseq
		s.txn.pseq++
		if err = s.rep.SavePrepared(seq, data); err != nil {
			_ = s.txn.part.Decide(id, false)
			s.runReadyLocked()
		} else {
			s.txn.seqOf[stampKey(id)] = seq
			s.txn.undecided[stampKey(id)] = undecidedTxn{id: id, since: time.Now()}
		}
	}
	s.txn.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.TxnTimeout)
	defer cancel()
	if err := Vote(ctx, s.cfg.Oracle, prevs, id); err != nil {
		code := kvcore.CodeOf(err)
		return TxnVote{Error: &kvcore.ErrorBody{Code: code, Message: err.Error(), Retryable: code.Retryable()}}, nil
	}
	return TxnVote{OK: true}, nil
}

// txnDecide runs POST /v1/kv/txn/decide: record the decision, run every
// part that can now run (in order, each fsynced), and for a commit wait
// until this part ran and answer its reads.
func (s *Server) txnDecide(r *http.Request) (any, error) {
	var req TxnDecideRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	id := req.Txn.Stamp()
	key := stampKey(id)
	s.txn.mu.Lock()
	var wait chan struct{}
	if req.Commit {
		wait = make(chan struct{})
		s.txn.waiters[key] = wait
	}
	if err := s.decideLocked(id, req.Commit); err != nil {
		delete(s.txn.waiters, key)
		s.txn.mu.Unlock()
		return nil, err
	}
	s.txn.mu.Unlock()
	if !req.Commit {
		return TxnDecideResponse{}, nil
	}
	select {
	case <-wait:
	case <-time.After(s.cfg.TxnTimeout):
		s.txn.mu.Lock()
		delete(s.txn.waiters, key)
		s.txn.mu.Unlock()
		return nil, fmt.Errorf("%w: transaction %s committed but waits behind undecided ones", kvcore.ErrUnavailable, id)
	}
	s.txn.mu.Lock()
	res := s.txn.results[key]
	delete(s.txn.results, key)
	s.txn.mu.Unlock()
	if res.err != nil {
		return nil, res.err
	}
	if err := s.pushQuorum(res.out, s.cfg.W); err != nil {
		return nil, fmt.Errorf("transaction %s committed and ran on server %d: %w", id, s.cfg.Replica.Self, err)
	}
	return TxnDecideResponse{Reads: res.reads}, nil
}

// runReadyLocked runs the participant's ready parts in order, keeping each
// one's reads for its decide call (whose waiter it wakes). A part whose
// waiter gave up keeps nothing. Caller holds txn.mu: parts run one at a
// time, in the order the participant hands them out.
func (s *Server) runReadyLocked() {
	for _, e := range s.txn.part.Ready() {
		key := stampKey(e.Txn)
		reads, out, err := s.rep.ExecTxnDurable(e, s.txn.seqOf[key], s.otherReplicas)
		delete(s.txn.seqOf, key)
		if err != nil {
			s.log.Error("kv: committed transaction failed to run", "role", "kv", "node", s.cfg.Replica.Self, "tx", e.Txn.String(), "err", err)
		}
		if w, ok := s.txn.waiters[key]; ok {
			s.txn.results[key] = txnResult{reads: reads, out: out, err: err}
			delete(s.txn.waiters, key)
			close(w)
		} else if len(out) > 0 {
			s.kickPusher() // nobody pushes them at once: the pusher does
		}
	}
	s.txn.part.Advance()
}

// otherReplicas lists the replicas of key other than this server.
func (s *Server) otherReplicas(key string) []int {
	rs := s.ring.Replicas(nil, key, s.cfg.N)
	return slices.DeleteFunc(rs, func(i int) bool { return i == s.cfg.Replica.Self })
}

// decideLocked records a decision on a pending part (from its coordinator
// or the janitor), forgets an aborted part's record, and runs what can
// now run. Caller holds txn.mu.
func (s *Server) decideLocked(id vclock.Stamp, commit bool) error {
	key := stampKey(id)
	if err := s.txn.part.Decide(id, commit); err != nil {
		return err
	}
	delete(s.txn.undecided, key)
	if !commit {
		if seq, ok := s.txn.seqOf[key]; ok {
			if err := s.rep.DropPrepared(seq); err != nil {
				s.log.Error("kv: dropping an aborted part's record", "role", "kv", "node", s.cfg.Replica.Self, "tx", id.String(), "err", err)
			}
			delete(s.txn.seqOf, key)
		}
	}
	s.runReadyLocked()
	return nil
}

// recoverTxns reloads the parts this server prepared and had not run
// before it stopped, in their prepare order; the janitor then asks their
// coordinators for the decisions.
func (s *Server) recoverTxns() error {
	applied, err := s.rep.LoadApplied()
	if err != nil {
		return err
	}
	recs, err := s.rep.LoadPrepared()
	if err != nil {
		return err
	}
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	for k, t := range applied {
		s.txn.part.SetApplied(k, t)
	}
	for _, rec := range recs {
		var req TxnPrepareRequest
		if err := json.Unmarshal(rec.Data, &req); err != nil {
			return fmt.Errorf("%w: prepared part %d: %v", kvcore.ErrCorrupt, rec.Seq, err)
		}
		id := req.Txn.Stamp()
		// Kronos already holds the orders this part asked for.
		if _, err := s.txn.part.Prepare(id, req.Reads, txnWrites(req.Writes)); err != nil {
			return fmt.Errorf("kv: recovering prepared part %d: %w", rec.Seq, err)
		}
		s.txn.seqOf[stampKey(id)] = rec.Seq
		s.txn.undecided[stampKey(id)] = undecidedTxn{id: id}
		s.txn.pseq = max(s.txn.pseq, rec.Seq+1)
	}
	if len(recs) > 0 {
		s.log.Warn("kv: recovered prepared transactions", "role", "kv", "node", s.cfg.Replica.Self, "parts", len(recs))
	}
	return nil
}

// TxnStatusResponse answers POST /v1/kv/txn/status (body: a TxnDecideRequest
// whose Commit is ignored): "commit", "abort" or "pending".
type TxnStatusResponse struct {
	State string `json:"state"`
}

// txnStatus answers a participant asking for the decision on a transaction
// this server coordinates (presumed abort).
func (s *Server) txnStatus(r *http.Request) (any, error) {
	var req TxnDecideRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	return TxnStatusResponse{State: s.statusOf(req.Txn.Stamp())}, nil
}

func (s *Server) statusOf(id vclock.Stamp) string {
	s.txn.mu.Lock()
	live := s.txn.deciding[stampKey(id)]
	s.txn.mu.Unlock()
	if live {
		return "pending"
	}
	ok, err := s.rep.HasCommit(id)
	switch {
	case err != nil:
		return "pending"
	case ok:
		return "commit"
	}
	return "abort"
}

// txnJanitor settles parts left undecided for TxnTimeout (their
// coordinator died, or its decision was lost) and recovered ones: it asks
// the coordinator and applies its answer; an unreachable coordinator is
// asked again later (the part keeps its keys meanwhile: two-phase commit
// blocks on a lost coordinator until it returns).
func (s *Server) txnJanitor() {
	defer s.wg.Done()
	period := max(s.cfg.TxnTimeout/4, 50*time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var ask []vclock.Stamp
		s.txn.mu.Lock()
		for _, u := range s.txn.undecided {
			if time.Since(u.since) >= s.cfg.TxnTimeout {
				ask = append(ask, u.id)
			}
		}
		s.txn.mu.Unlock()
		for _, id := range ask {
			state := "pending"
			if int(id.Owner) == s.cfg.Replica.Self {
				state = s.statusOf(id)
			} else if int(id.Owner) < len(s.cfg.Peers) {
				ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TxnTimeout)
				var out TxnStatusResponse
				if err := s.txnCall(ctx, int(id.Owner), "/v1/kv/txn/status", TxnDecideRequest{Txn: kvcore.ToStampJSON(id)}, &out); err == nil {
					state = out.State
				}
				cancel()
			}
			if state == "pending" {
				continue
			}
			s.txn.mu.Lock()
			if _, still := s.txn.undecided[stampKey(id)]; still {
				if err := s.decideLocked(id, state == "commit"); err != nil {
					s.log.Error("kv: settling a transaction", "role", "kv", "node", s.cfg.Replica.Self, "tx", id.String(), "err", err)
				}
			}
			s.txn.mu.Unlock()
		}
	}
}
