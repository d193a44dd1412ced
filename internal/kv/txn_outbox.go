package kv

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/vclock"
)

// Replication of transactional writes. A transaction's part runs on its
// keys' primary (txn_server.go); each write it makes there is one sibling
// ⟨version, value⟩ whose version descends from every sibling the primary
// held (Descend under the primary's TxnActor), so it supersedes the
// versions it read exactly like a client PUT with that context. The same
// Pebble batch that stores the write stores one outbox record per other
// replica of the key (the rest of its preference list):
//
//   - 't' 'o' + 8-byte sequence → outboxRecord (JSON): the replica, the
//     key, the sibling written and the primary's HVC stamp of the write.
//
// The primary then pushes each record as an ordinary POST /v1/kv/put to
// its replica (carrying the stamp, so the replica's clock merges it and
// its detector and rollback window see it like any PUT) and deletes the
// record once the replica acknowledged it (applied, duplicate or
// obsolete: all three mean the replica holds the write or a version
// descending from it). A record whose push failed stays and is retried by
// the pusher every OutboxRetry until acknowledged, across restarts of
// either side: the outbox is durable, so a primary killed after running a
// part still delivers its writes when it returns.
//
// Pushes may arrive out of order (two transactions on a key pushed by
// different rounds): the later write's version descends from the earlier
// one's, so the replica keeps the later and drops the earlier as obsolete,
// whatever the order of arrival. Add writes are pushed as their result,
// never re-added.
//
// Acknowledgement: the participant answers its decide call (and so the
// coordinator the client) only once W replicas of each written key hold
// the write — the primary plus W−1 acknowledged pushes (W is the server's
// ServerConfig.W, default 2 of N = 3). If fewer answer within TxnTimeout
// the transaction is committed and durable on its primary but the client
// gets UNAVAILABLE (outcome unknown to it); the outbox keeps pushing.
const txnOutboxTag = 'o'

func txnOutboxKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{txnPrefix, txnOutboxTag}, seq)
}

// outboxRecord is one transactional write still to push to one replica.
type outboxRecord struct {
	To      int             `json:"to"`
	Key     string          `json:"key"`
	Sibling kvcore.Sibling  `json:"sibling"`
	HVC     *kvcore.HVCJSON `json:"hvc,omitempty"`
}

// outboxEntry is a stored record with its sequence number.
type outboxEntry struct {
	Seq uint64
	Rec outboxRecord
}

// openOutbox counts the stored records and sets the next sequence number.
func (r *Replica) openOutbox() error {
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{txnPrefix, txnOutboxTag}, UpperBound: []byte{txnPrefix, txnOutboxTag + 1}})
	if err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	var n int64
	next := uint64(1)
	for ok := it.First(); ok; ok = it.Next() {
		if len(it.Key()) != 10 {
			return fmt.Errorf("%w: outbox key %q", kvcore.ErrCorrupt, it.Key())
		}
		n++
		next = binary.BigEndian.Uint64(it.Key()[2:]) + 1
	}
	r.outLen.Store(n)
	r.outNext.Store(next)
	return nil
}

// appendOutbox adds to b one record per replica in to for the write of sib
// to key stamped at, and returns made with the new entries appended.
func (r *Replica) appendOutbox(b *pebble.Batch, made []outboxEntry, to []int, key string, sib kvcore.Sibling, at vclock.HVC) []outboxEntry {
	for _, peer := range to {
		rec := outboxRecord{To: peer, Key: key, Sibling: sib, HVC: kvcore.ToHVCJSON(at)}
		data, err := json.Marshal(rec)
		assert(err == nil, "marshal outbox record: %v", err)
		seq := r.outNext.Add(1) - 1
		_ = b.Set(txnOutboxKey(seq), data, nil)
		made = append(made, outboxEntry{Seq: seq, Rec: rec})
	}
	return made
}

// OutboxLen is the number of transactional writes not yet acknowledged by
// a replica.
func (r *Replica) OutboxLen() int { return int(r.outLen.Load()) }

// loadOutbox returns at most limit stored records in sequence order.
func (r *Replica) loadOutbox(limit int) ([]outboxEntry, error) {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return nil, kvcore.ErrClosed
	}
	it, err := r.db.NewIter(&pebble.IterOptions{LowerBound: []byte{txnPrefix, txnOutboxTag}, UpperBound: []byte{txnPrefix, txnOutboxTag + 1}})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	defer it.Close()
	var out []outboxEntry
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		var rec outboxRecord
		if len(it.Key()) != 10 || json.Unmarshal(it.Value(), &rec) != nil {
			return nil, fmt.Errorf("%w: outbox record %q", kvcore.ErrCorrupt, it.Key())
		}
		out = append(out, outboxEntry{Seq: binary.BigEndian.Uint64(it.Key()[2:]), Rec: rec})
	}
	return out, nil
}

// dropOutbox deletes an acknowledged record (NoSync: losing the delete in
// a crash only repeats a push, which the replica answers duplicate).
func (r *Replica) dropOutbox(seq uint64) error {
	r.life.RLock()
	defer r.life.RUnlock()
	if r.closed.Load() {
		return kvcore.ErrClosed
	}
	if err := r.db.Delete(txnOutboxKey(seq), pebble.NoSync); err != nil {
		return fmt.Errorf("%w: %v", kvcore.ErrUnavailable, err)
	}
	r.outLen.Add(-1)
	return nil
}

// outboxPageMax bounds the records one pusher round loads.
const outboxPageMax = 256

