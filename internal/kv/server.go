package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/monitor"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

// ServerConfig configures `weft kv serve`: one replica on the ring behind
// an HTTP/JSON API.
type ServerConfig struct {
	// Addr is the listen address. Default: Peers[Self].
	Addr string
	// Peers lists every server's address in ring order (server i is
	// Peers[i]); clients get it from /v1/kv/meta. Required.
	Peers []string
	// N is the replication factor (the ring's preference-list length).
	// Default 3, capped at len(Peers) (and R and W at N).
	N int
	// VNodes is the virtual nodes per server. Default 64.
	VNodes int
	// R and W are the suggested quorum sent to clients in the metadata;
	// each client may choose its own per session or request. Default 2, 2.
	R, W int
	// Replica configures the store (Dir, Sync, Epsilon, limits). Self and
	// Servers are the ring's; Now defaults to wall-clock nanoseconds.
	Replica ReplicaConfig
	// Spec, if set, is the monitored predicates: a detector on this server
	// sees every applied PUT and buffers candidates for the monitors. Its
	// server count must equal len(Peers).
	Spec *monitor.Spec
	// CandidatesMax bounds the detector's buffer. Default 65536.
	CandidatesMax int
	// FlushEvery is the detector's heartbeat period (0: none). Default 1 s.
	FlushEvery time.Duration
	// RequestsMax bounds the requests served at once; beyond it the server
	// answers OVERLOADED. Default 1024.
	RequestsMax int
	// BodyBytesMax bounds a request body. Default ValueBytesMax + 64 KiB.
	BodyBytesMax int64
	// ShutdownTimeout is how long Stop lets in-flight requests finish
	// before closing their connections. Default 1 s.
	ShutdownTimeout time.Duration
	// PauseTimeout is how long a rollback pause lasts at most unless the
	// coordinator asks for another bound: the server then resumes by
	// itself. Default 30 s.
	PauseTimeout time.Duration
	// Oracle, if set, is the shared Kronos that orders transactions
	// (POST /v1/kv/txn; txn_server.go): every server of the ring must use
	// the same one (order.Remote to a `weft kronos` group). Nil refuses
	// transactions.
	Oracle order.Oracle
	// TxnPendingMax bounds the transactions prepared here and not yet run
	// or aborted (beyond: OVERLOADED). Default 1024.
	TxnPendingMax int
	// TxnTimeout bounds a transaction's prepare round (including Kronos)
	// and each wait for a committed part to run (and for W replicas to
	// acknowledge its writes). Default 10 s.
	TxnTimeout time.Duration
	// OutboxMax bounds the transactional writes stored here and not yet
	// acknowledged by another replica (txn_outbox.go); at or beyond it new
	// transaction parts are refused OVERLOADED until the outbox drains.
	// Default 65536 records.
	OutboxMax int
	// OutboxRetry is how often the outbox pusher retries unacknowledged
	// records. Default 200 ms.
	OutboxRetry time.Duration

	// outboxSend replaces the outbox's POST /v1/kv/put (tests: loss).
	outboxSend pushFunc
}

// DefaultServerConfig returns the defaults documented on ServerConfig.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		N: 3, VNodes: 64, R: 2, W: 2, Replica: DefaultReplicaConfig(),
		CandidatesMax: 1 << 16, FlushEvery: time.Second, RequestsMax: 1024, ShutdownTimeout: time.Second,
		PauseTimeout: 30 * time.Second, TxnPendingMax: 1024, TxnTimeout: 10 * time.Second,
		OutboxMax: 1 << 16, OutboxRetry: 200 * time.Millisecond,
	}
}

