package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

var errLost = errors.New("test: message lost")

// lossyPush sends outbox records with POST /v1/kv/put but loses a share of
// the requests (never sent) and of the acknowledgements (sent, applied,
// answer lost), chosen by a seeded generator.
type lossyPush struct {
	peers      []string
	mu         sync.Mutex
	rng        *rand.Rand
	lossPerMil int
	lost       int
}

func (l *lossyPush) drop() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rng.IntN(1000) < l.lossPerMil {
		l.lost++
		return true
	}
	return false
}

func (l *lossyPush) send(ctx context.Context, rec outboxRecord) error {
	if l.drop() {
		return errLost
	}
	b, _ := json.Marshal(kvcore.PutRequest{Key: rec.Key, Sibling: rec.Sibling, HVC: rec.HVC})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.peers[rec.To]+"/v1/kv/put", bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("put: HTTP %d", resp.StatusCode)
	}
	if l.drop() { // the acknowledgement is lost: the record is pushed again
		return errLost
	}
	return nil
}

// waitOutboxes waits (bounded) until every server's outbox is empty.
func waitOutboxes(t *testing.T, servers []*Server) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := 0
		for _, s := range servers {
			n += s.Replica().OutboxLen()
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d outbox records never acknowledged", n)
		}
	}
}

// checkReplicasAgree checks that every replica of every key holds exactly
// the value want[key], as its only sibling.
func checkReplicasAgree(t *testing.T, servers []*Server, want map[string]string) {
	t.Helper()
	for k, v := range want {
		for _, i := range servers[0].ring.Replicas(nil, k, servers[0].cfg.N) {
			sibs, _, err := servers[i].Replica().Get(k, vclock.HVC{})
			if err != nil {
				t.Fatal(err)
			}
			if len(sibs) != 1 || string(sibs[0].Value) != v {
				t.Fatalf("replica %d of %s holds %v, want the single value %s", i, k, sibs, v)
			}
		}
	}
}

