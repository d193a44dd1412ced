package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-db/weft/internal/kronos"
	"github.com/weft-db/weft/internal/kv/kvcore"
	"github.com/weft-db/weft/internal/order"
	"github.com/weft-db/weft/internal/vclock"
)

// txnStamp is coordinator owner's seq-th transaction among n servers.
func txnStamp(owner uint32, n int, seq uint64) vclock.Stamp {
	c := make([]uint64, n)
	c[owner] = seq
	return vclock.Stamp{Owner: owner, Clock: vclock.Clock{Epoch: 1, Counters: c}}
}

// txnCluster starts n servers on loopback sharing one in-process Kronos.
func txnCluster(t testing.TB, n int, tweak func(*ServerConfig)) []*Server {
	t.Helper()
	oracle, err := order.NewLocal(kronos.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var lns []net.Listener
	var peers []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		peers = append(peers, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close() // the servers listen on the same addresses
	}
	var out []*Server
	for i := range n {
		cfg := DefaultServerConfig()
		cfg.Peers, cfg.Oracle = peers, oracle
		cfg.Replica.Self, cfg.Replica.Dir, cfg.Replica.FS = i, "kv", vfs.NewMem()
		if tweak != nil {
			tweak(&cfg)
		}
		s, err := NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop() })
		out = append(out, s)
	}
	return out
}