// resolved fills in what depends on other fields: Addr, Replica.Servers,
// Replica.Now, N (capped at the server count, R and W at N) and
// BodyBytesMax.
func (c ServerConfig) resolved() ServerConfig {
	c.Replica.Servers = len(c.Peers)
	if c.Addr == "" && c.Replica.Self >= 0 && c.Replica.Self < len(c.Peers) {
		c.Addr = c.Peers[c.Replica.Self]
	}
	if c.Replica.Now == nil {
		c.Replica.Now = WallClock
	}
	if len(c.Peers) > 0 {
		c.N = min(c.N, len(c.Peers))
		c.R, c.W = min(c.R, c.N), min(c.W, c.N)
	}
	if c.BodyBytesMax <= 0 {
		c.BodyBytesMax = int64(c.Replica.ValueBytesMax) + 64<<10
	}
	return c
}

// Validate reports the first bad field.
func (c ServerConfig) Validate() error {
	if len(c.Peers) == 0 {
		return fmt.Errorf("kv: Peers is required")
	}
	c = c.resolved()
	if c.Replica.Self < 0 || c.Replica.Self >= len(c.Peers) {
		return fmt.Errorf("kv: server id %d not in [0, %d)", c.Replica.Self, len(c.Peers))
	}
	q := kvcore.Quorum{N: c.N, R: c.R, W: c.W, RoundTicks: 1}
	if err := q.Validate(); err != nil {
		return err
	}
	if c.RequestsMax < 1 {
		return fmt.Errorf("kv: RequestsMax %d must be positive", c.RequestsMax)
	}
	if c.TxnPendingMax < 1 || c.TxnTimeout <= 0 {
		return fmt.Errorf("kv: TxnPendingMax %d and TxnTimeout %v must be positive", c.TxnPendingMax, c.TxnTimeout)
	}
	if c.OutboxMax < 1 || c.OutboxRetry <= 0 {
		return fmt.Errorf("kv: OutboxMax %d and OutboxRetry %v must be positive", c.OutboxMax, c.OutboxRetry)
	}
	if c.Spec != nil && c.Spec.Servers != len(c.Peers) {
		return fmt.Errorf("kv: the predicate spec names %d servers, the ring has %d", c.Spec.Servers, len(c.Peers))
	}
	return c.Replica.Validate()
}

// WallClock is the shells' physical clock: Unix nanoseconds.
func WallClock() uint64 { return uint64(time.Now().UnixNano()) }

// Server is the shell around a Replica: HTTP/JSON on a listener, the
// detector's heartbeat, nothing else (the client does the replication).
type Server struct {
	cfg  ServerConfig
	log  *slog.Logger
	rep  *Replica
	det  *Detector
	ring *kvcore.Ring
	sem  chan struct{}
	http *http.Server
	ln   net.Listener
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	err  error
	boot uint64

	// The rollback fence: GET and PUT handlers hold gate shared; pausing
	// takes it exclusively, so in-flight requests finish first.
	gate       sync.RWMutex
	paused     bool
	pauseGen   uint64
	pauseTimer *time.Timer
	advice     atomic.Pointer[kvcore.Advice]

	txn *txnShell // the transactional mode (txn_server.go)
	out *outbox   // its writes' pusher (txn_outbox.go)
}

