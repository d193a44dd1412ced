// Command fakeserve serves the front ends of `weft serve` over apitest.Fake
// instead of the engine, for client tests in other languages (the Python
// client's tests build and run it). Not for production: the fake keeps only
// the latest state, in memory.
//
//	fakeserve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 [--demo]
//
// It prints "grpc=ADDR http=ADDR" on one line once listening and stops on
// SIGINT/SIGTERM or when its standard input closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weft-db/weft/internal/api"
	"github.com/weft-db/weft/internal/api/apitest"
)

func main() {
	cfg := api.DefaultConfig()
	flag.StringVar(&cfg.GRPCAddr, "grpc-addr", "127.0.0.1:0", "gRPC listen address")
	flag.StringVar(&cfg.HTTPAddr, "http-addr", "127.0.0.1:0", "HTTP listen address")
	flag.Int64Var(&cfg.RequestBytesMax, "request-bytes-max", cfg.RequestBytesMax, "request size bound")
	demo := flag.Bool("demo", false, "load the demo graph")
	flag.Parse()
	if err := run(cfg, *demo); err != nil {
		fmt.Fprintln(os.Stderr, "fakeserve:", err)
		os.Exit(1)
	}
}

func run(cfg api.Config, demo bool) error {
	f := apitest.New()
	if demo {
		if _, err := api.LoadDemo(context.Background(), f); err != nil {
			return err
		}
	}
	srv, err := api.NewServer(f, cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	fmt.Printf("grpc=%s http=%s\n", srv.GRPCAddr(), srv.HTTPAddr())
	stdinClosed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	case err = <-srv.Err():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Stop(sctx)
	return err
}