// pushFunc sends one record to its replica (POST /v1/kv/put); tests
// replace it to lose messages.
type pushFunc func(ctx context.Context, rec outboxRecord) error

// outbox is the server's pusher state: which records a sender holds now
// (each record has at most one sender at a time, so it is deleted and
// counted once).
type outbox struct {
	mu       sync.Mutex
	inflight map[uint64]bool
	kick     chan struct{}
	send     pushFunc
	pushed   uint64 // records acknowledged
	failed   uint64 // pushes that failed (retried)
}

func newOutbox(send pushFunc) *outbox {
	return &outbox{inflight: map[uint64]bool{}, kick: make(chan struct{}, 1), send: send}
}

// claim marks the entries nobody sends yet as taken and returns them.
func (o *outbox) claim(es []outboxEntry) []outboxEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := es[:0:0]
	for _, e := range es {
		if !o.inflight[e.Seq] {
			o.inflight[e.Seq] = true
			out = append(out, e)
		}
	}
	return out
}

// pushOne sends one claimed entry; on acknowledgement it deletes the
// record. A record already gone (another sender got it acknowledged) counts
// as acknowledged. It releases the claim either way.
func (s *Server) pushOne(ctx context.Context, e outboxEntry) error {
	there, err := s.rep.hasMeta(txnOutboxKey(e.Seq))
	if err == nil && !there {
		s.out.mu.Lock()
		delete(s.out.inflight, e.Seq)
		s.out.mu.Unlock()
		return nil
	}
	if err == nil {
		err = s.out.send(ctx, e.Rec)
	}
	if err == nil {
		err = s.rep.dropOutbox(e.Seq)
	}
	s.out.mu.Lock()
	delete(s.out.inflight, e.Seq)
	if err == nil {
		s.out.pushed++
	} else {
		s.out.failed++
	}
	s.out.mu.Unlock()
	return err
}

// sendPut is the real pushFunc: POST /v1/kv/put to the record's replica.
func (s *Server) sendPut(ctx context.Context, rec outboxRecord) error {
	var out kvcore.PutResponse
	return s.txnCall(ctx, rec.To, "/v1/kv/put", kvcore.PutRequest{Key: rec.Key, Sibling: rec.Sibling, HVC: rec.HVC}, &out)
}

// pushQuorum pushes a part's new records at once and returns when every
// written key is held by w replicas (this one and w−1 acknowledgements),
// or the pushes ended (each retries for at most TxnTimeout): then with an
// error naming a short key. The pushes beyond the quorum go on after it
// returns; records not acknowledged stay for the pusher.
func (s *Server) pushQuorum(es []outboxEntry, w int) error {
	need := map[string]int{}
	for _, e := range es {
		need[e.Rec.Key] = w - 1
	}
	short := func() string {
		for _, k := range slices.Sorted(maps.Keys(need)) {
			if need[k] > 0 {
				return k
			}
		}
		return ""
	}
	if short() == "" {
		// W = 1 (or nothing to push): the pusher sends them now.
		s.kickPusher()
		return nil
	}
	acks := make(chan string, len(es))
	// Once pushQuorum returns, a failed push is not retried here: the
	// pusher retries it every OutboxRetry.
	var settled atomic.Bool
	defer settled.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TxnTimeout)
	var wg sync.WaitGroup
	wg.Add(len(es))
	go func() {
		wg.Wait()
		cancel()
	}()
	for _, e := range es {
		go func() {
			defer wg.Done()
			for {
				// The pusher may hold the record: then wait for it to let
				// go (pushOne tells an already acknowledged one).
				if len(s.out.claim([]outboxEntry{e})) == 1 && s.pushOne(ctx, e) == nil {
					acks <- e.Rec.Key
					return
				}
				if settled.Load() {
					acks <- ""
					return
				}
				select {
				case <-ctx.Done():
					acks <- ""
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	for range es {
		if k := <-acks; k != "" {
			need[k]--
		}
		if short() == "" {
			return nil
		}
	}
	return fmt.Errorf("%w: key %q is held by fewer than W=%d replicas (the outbox keeps pushing)", kvcore.ErrUnavailable, short(), w)
}

// kickPusher wakes the pusher (without waiting for it).
func (s *Server) kickPusher() {
	select {
	case s.out.kick <- struct{}{}:
	default:
	}
}

// outboxPusher retries the stored records every OutboxRetry (or when
// kicked): one goroutine per replica per round, each sending its records
// in sequence order and stopping at the first failure (that replica is
// probably down; the next round tries again).
func (s *Server) outboxPusher() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.OutboxRetry)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.out.kick:
		}
		if s.rep.OutboxLen() == 0 {
			continue
		}
		es, err := s.rep.loadOutbox(outboxPageMax)
		if err != nil {
			s.log.Error("kv: reading the outbox", "role", "kv", "node", s.cfg.Replica.Self, "err", err)
			continue
		}
		byPeer := map[int][]outboxEntry{}
		for _, e := range s.out.claim(es) {
			byPeer[e.Rec.To] = append(byPeer[e.Rec.To], e)
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TxnTimeout)
		var wg sync.WaitGroup
		for _, list := range byPeer {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failed := false
				for _, e := range list {
					if failed {
						s.out.mu.Lock()
						delete(s.out.inflight, e.Seq)
						s.out.mu.Unlock()
						continue
					}
					failed = s.pushOne(ctx, e) != nil
				}
			}()
		}
		wg.Wait()
		cancel()
	}
}