// NewServer opens the replica (and detector) of cfg.
func NewServer(cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.resolved()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ring, err := kvcore.NewRing(len(cfg.Peers), cfg.VNodes)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, ring: ring, sem: make(chan struct{}, cfg.RequestsMax), stop: make(chan struct{}), txn: newTxnShell(cfg.TxnPendingMax)}
	s.out = newOutbox(cfg.outboxSend)
	if s.out.send == nil {
		s.out.send = s.sendPut
	}
	if cfg.Spec != nil {
		if s.det, err = NewDetector(cfg.Spec, cfg.Replica.Self, vclock.HVC{}, cfg.CandidatesMax); err != nil {
			return nil, err
		}
		cfg.Replica.Hook = s.det
	}
	cfg.Replica.Logger = log
	if s.rep, err = OpenReplica(cfg.Replica); err != nil {
		return nil, err
	}
	s.boot = WallClock()
	if g := s.rep.PauseGen(); g > 0 {
		// Restarted in the middle of a rollback: stay fenced until the
		// coordinator restores and resumes (or the pause times out).
		s.gate.Lock()
		err := s.pauseLocked(g, cfg.PauseTimeout)
		s.gate.Unlock()
		if err != nil {
			s.rep.Close()
			return nil, err
		}
		log.Warn("kv: restarted paused for a rollback", "role", "kv", "node", cfg.Replica.Self, "gen", g, "timeout", cfg.PauseTimeout)
	}
	if err := s.recoverTxns(); err != nil {
		s.rep.Close()
		return nil, err
	}
	if s.det != nil {
		// A restarted server's detector starts from the stored values, in
		// a new incarnation the monitors recognise by its boot.
		s.det.SetEpoch(s.boot, s.rep.Gen())
		vals, ats, err := s.loadDetectorState()
		if err != nil {
			s.rep.Close()
			return nil, err
		}
		s.det.Load(vals, ats)
	}
	return s, nil
}

// Replica returns the server's replica.
func (s *Server) Replica() *Replica { return s.rep }

// Handler returns the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/kv/get", s.handle(s.get))
	mux.Handle("POST /v1/kv/put", s.handle(s.put))
	mux.Handle("GET /v1/kv/meta", s.handle(s.meta))
	mux.Handle("GET /v1/kv/stats", s.handle(s.stats))
	mux.Handle("GET /v1/kv/candidates", s.handle(s.candidates))
	mux.Handle("POST /v1/kv/admin/pause", s.handle(s.pause))
	mux.Handle("POST /v1/kv/admin/resume", s.handle(s.resume))
	mux.Handle("POST /v1/kv/admin/restore", s.handle(s.restore))
	mux.Handle("POST /v1/kv/admin/advice", s.handle(s.setAdvice))
	mux.Handle("POST /v1/kv/admin/late", s.handle(s.lateVersions))
	mux.Handle("POST /v1/kv/admin/early", s.handle(s.earlyVersions))
	mux.Handle("POST /v1/kv/txn", s.handle(s.txnCoordinate))
	mux.Handle("POST /v1/kv/txn/prepare", s.handle(s.txnPrepare))
	mux.Handle("POST /v1/kv/txn/decide", s.handle(s.txnDecide))
	mux.Handle("POST /v1/kv/txn/status", s.handle(s.txnStatus))
	mux.Handle("GET /healthz", s.handle(func(*http.Request) (any, error) { return map[string]bool{"ok": true}, nil }))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, kvcore.ErrorBody{Code: kvcore.CodeNotFound, Message: fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path)})
	})
	return mux
}

// Start listens and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		s.rep.Close()
		return fmt.Errorf("kv: listen %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("kv: serve", "err", err, "role", "kv", "node", s.cfg.Replica.Self)
		}
	}()
	if s.det != nil && s.cfg.FlushEvery > 0 {
		s.wg.Add(1)
		go s.heartbeat()
	}
	s.wg.Add(2)
	go s.txnJanitor()
	go s.outboxPusher()
	return nil
}

// Addr is the listening address (after Start).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stop stops serving (in-flight requests get a few seconds) and closes the
// replica. Later calls return the first's result.
func (s *Server) Stop() error {
	s.once.Do(func() {
		close(s.stop)
		if s.http != nil {
			// Shutdown waits for idle connections, and the client's
			// transport may hold a fresh one that never carried a request
			// (those count as busy for 5 s), so after the grace period the
			// rest are closed.
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
			defer cancel()
			if s.http.Shutdown(ctx) != nil {
				_ = s.http.Close()
			}
		}
		s.wg.Wait()
		s.err = s.rep.Close()
	})
	return s.err
}

func (s *Server) heartbeat() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.rep.Stamp(s.det.Flush)
		}
	}
}

type handlerFunc func(r *http.Request) (any, error)