func postTxn(addr string, req kvcore.TxnRequest) (kvcore.TxnResponse, error) {
	var out kvcore.TxnResponse
	b, _ := json.Marshal(req)
	resp, err := http.Post("http://"+addr+"/v1/kv/txn", "application/json", bytes.NewReader(b))
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e kvcore.ErrorJSON
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			return out, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return out, kvcore.ErrorOf(e.Error.Code, e.Error.Message)
	}
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// TestTxnOverHTTPTransfersKeepTheTotal (Kronos §3.3 over the network):
// concurrent transfers between accounts spread over three servers, each a
// transaction coordinated by a random server; every committed audit (a
// transaction reading every account) sees the same total, and the final
// balances equal the initial ones plus the committed transfers.
func TestTxnOverHTTPTransfersKeepTheTotal(t *testing.T) {
	servers := txnCluster(t, 3, nil)
	const accounts, initial = 8, 100
	keys := make([]string, accounts)
	var init []kvcore.TxnWriteJSON
	for i := range keys {
		keys[i] = fmt.Sprintf("acct-%d", i)
		init = append(init, kvcore.TxnWriteJSON{Key: keys[i], Value: []byte(strconv.Itoa(initial))})
	}
	if _, err := postTxn(servers[0].Addr(), kvcore.TxnRequest{Writes: init}); err != nil {
		t.Fatal(err)
	}
	total := func(r kvcore.TxnResponse) (int, error) {
		sum := 0
		for _, k := range keys {
			sibs := r.Reads[k]
			if len(sibs) != 1 {
				return 0, fmt.Errorf("%s has %d siblings", k, len(sibs))
			}
			v, err := strconv.Atoi(string(sibs[0].Value))
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	}
	var mu sync.Mutex
	net := make([]int, accounts) // committed deltas per account
	var committed, conflicts, audits int
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 40 {
				addr := servers[rng.IntN(len(servers))].Addr()
				if w == 0 { // the auditor
					r, err := postTxn(addr, kvcore.TxnRequest{Reads: keys})
					if errors.Is(err, kvcore.ErrTxnConflict) {
						continue
					}
					if err != nil {
						errc <- err
						return
					}
					if sum, err := total(r); err != nil || sum != accounts*initial {
						errc <- fmt.Errorf("an audit saw total %d (%v), want %d", sum, err, accounts*initial)
						return
					}
					mu.Lock()
					audits++
					mu.Unlock()
					continue
				}
				a, b := rng.IntN(accounts), rng.IntN(accounts-1)
				if b >= a {
					b++
				}
				amt := 1 + rng.IntN(9)
				_, err := postTxn(addr, kvcore.TxnRequest{Writes: []kvcore.TxnWriteJSON{
					{Key: keys[a], Value: []byte(strconv.Itoa(-amt)), Add: true},
					{Key: keys[b], Value: []byte(strconv.Itoa(amt)), Add: true},
				}})
				mu.Lock()
				switch {
				case err == nil:
					committed++
					net[a] -= amt
					net[b] += amt
				case errors.Is(err, kvcore.ErrTxnConflict):
					conflicts++
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
	r, err := postTxn(servers[1].Addr(), kvcore.TxnRequest{Reads: keys})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if got := string(r.Reads[k][0].Value); got != strconv.Itoa(initial+net[i]) {
			t.Fatalf("%s = %s, want %d (initial %d, committed transfers %+d)", k, got, initial+net[i], initial, net[i])
		}
	}
	if committed == 0 || audits == 0 {
		t.Fatalf("nothing committed: %d transfers, %d audits", committed, audits)
	}
	t.Logf("%d transfers committed, %d conflicts, %d audits", committed, conflicts, audits)
}

// TestTxnNeedsKronos: without an oracle a server refuses transactions.
func TestTxnNeedsKronos(t *testing.T) {
	s := testServer(t)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := postTxn(s.Addr(), kvcore.TxnRequest{Writes: []kvcore.TxnWriteJSON{{Key: "a", Value: []byte("1")}}}); !errors.Is(err, kvcore.ErrInvalid) {
		t.Fatalf("transaction without Kronos: %v, want ErrInvalid", err)
	}
}

// TestTxnPartRerunAfterCrashSkipsWhatItWrote: a committed part that ran
// one of its two Add writes before a crash, run again from its stored
// record, applies only the other (each write's marker commits with it), and
// its record and markers are gone afterwards.
func TestTxnPartRerunAfterCrashSkipsWhatItWrote(t *testing.T) {
	cfg := DefaultReplicaConfig()
	cfg.Dir, cfg.FS, cfg.Servers, cfg.Self = "kv", vfs.NewMem(), 1, 0
	cfg.Now = WallClock
	rep, err := OpenReplica(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	id := txnStamp(0, 1, 7)
	e := TxnExec{Txn: id, Writes: []TxnWrite{{Key: "a", Value: []byte("5"), Add: true}, {Key: "b", Value: []byte("-5"), Add: true}}}
	if err := rep.SavePrepared(3, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	// The crash: "a" written with its marker, "b" not.
	v := kvcore.Descend(nil, TxnActor(0), 1, kvcore.VersionEntriesMax)
	if _, _, err := rep.put("a", kvcore.Sibling{Version: v, Value: []byte("5")}, vclock.HVC{}, func(b *pebble.Batch, _ vclock.HVC) {
		_ = b.Set(txnWroteKey(stampKey(id), "a"), []byte{1}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rep.ExecTxnDurable(e, 3, nil); err != nil {
		t.Fatal(err)
	}
	vals, err := rep.Values([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["a"] != "5" || vals["b"] != "-5" {
		t.Fatalf("after the re-run: a=%q b=%q, want 5 and -5 (a's Add applied once)", vals["a"], vals["b"])
	}
	recs, err := rep.LoadPrepared()
	if err != nil || len(recs) != 0 {
		t.Fatalf("prepared records left: %v %v", recs, err)
	}
	if done, _ := rep.hasMeta(txnWroteKey(stampKey(id), "a")); done {
		t.Fatal("a's marker left behind")
	}
	// The part is recorded as the last run on both keys: a restarted
	// participant orders the next transaction on them after it.
	applied, err := rep.LoadApplied()
	if err != nil {
		t.Fatal(err)
	}
	p := NewTxnParticipant(8)
	for k, st := range applied {
		p.SetApplied(k, st)
	}
	prevs, err := p.Prepare(txnStamp(0, 1, 8), nil, []TxnWrite{{Key: "b", Value: []byte("1")}})
	if err != nil || len(prevs) != 1 || stampKey(prevs[0]) != stampKey(id) {
		t.Fatalf("after reloading the last transactions run: prevs %v (%v), want [%s]", prevs, err, id)
	}
}

// TestTxnUndecidedPartSettledByStatus (presumed abort): a part prepared for
// a transaction whose coordinator never decides (it died) is aborted by the
// janitor once it asks the coordinator, and the keys it held serve the
// next transaction.
func TestTxnUndecidedPartSettledByStatus(t *testing.T) {
	servers := txnCluster(t, 2, func(c *ServerConfig) { c.TxnTimeout = 200 * time.Millisecond })
	// A prepare from "server 1 as coordinator" that will never decide: it
	// is not in server 1's deciding set and has no commit record.
	orphan := txnStamp(1, 2, 42)
	var key string
	for k := 0; ; k++ {
		key = fmt.Sprintf("k%d", k)
		if servers[0].ring.Replicas(nil, key, 1)[0] == 0 {
			break
		}
	}
	var vote TxnVote
	if err := servers[1].txnCall(t.Context(), 0, "/v1/kv/txn/prepare", TxnPrepareRequest{Txn: kvcore.ToStampJSON(orphan), Writes: []kvcore.TxnWriteJSON{{Key: key, Value: []byte("orphan")}}}, &vote); err != nil || !vote.OK {
		t.Fatalf("prepare: %v %+v", err, vote)
	}
	// The janitor asks server 1 once the part is TxnTimeout old.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		servers[0].txn.mu.Lock()
		n := len(servers[0].txn.undecided)
		servers[0].txn.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the orphaned part was never settled")
		}
	}
	res, err := postTxn(servers[1].Addr(), kvcore.TxnRequest{Reads: []string{key}, Writes: []kvcore.TxnWriteJSON{{Key: key, Value: []byte("next")}}})
	if err != nil {
		t.Fatalf("the transaction behind the orphan: %v", err)
	}
	if sibs := res.Reads[key]; len(sibs) != 0 {
		t.Fatalf("the orphan's write took effect: %v", sibs)
	}
	if st := servers[1].statusOf(orphan); st != "abort" {
		t.Fatalf("status of the orphan: %s, want abort", st)
	}
}
