package main

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weft-db/weft/client/weft"
	"github.com/weft-db/weft/examples/internal/exweft"
	"github.com/weft-db/weft/examples/social/tao"
)

// The example against a real server (an in-process engine behind the gRPC
// front end), twice on the same server; what it printed is checked against
// the generator and against independent reads.
func TestSocialNetwork(t *testing.T) {
	addr, c := exweft.Serve(t)
	ctx := t.Context()

	cfg := defaults()
	cfg.Addr = addr
	var out bytes.Buffer
	r, err := run(ctx, &out, cfg)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	n := r.Net
	if len(n.Friendships) != cfg.Friendships || len(n.Posts) != cfg.Posts || len(n.Likes) != cfg.Likes {
		t.Fatalf("generated %d friendships, %d posts, %d likes; asked for %d, %d, %d",
			len(n.Friendships), len(n.Posts), len(n.Likes), cfg.Friendships, cfg.Posts, cfg.Likes)
	}
	g := tao.New(c, r.Prefix)
	handles := func(us []int) []string {
		out := make([]string, len(us))
		for i, u := range us {
			out[i] = g.User(u)
		}
		sort.Strings(out)
		return out
	}

	// Every user's friend edges, read independently, are the generator's.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for u := range n.Users {
		v, err := tx.GetVertex(ctx, weft.Handle(g.User(u)))
		if err != nil || !v.Exists {
			t.Fatalf("user %d: %+v %v", u, v, err)
		}
		var got []string
		for _, e := range v.Edges {
			if e.Props["kind"] == tao.KindFriend {
				got = append(got, e.Dst)
			}
		}
		sort.Strings(got)
		if want := handles(n.FriendsOf(u)); !slices.Equal(got, want) {
			t.Fatalf("user %d's friends: graph %v, generator %v", u, got, want)
		}
	}
	if want := handles(n.FriendsOf(0)); !slices.Equal(r.Friends, want) {
		t.Errorf("printed friends %v, generator %v", r.Friends, want)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("user/0 has %d friends", len(n.FriendsOf(0)))) {
		t.Errorf("the output does not give user/0's friend count %d", len(n.FriendsOf(0)))
	}

	// Suggestions: the generator's friends of friends, by mutual friends.
	friends := map[int]bool{0: true}
	for _, f := range n.FriendsOf(0) {
		friends[f] = true
	}
	mutual := map[int]int{}
	for _, f := range n.FriendsOf(0) {
		for _, ff := range n.FriendsOf(f) {
			if !friends[ff] {
				mutual[ff]++
			}
		}
	}
	var want []tao.Suggestion
	for u, m := range mutual {
		want = append(want, tao.Suggestion{User: g.User(u), Mutual: m})
	}
	sort.Slice(want, func(i, j int) bool {
		if want[i].Mutual != want[j].Mutual {
			return want[i].Mutual > want[j].Mutual
		}
		return want[i].User < want[j].User
	})
	if want = want[:min(5, len(want))]; !slices.Equal(r.Suggestions, want) {
		t.Errorf("suggestions %v, generator %v", r.Suggestions, want)
	}
	if len(r.Suggestions) == 0 || r.Suggestions[0].Mutual < 2 {
		t.Errorf("suggestions %v: want some with mutual friends", r.Suggestions)
	}

	// Timeline: the friends' newest posts.
	var tl []int
	for i, p := range n.Posts {
		if friends[p.Author] && p.Author != 0 {
			tl = append(tl, i)
		}
	}
	sort.Slice(tl, func(i, j int) bool { return n.Posts[tl[i]].At > n.Posts[tl[j]].At })
	if len(r.Timeline) != min(5, len(tl)) {
		t.Fatalf("timeline has %d posts, want %d", len(r.Timeline), min(5, len(tl)))
	}
	for i, p := range r.Timeline {
		if p.Handle != g.Post(tl[i]) || p.Author != g.User(n.Posts[tl[i]].Author) || p.At != n.Posts[tl[i]].At {
			t.Errorf("timeline[%d] = %+v, want post %d %+v", i, p, tl[i], n.Posts[tl[i]])
		}
	}

	// Top posts: the generator's like counts.
	likes := n.LikesOf()
	sorted := slices.Clone(likes)
	slices.SortFunc(sorted, func(a, b int64) int { return int(b - a) })
	for i, p := range r.Top {
		if p.Likes != sorted[i] {
			t.Errorf("top[%d] has %d likes, generator's %d-th most liked has %d", i, p.Likes, i+1, sorted[i])
		}
	}

	// The concurrent likes: every one counted once, every liker has the edge.
	if r.LikesAdded != cfg.Likers {
		t.Errorf("likes added %d, want %d likers", r.LikesAdded, cfg.Likers)
	}
	got, err := g.LikeCount(ctx, r.HotPost)
	if err != nil {
		t.Fatal(err)
	}
	if want := likes[len(likes)-1] + int64(cfg.Likers); got != want || r.LikesAfter != want {
		t.Errorf("hot post has %d likes (printed %d), want %d loaded + %d added", got, r.LikesAfter, likes[len(likes)-1], cfg.Likers)
	}
	edges := 0
	for u := range n.Users {
		if ok, err := g.Liked(ctx, g.User(u), r.HotPost); err != nil {
			t.Fatal(err)
		} else if ok {
			edges++
		}
	}
	if int64(edges) != got {
		t.Errorf("%d like edges point at the hot post, its count is %d", edges, got)
	}
	// A like repeated is not counted twice.
	if added, err := g.Like(ctx, g.User(0), g.Post(0)); err != nil {
		t.Fatal(err)
	} else if again, err := g.Like(ctx, g.User(0), g.Post(0)); err != nil || again {
		t.Errorf("second like of one post by one user: added %v, %v (first added %v)", again, err, added)
	}

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Vertices != int64(n.Users+len(n.Posts)) {
		t.Errorf("server holds %d vertices, want %d users + %d posts", st.Vertices, n.Users, len(n.Posts))
	}

	// Runs again against the same server, under a new prefix.
	out.Reset()
	r2, err := run(ctx, &out, cfg)
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out.String())
	}
	if r2.Prefix == r.Prefix || !slices.Equal(r2.Suggestions, rebase(r.Suggestions, r.Prefix, r2.Prefix)) {
		t.Errorf("second run: prefix %s (first %s), suggestions %v (first %v)", r2.Prefix, r.Prefix, r2.Suggestions, r.Suggestions)
	}
}

func rebase(s []tao.Suggestion, from, to string) []tao.Suggestion {
	out := slices.Clone(s)
	for i := range out {
		out[i].User = to + strings.TrimPrefix(out[i].User, from)
	}
	return out
}
