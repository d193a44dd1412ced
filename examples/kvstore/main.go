// Command kvstore demonstrates the transactional key-value store of the
// Kronos paper (§3.3) with its bank workload (§4.1.2): concurrent transfers
// and audits across partition servers, serialized by Kronos without locks,
// then checked by replaying the history in Kronos's order.
//
//	go run ./examples/kvstore [--kronos host:port] [--accounts 8] [--clients 8] [--transfers 25] [--seed 1]
//
// Without --kronos it starts an in-process replica in a temporary directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/weft-db/weft/client/kronos"
	"github.com/weft-db/weft/examples/internal/exkronos"
	"github.com/weft-db/weft/examples/kvstore/txkv"
)

func main() {
	addr := flag.String("kronos", "", "Kronos address (default: start an in-process replica)")
	accounts := flag.Int("accounts", 8, "bank accounts (keys)")
	clients := flag.Int("clients", 8, "concurrent transfer clients")
	transfers := flag.Int("transfers", 25, "transfers per client")
	seed := flag.Uint64("seed", 1, "workload seed")
	flag.Parse()
	cfg := txkv.Config{Keys: *accounts, Partitions: 3, Initial: 100, JitterMax: time.Millisecond, Seed: *seed}
	bank := txkv.BankConfig{Clients: *clients, Transfers: *transfers, Seed: *seed}
	if err := run(os.Stdout, *addr, cfg, bank); err != nil {
		fmt.Fprintln(os.Stderr, "kvstore:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, addr string, cfg txkv.Config, bank txkv.BankConfig) error {
	addr, stop, err := exkronos.Resolve(addr)
	if err != nil {
		return err
	}
	defer stop()
	s, err := txkv.Open(addr, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	fmt.Fprintf(w, "Kronos at %s; %d accounts of %d over %d partitions\n", addr, cfg.Keys, cfg.Initial, cfg.Partitions)
	start := time.Now()
	res, err := txkv.RunBank(ctx, s, bank)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	st := s.Stats()
	moved := 0
	for _, c := range res.History {
		if _, ok := res.Transfers[c.Event]; ok && c.Wrote != nil {
			moved++
		}
	}
	fmt.Fprintf(w, "%d transactions committed in %v: %d transfers (%d moved money, the rest found too little), %d audits\n",
		st.Commits, elapsed.Round(time.Millisecond), len(res.Transfers), moved, len(res.Audits))
	fmt.Fprintf(w, "%d attempts aborted on MUST_CONFLICT and were retried as new events\n", st.Aborts)
	want := int64(cfg.Keys) * cfg.Initial
	for i, a := range res.Audits {
		fmt.Fprintf(w, "  audit %2d (event %4d): total %d %v\n", i+1, a.Event, txkv.Sum(a.Read), a.Read)
		if txkv.Sum(a.Read) != want {
			return fmt.Errorf("audit %d saw total %d, want %d", i+1, txkv.Sum(a.Read), want)
		}
	}

	kc, err := kronos.Dial([]string{addr})
	if err != nil {
		return err
	}
	defer kc.Close()
	serial, err := txkv.Verify(ctx, kc, res.History, cfg.Keys, cfg.Initial)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "serializable: replaying all %d commits in two topological orders of their Kronos events\n", len(serial.Order))
	fmt.Fprintf(w, "reproduces every value read and ends at %v\n", serial.Final)
	return nil
}
