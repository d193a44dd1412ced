// Command timeline demonstrates the social-network timeline of the Kronos
// paper (§3.1) against a Kronos service: a reply fanned out by a prompt shard
// reaches a timeline before the post it answers, arrival order shows it
// first, and the Kronos-ordered render does not.
//
//	go run ./examples/timeline [--kronos host:port] [--users 12] [--rounds 4] [--seed 1]
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
	"github.com/weft-db/weft/examples/timeline/social"
)

func main() {
	addr := flag.String("kronos", "", "Kronos address (default: start an in-process replica)")
	users := flag.Int("users", 12, "users in the random workload")
	rounds := flag.Int("rounds", 4, "rounds of post, reply, reply-to-reply")
	seed := flag.Uint64("seed", 1, "workload seed")
	flag.Parse()
	if err := run(os.Stdout, *addr, social.SimConfig{Users: *users, Rounds: *rounds, Lagging: true, Seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, addr string, sim social.SimConfig) error {
	addr, stop, err := exkronos.Resolve(addr)
	if err != nil {
		return err
	}
	defer stop()
	const shards = 3
	var clients []*kronos.Client
	for range shards {
		kc, err := kronos.Dial([]string{addr})
		if err != nil {
			return err
		}
		defer kc.Close()
		clients = append(clients, kc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fmt.Fprintf(w, "Kronos at %s, %d shards\n\n", addr, shards)
	if err := lunch(ctx, w, clients); err != nil {
		return err
	}
	return workload(ctx, w, clients, sim)
}

var names = []string{"alice", "bob", "carol", "dave"}

// lunch is Figure 1's transitive case: dave follows alice and carol but not
// bob, so he never sees the reply that links carol's message to alice's.
func lunch(ctx context.Context, w io.Writer, clients []*kronos.Client) error {
	const alice, bob, carol, dave = 0, 1, 2, 3
	n, err := social.NewNetwork(social.Config{Friends: [][]int{
		alice: {bob, dave}, bob: {alice, carol}, carol: {bob, dave}, dave: {alice, carol},
	}}, clients)
	if err != nil {
		return err
	}
	n.Shard(0).Hold() // alice's shard lags
	p, err := n.Home(alice).Post(ctx, alice, "anyone up for lunch?")
	if err != nil {
		return err
	}
	r, err := n.Home(bob).Reply(ctx, bob, "yes! noon?", p)
	if err != nil {
		return err
	}
	if _, err := n.Home(carol).Reply(ctx, carol, "noon works, count me in", r); err != nil {
		return err
	}
	n.Settle()
	n.Shard(0).Release()
	n.Settle()
	arrived := n.Timeline(dave).Arrived()
	rendered, err := n.Render(ctx, dave)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "dave follows alice and carol, not bob; alice's shard lags.")
	show(w, "dave's timeline by arrival:", arrived)
	show(w, "dave's timeline ordered by Kronos:", rendered)
	fmt.Fprintln(w)
	return nil
}

func show(w io.Writer, title string, posts []social.Post) {
	fmt.Fprintln(w, "  "+title)
	for _, p := range posts {
		fmt.Fprintf(w, "    %-6s %q\n", names[p.Author], p.Text)
	}
}

func workload(ctx context.Context, w io.Writer, clients []*kronos.Client, sim social.SimConfig) error {
	start := time.Now()
	res, err := social.Simulate(ctx, clients, sim)
	if err != nil {
		return err
	}
	arrival, rendered := 0, 0
	for _, a := range res.Arrivals {
		arrival += social.Inversions(a, res.Posts)
	}
	for _, r := range res.Renders {
		rendered += social.Inversions(r, res.Posts)
	}
	fmt.Fprintf(w, "random workload: %d users, %d posts and replies, %d timeline renders in %v\n",
		sim.Users, len(res.Posts), len(res.Renders), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "  replies shown before what they answer, ordering by arrival: %d\n", arrival)
	fmt.Fprintf(w, "  replies shown before what they answer, ordering by Kronos:  %d\n", rendered)
	if rendered != 0 {
		return fmt.Errorf("%d Kronos-ordered renders broke a reply chain", rendered)
	}
	return nil
}