// handle bounds concurrency, runs fn and writes its answer or error.
func (s *Server) handle(fn handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		default:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, kvcore.ErrorBody{Code: kvcore.CodeOverloaded, Message: kvcore.ErrOverloaded.Error(), Retryable: true})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.BodyBytesMax)
		out, err := fn(r)
		if err != nil {
			code := kvcore.CodeOf(err)
			writeError(w, httpStatus(code), kvcore.ErrorBody{Code: code, Message: err.Error(), Retryable: code.Retryable()})
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			writeError(w, http.StatusInternalServerError, kvcore.ErrorBody{Code: kvcore.CodeInternal, Message: err.Error()})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(buf.Bytes())
	})
}

func (s *Server) get(r *http.Request) (any, error) {
	var req kvcore.GetRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.paused {
		return nil, fmt.Errorf("%w: generation %d", kvcore.ErrPaused, s.pauseGen)
	}
	sibs, at, err := s.rep.Get(req.Key, req.HVC.HVC())
	if err != nil {
		return nil, err
	}
	if sibs == nil {
		sibs = []kvcore.Sibling{}
	}
	return kvcore.GetResponse{Siblings: sibs, HVC: kvcore.ToHVCJSON(at), Gen: s.rep.Gen(), Advice: s.advice.Load()}, nil
}

func (s *Server) put(r *http.Request) (any, error) {
	var req kvcore.PutRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.paused {
		return nil, fmt.Errorf("%w: generation %d", kvcore.ErrPaused, s.pauseGen)
	}
	o, at, err := s.rep.Put(req.Key, req.Sibling, req.HVC.HVC())
	if err != nil {
		return nil, err
	}
	return kvcore.PutResponse{Outcome: o.String(), HVC: kvcore.ToHVCJSON(at), Gen: s.rep.Gen(), Advice: s.advice.Load()}, nil
}

func (s *Server) meta(*http.Request) (any, error) {
	c := s.cfg
	return kvcore.Meta{
		Self: c.Replica.Self, Peers: c.Peers, N: c.N, VNodes: c.VNodes, R: c.R, W: c.W,
		Epsilon: c.Replica.Epsilon, SiblingsMax: c.Replica.SiblingsMax, VersionEntriesMax: kvcore.VersionEntriesMax,
		Monitoring: s.det != nil, Gen: s.rep.Gen(), Advice: s.advice.Load(),
	}, nil
}

func (s *Server) stats(*http.Request) (any, error) {
	s.gate.RLock()
	paused := s.paused
	s.gate.RUnlock()
	s.out.mu.Lock()
	ob := kvcore.OutboxStats{Len: s.rep.OutboxLen(), Pushed: s.out.pushed, Failed: s.out.failed}
	s.out.mu.Unlock()
	out := kvcore.ServerStats{Replica: s.rep.Stats(), Window: s.rep.Window(), Paused: paused, Outbox: ob}
	if s.det != nil {
		st := s.det.Stats()
		out.Detector = &st
	}
	return out, nil
}

// candidatesPageMax bounds one page of candidates.
const candidatesPageMax = 4096