// TestTxnOutboxDeliversThroughMessageLoss (Kronos paper §3.3 with
// replication): transfers over three servers (N = 3, W = 2) whose outbox
// pushes lose 30% of requests and 30% of acknowledgements. Transactions
// answered UNAVAILABLE (fewer than W acknowledgements in time) are
// committed on their primary anyway; once the outboxes drain, every
// replica of every account holds the primary's value, and the balances are
// the initial ones plus every transfer (acknowledged or not: each either
// committed or was aborted as a conflict).
func TestTxnOutboxDeliversThroughMessageLoss(t *testing.T) {
	var loss *lossyPush
	servers := txnCluster(t, 3, func(c *ServerConfig) {
		if loss == nil {
			loss = &lossyPush{peers: c.Peers, rng: rand.New(rand.NewPCG(7, 7)), lossPerMil: 300}
		}
		c.outboxSend = loss.send
		c.OutboxRetry = 20 * time.Millisecond
		c.TxnTimeout = 2 * time.Second
	})
	const accounts, initial = 6, 100
	keys := make([]string, accounts)
	var init []kvcore.TxnWriteJSON
	for i := range keys {
		keys[i] = fmt.Sprintf("acct-%d", i)
		init = append(init, kvcore.TxnWriteJSON{Key: keys[i], Value: []byte(strconv.Itoa(initial))})
	}
	for {
		_, err := postTxn(servers[0].Addr(), kvcore.TxnRequest{Writes: init})
		if err == nil {
			break
		}
		if !errors.Is(err, kvcore.ErrUnavailable) {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	net := make([]int, accounts)
	var acked, unacked int
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for range 30 {
				a, b := rng.IntN(accounts), rng.IntN(accounts-1)
				if b >= a {
					b++
				}
				amt := 1 + rng.IntN(9)
				_, err := postTxn(servers[rng.IntN(3)].Addr(), kvcore.TxnRequest{Writes: []kvcore.TxnWriteJSON{
					{Key: keys[a], Value: []byte(strconv.Itoa(-amt)), Add: true},
					{Key: keys[b], Value: []byte(strconv.Itoa(amt)), Add: true},
				}})
				mu.Lock()
				switch {
				case err == nil:
					acked++
					net[a] -= amt
					net[b] += amt
				case errors.Is(err, kvcore.ErrTxnConflict):
				case errors.Is(err, kvcore.ErrUnavailable):
					unacked++ // outcome unknown to the client
				default:
					mu.Unlock()
					errc <- err
					return
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	waitOutboxes(t, servers)
	r, err := postTxn(servers[1].Addr(), kvcore.TxnRequest{Reads: keys})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	sum := 0
	for i, k := range keys {
		if len(r.Reads[k]) != 1 {
			t.Fatalf("%s has siblings %v", k, r.Reads[k])
		}
		v := string(r.Reads[k][0].Value)
		want[k] = v
		n, _ := strconv.Atoi(v)
		sum += n
		if unacked == 0 && v != strconv.Itoa(initial+net[i]) {
			t.Fatalf("%s = %s, want %d", k, v, initial+net[i])
		}
	}
	if sum != accounts*initial {
		t.Fatalf("the balances sum to %d, want %d", sum, accounts*initial)
	}
	checkReplicasAgree(t, servers, want)
	loss.mu.Lock()
	lost := loss.lost
	loss.mu.Unlock()
	if acked == 0 || lost == 0 {
		t.Fatalf("the test did not exercise loss: %d acknowledged, %d messages lost", acked, lost)
	}
	t.Logf("%d transfers acknowledged, %d unknown (fewer than W in time), %d push messages lost", acked, unacked, lost)
}

// TestTxnOutboxSurvivesRestart: a primary runs a transaction while every
// push fails (its replicas unreachable); its outbox keeps the records
// through a restart on the same store, and once pushes work again the
// other replicas receive the write.
func TestTxnOutboxSurvivesRestart(t *testing.T) {
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	peers := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} // only server 0 runs
	fs := vfs.NewMem()
	var down bool
	var mu sync.Mutex
	var got []outboxRecord
	open := func() *Server {
		cfg := DefaultServerConfig()
		cfg.Peers, cfg.Oracle, cfg.W = peers, oracle, 1
		cfg.Replica.Self, cfg.Replica.Dir, cfg.Replica.FS = 0, "kv", fs
		cfg.OutboxRetry = 10 * time.Millisecond
		cfg.outboxSend = func(_ context.Context, rec outboxRecord) error {
			mu.Lock()
			defer mu.Unlock()
			if down {
				return errLost
			}
			got = append(got, rec)
			return nil
		}
		s, err := NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	down = true
	var key string
	for k := 0; ; k++ {
		key = fmt.Sprintf("k%d", k)
		if s.ring.Replicas(nil, key, 1)[0] == 0 {
			break
		}
	}
	id := txnStamp(0, 3, 1)
	if _, err := s.txn.part.Prepare(id, nil, []TxnWrite{{Key: key, Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	s.txn.mu.Lock()
	if err := s.decideLocked(id, true); err != nil {
		t.Fatal(err)
	}
	s.txn.mu.Unlock()
	if n := s.Replica().OutboxLen(); n != 2 {
		t.Fatalf("outbox holds %d records, want 2 (the key's two other replicas)", n)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Stop()
	if n := s.Replica().OutboxLen(); n != 2 {
		t.Fatalf("after the restart the outbox holds %d records, want 2", n)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	s.wg.Add(1)
	go s.outboxPusher()
	for deadline := time.Now().Add(10 * time.Second); s.Replica().OutboxLen() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the recovered outbox was never pushed")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	to := map[int]bool{}
	for _, rec := range got {
		if rec.Key != key || string(rec.Sibling.Value) != "v" {
			t.Fatalf("pushed %+v, want %s = v", rec, key)
		}
		to[rec.To] = true
	}
	others := s.otherReplicas(key)
	if len(to) != len(others) || !to[others[0]] || !to[others[1]] {
		t.Fatalf("pushed to %v, want %v", to, others)
	}
}

// BenchmarkTxnTransferReplicated measures one transfer (two Add writes on
// two accounts) over three in-process servers, N = 3, answered after W
// replicas of each key hold it (W = 1: the primary alone, the pushes in
// the background).
func BenchmarkTxnTransferReplicated(b *testing.B) {
	for _, w := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("W=%d", w), func(b *testing.B) {
			servers := txnCluster(b, 3, func(c *ServerConfig) { c.W = w })
			keys := []string{"acct-a", "acct-b"}
			for i := 0; b.Loop(); i++ {
				_, err := postTxn(servers[i%3].Addr(), kvcore.TxnRequest{Writes: []kvcore.TxnWriteJSON{
					{Key: keys[i%2], Value: []byte("-1"), Add: true},
					{Key: keys[(i+1)%2], Value: []byte("1"), Add: true},
				}})
				if err != nil && !errors.Is(err, kvcore.ErrTxnConflict) {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTxnFewerThanWReplicasIsUnavailableButCommitted: with W = 3 and one
// replica stopped, a transaction commits on its primary and one other
// replica but is answered UNAVAILABLE (W not reached in TxnTimeout); a
// later read sees it, and the stopped replica's record waits in the
// outbox.
func TestTxnFewerThanWReplicasIsUnavailableButCommitted(t *testing.T) {
	servers := txnCluster(t, 3, func(c *ServerConfig) { c.W, c.TxnTimeout = 3, 500*time.Millisecond })
	var key string
	for k := 0; ; k++ {
		key = fmt.Sprintf("k%d", k)
		if servers[0].ring.Replicas(nil, key, 1)[0] == 0 {
			break
		}
	}
	if err := servers[2].Stop(); err != nil {
		t.Fatal(err)
	}
	_, err := postTxn(servers[0].Addr(), kvcore.TxnRequest{Writes: []kvcore.TxnWriteJSON{{Key: key, Value: []byte("v")}}})
	if !errors.Is(err, kvcore.ErrUnavailable) {
		t.Fatalf("with 2 of W = 3 replicas: %v, want UNAVAILABLE", err)
	}
	r, err := postTxn(servers[1].Addr(), kvcore.TxnRequest{Reads: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	if sibs := r.Reads[key]; len(sibs) != 1 || string(sibs[0].Value) != "v" {
		t.Fatalf("after the UNAVAILABLE answer %s holds %v, want v (committed on its primary)", key, sibs)
	}
	sibs, _, err := servers[1].Replica().Get(key, vclock.HVC{})
	if err != nil || len(sibs) != 1 || string(sibs[0].Value) != "v" {
		t.Fatalf("the live replica 1 holds %v (%v), want v", sibs, err)
	}
	if n := servers[0].Replica().OutboxLen(); n != 1 {
		t.Fatalf("primary's outbox holds %d records, want 1 (for the stopped replica)", n)
	}
}
