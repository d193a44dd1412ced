// Command social is a social network backend on Weft's graph database (TAO
// style; Weaver dissertation §4.8): it generates a seeded network of users,
// friendships, posts and likes, loads it in batched transactions through the
// Go client, prints a user's friends, friend suggestions (the
// two_neighborhood node program) with mutual-friend counts, a timeline and
// the most liked posts, then likes one post from many goroutines at once
// and shows that no like is lost.
//
//	go run ./examples/social                      # an in-process engine
//	go run ./examples/social --addr 127.0.0.1:7500 # a running `weft serve`
//
// Every run stores its network under a fresh handle prefix, so it can run
// again against the same server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/examples/internal/exweft"
	"github.com/weft-db/weft/examples/social/tao"
)

// config is what one run does.
type config struct {
	Addr                             string
	Seed                             uint64
	Users, Friendships, Posts, Likes int
	Batch, Likers                    int
	Prefix                           string // "" derives one from the clock
	Sample                           int    // the user shown
}

func defaults() config {
	return config{Seed: 1, Users: 200, Friendships: 1000, Posts: 500, Likes: 1500, Batch: 100, Likers: 40}
}

// report is what a run printed, for the test to check against the graph.
type report struct {
	Prefix      string
	Net         *tao.Network
	Sample      string
	Friends     []string
	Suggestions []tao.Suggestion
	Timeline    []tao.PostView
	Top         []tao.PostView
	HotPost     string
	LikesBefore int64
	LikesAdded  int
	LikesAfter  int64
}

func main() {
	cfg := defaults()
	flag.StringVar(&cfg.Addr, "addr", "", "gRPC address of a running `weft serve` (default: an in-process engine)")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated network")
	flag.IntVar(&cfg.Users, "users", cfg.Users, "users")
	flag.IntVar(&cfg.Friendships, "friendships", cfg.Friendships, "friendships")
	flag.IntVar(&cfg.Posts, "posts", cfg.Posts, "posts")
	flag.IntVar(&cfg.Likes, "likes", cfg.Likes, "likes loaded with the network")
	flag.IntVar(&cfg.Likers, "likers", cfg.Likers, "goroutines liking one post at once")
	flag.Parse()
	if _, err := run(context.Background(), os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "social:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, cfg config) (*report, error) {
	// Many likers contend on one post: allow Update enough retries.
	c, closeC, err := exweft.Connect(ctx, cfg.Addr, weft.Options{Attempts: 1000, BackoffMin: 200 * time.Microsecond, BackoffMax: 20 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer closeC()
	r := &report{Prefix: exweft.Prefix("social", cfg.Prefix)}
	g := tao.New(c, r.Prefix)

	r.Net = tao.Generate(cfg.Seed, cfg.Users, cfg.Friendships, cfg.Posts, cfg.Likes)
	start := time.Now()
	txs, err := g.Load(ctx, r.Net, cfg.Batch)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "loaded %d users, %d friendships (%d edges), %d posts, %d likes in %d transactions, %v\n",
		r.Net.Users, len(r.Net.Friendships), 2*len(r.Net.Friendships), len(r.Net.Posts), len(r.Net.Likes), txs,
		time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "handles start with %s/\n\n", r.Prefix)

	r.Sample = g.User(cfg.Sample)
	if r.Friends, err = g.Friends(ctx, r.Sample); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s has %d friends: %s\n", short(r.Prefix, r.Sample), len(r.Friends), list(r.Prefix, r.Friends, 12))
	if r.Suggestions, err = g.Suggestions(ctx, r.Sample, 5); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "people %s may know (two_neighborhood over friend edges):\n", short(r.Prefix, r.Sample))
	for _, s := range r.Suggestions {
		fmt.Fprintf(w, "  %-10s %d mutual friends\n", short(r.Prefix, s.User), s.Mutual)
	}
	if r.Timeline, err = g.Timeline(ctx, r.Sample, 5); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s's timeline (friends' latest posts):\n", short(r.Prefix, r.Sample))
	for _, p := range r.Timeline {
		fmt.Fprintf(w, "  %s  %-9s %-9s %q (%d likes)\n", time.Unix(p.At, 0).UTC().Format("Jan 02 15:04"),
			short(r.Prefix, p.Handle), short(r.Prefix, p.Author), p.Text, p.Likes)
	}
	posts, err := g.Posts(ctx, len(r.Net.Posts))
	if err != nil {
		return nil, err
	}
	r.Top = topByLikes(posts, 3)
	fmt.Fprintln(w, "most liked posts:")
	for _, p := range r.Top {
		fmt.Fprintf(w, "  %-9s by %-9s %3d likes\n", short(r.Prefix, p.Handle), short(r.Prefix, p.Author), p.Likes)
	}

	// Many users like one post at once: each like reads the count and
	// writes count+1; strict serializability loses none of them.
	hot := r.Net.Posts[len(r.Net.Posts)-1] // the newest post: few likes yet
	r.HotPost = g.Post(len(r.Net.Posts) - 1)
	if r.LikesBefore, err = g.LikeCount(ctx, r.HotPost); err != nil {
		return nil, err
	}
	liked := map[int]bool{}
	for _, l := range r.Net.Likes {
		if l[1] == len(r.Net.Posts)-1 {
			liked[l[0]] = true
		}
	}
	var likers []string
	for u := 0; u < r.Net.Users && len(likers) < cfg.Likers; u++ {
		if !liked[u] && u != hot.Author {
			likers = append(likers, g.User(u))
		}
	}
	start = time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, u := range likers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			added, err := g.Like(ctx, u, r.HotPost)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if added {
				r.LikesAdded++
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if r.LikesAfter, err = g.LikeCount(ctx, r.HotPost); err != nil {
		return nil, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n%d users liked %s at once (read count, write count+1) in %v; the server counts %d aborts so far\n",
		len(likers), short(r.Prefix, r.HotPost), time.Since(start).Round(time.Millisecond), st.Aborts)
	verdict := "no like lost"
	if r.LikesAfter != r.LikesBefore+int64(r.LikesAdded) {
		verdict = "LIKES LOST"
	}
	fmt.Fprintf(w, "  likes before %d + likes added %d = %d; count now %d: %s\n",
		r.LikesBefore, r.LikesAdded, r.LikesBefore+int64(r.LikesAdded), r.LikesAfter, verdict)
	if verdict != "no like lost" {
		return r, fmt.Errorf("%s: %d likes before, %d added, %d after", r.HotPost, r.LikesBefore, r.LikesAdded, r.LikesAfter)
	}
	return r, nil
}

// topByLikes returns the n most liked posts (ties: the older first).
func topByLikes(posts []tao.PostView, n int) []tao.PostView {
	out := append([]tao.PostView(nil), posts...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Likes > out[i].Likes || (out[j].Likes == out[i].Likes && out[j].At < out[i].At) {
				out[i], out[j] = out[j], out[i]
			}
		}
		if i+1 == n {
			break
		}
	}
	return out[:min(n, len(out))]
}

// short drops the run's prefix from a handle.
func short(prefix, h string) string { return strings.TrimPrefix(h, prefix+"/") }

func list(prefix string, hs []string, max int) string {
	var b strings.Builder
	for i, h := range hs {
		if i == max {
			fmt.Fprintf(&b, " … (%d more)", len(hs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(short(prefix, h))
	}
	return b.String()
}