func (s *Server) candidates(r *http.Request) (any, error) {
	if s.det == nil {
		return nil, fmt.Errorf("%w: this server monitors no predicates (start it with --predicates)", kvcore.ErrInvalid)
	}
	q := r.URL.Query()
	after, limit := uint64(0), candidatesPageMax
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: after=%q: want an index", kvcore.ErrInvalid, v)
		}
		after = n
	}
	if v := q.Get("max"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: max=%q: want a positive count", kvcore.ErrInvalid, v)
		}
		limit = min(n, candidatesPageMax)
	}
	if v := q.Get("wait_ms"); v != "" {
		// Long poll: hold the request until a candidate exists (or the
		// wait, at most candidatesWaitMax, passes), so monitors learn of
		// candidates promptly without polling hot.
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%w: wait_ms=%q: want milliseconds", kvcore.ErrInvalid, v)
		}
		t := time.NewTimer(min(time.Duration(ms)*time.Millisecond, candidatesWaitMax))
		select {
		case <-s.det.Wait(after):
		case <-t.C:
		case <-r.Context().Done():
		case <-s.stop:
		}
		t.Stop()
	}
	cs, missed := s.det.Candidates(after, limit)
	boot, gen := s.det.Epoch()
	out := kvcore.CandidatesResponse{Candidates: make([]kvcore.CandidateJSON, 0, len(cs)), Missed: missed, Boot: boot, Gen: gen,
		Clock: kvcore.ToHVCJSON(s.rep.Clock())}
	for _, c := range cs {
		out.Candidates = append(out.Candidates, ToCandidateJSON(s.det.Spec(), c))
	}
	return out, nil
}

// candidatesWaitMax bounds a long poll.
const candidatesWaitMax = 10 * time.Second

