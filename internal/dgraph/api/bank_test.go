package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/weft-db/weft/internal/wire/dgraphpb"
)

// TestBankTransfersConserveTotal is Jepsen's bank workload through the
// Dgraph API: concurrent transactions each read two accounts and move
// money between them (query, mutate, CommitOrAbort; retried on ABORTED),
// while read-only transactions read every account. Every read must see
// the initial total: lost updates or read skew would change it.
func TestBankTransfersConserveTotal(t *testing.T) {
	const accounts, initial, workers, transfers = 5, 100, 4, 25
	f := newFixture(t, "acct: int @index(int) .\nbalance: int .", nil)
	ctx := context.Background()
	var objs []string
	for i := range accounts {
		objs = append(objs, fmt.Sprintf(`{"acct":%d,"balance":%d}`, i, initial))
	}
	f.setJSON(ctx, t, "["+joinComma(objs)+"]")
	type row struct {
		UID     string `json:"uid"`
		Acct    int    `json:"acct"`
		Balance int    `json:"balance"`
	}
	readAll := func(req *pb.Request) ([]row, *pb.Response, error) {
		resp, err := f.cli.Query(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		var out struct{ Q []row }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return nil, nil, err
		}
		return out.Q, resp, nil
	}
	transfer := func(rng *rand.Rand) error {
		from, to := rng.IntN(accounts), rng.IntN(accounts)
		rows, resp, err := readAll(&pb.Request{Query: fmt.Sprintf(`{ q(func: eq(acct, [%d, %d])) { uid acct balance } }`, from, to)})
		if err != nil {
			return err
		}
		if from == to || len(rows) != 2 {
			return nil
		}
		amt := rng.IntN(20)
		var nq string
		for _, r := range rows {
			b := r.Balance - amt
			if r.Acct == to {
				b = r.Balance + amt
			}
			nq += fmt.Sprintf("<%s> <balance> \"%d\" .\n", r.UID, b)
		}
		if _, err := f.cli.Query(ctx, &pb.Request{StartTs: resp.Txn.StartTs, Mutations: []*pb.Mutation{{SetNquads: []byte(nq)}}}); err != nil {
			return err
		}
		_, err = f.cli.CommitOrAbort(ctx, &pb.TxnContext{StartTs: resp.Txn.StartTs})
		return err
	}
	var writers, reader sync.WaitGroup
	errc := make(chan error, workers+1)
	aborts := make([]int, workers)
	for w := range workers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for done := 0; done < transfers; {
				err := transfer(rng)
				if status.Code(err) == codes.Aborted && aborts[w] < 100*transfers {
					aborts[w]++
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				done++
			}
		}()
	}
	stop := make(chan struct{})
	reads := 0
	reader.Add(1)
	go func() {
		defer reader.Done()
		for {
			rows, _, err := readAll(&pb.Request{ReadOnly: true, Query: `{ q(func: has(acct)) { uid acct balance } }`})
			if err != nil {
				errc <- err
				return
			}
			total := 0
			for _, r := range rows {
				total += r.Balance
			}
			if len(rows) != accounts || total != accounts*initial {
				errc <- fmt.Errorf("read %d accounts totalling %d, want %d totalling %d", len(rows), total, accounts, accounts*initial)
				return
			}
			reads++
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	writers.Wait()
	close(stop)
	reader.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	rows, _, err := readAll(&pb.Request{ReadOnly: true, Query: `{ q(func: has(acct)) { uid acct balance } }`})
	if err != nil {
		t.Fatal(err)
	}
	total, moved := 0, false
	for _, r := range rows {
		total += r.Balance
		moved = moved || r.Balance != initial
	}
	if total != accounts*initial || !moved {
		t.Fatalf("final balances %+v: want total %d and some money moved", rows, accounts*initial)
	}
	nAborts := 0
	for _, a := range aborts {
		nAborts += a
	}
	t.Logf("%d transfers committed, %d aborts retried, %d consistent full reads", workers*transfers, nAborts, reads)
}

func joinComma(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