// pause fences the server for a rollback: it waits for in-flight GETs and
// PUTs (the gate), then refuses new ones with PAUSED until resume, a
// restore's caller resumes it, or the pause times out.
func (s *Server) pause(r *http.Request) (any, error) {
	var req kvcore.PauseRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	timeout := s.cfg.PauseTimeout
	if req.TimeoutMs > 0 {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	if req.Gen <= s.rep.Gen() {
		return nil, fmt.Errorf("%w: pause for generation %d, the replica is at %d", kvcore.ErrInvalid, req.Gen, s.rep.Gen())
	}
	if err := s.pauseLocked(req.Gen, timeout); err != nil {
		return nil, err
	}
	s.log.Info("kv: paused for rollback", "role", "kv", "node", s.cfg.Replica.Self, "gen", req.Gen)
	return kvcore.PauseResponse{Paused: true, Gen: s.rep.Gen(), HVC: kvcore.ToHVCJSON(s.rep.Clock())}, nil
}

// pauseLocked fences the server for generation gen until resumed or
// timeout passes. The pause is stored first, so a server that restarts
// before the rollback's resume comes back paused (NewServer) instead of
// serving the state the rollback is discarding. s.gate is held.
func (s *Server) pauseLocked(gen uint64, timeout time.Duration) error {
	if err := s.rep.SetPause(gen); err != nil {
		return err
	}
	s.paused, s.pauseGen = true, gen
	if s.pauseTimer != nil {
		s.pauseTimer.Stop()
	}
	s.pauseTimer = time.AfterFunc(timeout, func() {
		s.gate.Lock()
		defer s.gate.Unlock()
		if s.paused && s.pauseGen == gen {
			s.unpauseLocked()
			s.log.Warn("kv: rollback pause expired; resuming", "role", "kv", "node", s.cfg.Replica.Self, "gen", gen)
		}
	})
	return nil
}

// unpauseLocked lifts the fence and forgets the stored pause (if that
// fails, a restart comes back paused until the pause times out). s.gate
// is held.
func (s *Server) unpauseLocked() {
	s.paused = false
	if s.pauseTimer != nil {
		s.pauseTimer.Stop()
	}
	if err := s.rep.SetPause(0); err != nil && !errors.Is(err, kvcore.ErrClosed) {
		s.log.Error("kv: forget the stored pause", "role", "kv", "node", s.cfg.Replica.Self, "err", err)
	}
}

// resume lifts the fence of generation req.Gen (an older one is ignored).
func (s *Server) resume(r *http.Request) (any, error) {
	var req kvcore.PauseRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.paused && s.pauseGen == req.Gen {
		s.unpauseLocked()
		s.log.Info("kv: resumed", "role", "kv", "node", s.cfg.Replica.Self, "gen", req.Gen)
	}
	return kvcore.PauseResponse{Paused: s.paused, Gen: s.rep.Gen(), HVC: kvcore.ToHVCJSON(s.rep.Clock())}, nil
}

// restore rewinds the paused replica to C(req.Before) and restarts the
// detector in generation req.Gen from the restored values.
func (s *Server) restore(r *http.Request) (any, error) {
	var req kvcore.RestoreRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	if !s.paused || s.pauseGen != req.Gen {
		return nil, fmt.Errorf("%w: restore for generation %d needs a pause for it first", kvcore.ErrInvalid, req.Gen)
	}
	res, err := RestoreMonitored(s.rep, s.det, req.Before, req.Gen, req.Keep)
	if err != nil {
		return nil, err
	}
	s.log.Info("kv: restored", "role", "kv", "node", s.cfg.Replica.Self, "gen", req.Gen, "before", req.Before, "undone", res.Undone)
	return kvcore.RestoreResponse{Undone: res.Undone, Keys: len(res.Keys), Gen: req.Gen, HVC: kvcore.ToHVCJSON(res.At)}, nil
}

// lateVersions lists the writes a rollback to req.Before may discard here.
func (s *Server) lateVersions(r *http.Request) (any, error) {
	var req kvcore.VersionsRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	vs, err := s.rep.LateVersions(req.Before)
	if err != nil {
		return nil, err
	}
	return kvcore.VersionsResponse{Versions: nonNil(vs)}, nil
}

// earlyVersions lists which of req.Versions took effect here before the cut.
func (s *Server) earlyVersions(r *http.Request) (any, error) {
	var req kvcore.VersionsRequest
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	vs, at, err := s.rep.EarlyVersions(req.Before, req.Versions)
	if err != nil {
		return nil, err
	}
	return kvcore.VersionsResponse{Versions: nonNil(vs), CutTimes: at}, nil
}

// loadDetectorState reads the monitored keys' values and when they were
// written.
func (s *Server) loadDetectorState() (map[string]string, map[string]vclock.HVC, error) {
	keys := s.det.Keys()
	vals, err := s.rep.Values(keys)
	if err != nil {
		return nil, nil, err
	}
	ats, err := s.rep.LastWrites(keys)
	if err != nil {
		return nil, nil, err
	}
	return vals, ats, nil
}

// setAdvice sets (or, with r = w = 0, clears) the quorum advised to clients.
func (s *Server) setAdvice(r *http.Request) (any, error) {
	var req kvcore.Advice
	if err := decodeJSON(r.Body, &req); err != nil {
		return nil, err
	}
	if req.R == 0 && req.W == 0 {
		s.advice.Store(nil)
		return req, nil
	}
	if req.R < 1 || req.R > s.cfg.N || req.W < 1 || req.W > s.cfg.N {
		return nil, fmt.Errorf("%w: advice R=%d W=%d not in [1, N=%d]", kvcore.ErrInvalid, req.R, req.W, s.cfg.N)
	}
	s.advice.Store(&req)
	return req, nil
}

// decodeJSON reads exactly one JSON object with no unknown fields.
func decodeJSON(r io.Reader, dst any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("%w: request body larger than %d bytes", kvcore.ErrInvalid, tooBig.Limit)
		}
		return fmt.Errorf("%w: malformed JSON: %v", kvcore.ErrInvalid, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: malformed JSON: data after the request object", kvcore.ErrInvalid)
	}
	return nil
}

func httpStatus(c kvcore.Code) int {
	switch c {
	case kvcore.CodeInvalid, kvcore.CodeWindow:
		return http.StatusBadRequest
	case kvcore.CodeTooManySiblings, kvcore.CodeVersionReused, kvcore.CodeConflict:
		return http.StatusConflict
	case kvcore.CodeOverloaded, kvcore.CodeUnavailable, kvcore.CodeQuorum, kvcore.CodePaused:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, status int, b kvcore.ErrorBody) {
	body, _ := json.Marshal(kvcore.ErrorJSON{Error: b})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
