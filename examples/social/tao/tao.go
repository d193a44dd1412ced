package tao

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-db/weft/client/weft"
)

// Edge kinds, in the edges' "kind" property.
const (
	KindFriend   = "friend"
	KindAuthored = "authored"
	KindLiked    = "liked"
)

// Graph is the social network stored under one handle prefix.
type Graph struct {
	c      *weft.Client
	prefix string
}

// New returns the network under prefix on the server c talks to.
func New(c *weft.Client, prefix string) *Graph { return &Graph{c: c, prefix: prefix} }

// User and Post are the vertex handles of user u and post p.
func (g *Graph) User(u int) string { return fmt.Sprintf("%s/user/%d", g.prefix, u) }
func (g *Graph) Post(p int) string { return fmt.Sprintf("%s/post/%d", g.prefix, p) }

// edge handles are unique per source vertex: the kind and the destination.
func edgeTo(kind, dst string) string { return kind + ":" + dst }

// Load writes the network in transactions of at most batch items each
// (users, friendships — both edges together —, posts, likes).
func (g *Graph) Load(ctx context.Context, n *Network, batch int) (txs int, err error) {
	likes := n.LikesOf()
	in := func(count int, add func(tx *weft.Tx, i int)) error {
		for lo := 0; lo < count; lo += batch {
			hi := min(lo+batch, count)
			if err := g.c.Update(ctx, func(tx *weft.Tx) error {
				for i := lo; i < hi; i++ {
					add(tx, i)
				}
				return nil
			}); err != nil {
				return err
			}
			txs++
		}
		return nil
	}
	if err := in(n.Users, func(tx *weft.Tx, u int) {
		h := g.User(u)
		tx.CreateVertex(h)
		tx.SetVertexProp(weft.Handle(h), "kind", "user")
		tx.SetVertexProp(weft.Handle(h), "name", fmt.Sprintf("user%d", u))
	}); err != nil {
		return txs, fmt.Errorf("load users: %w", err)
	}
	if err := in(len(n.Friendships), func(tx *weft.Tx, i int) {
		a, b := g.User(n.Friendships[i][0]), g.User(n.Friendships[i][1])
		befriend(tx, a, b)
	}); err != nil {
		return txs, fmt.Errorf("load friendships: %w", err)
	}
	if err := in(len(n.Posts), func(tx *weft.Tx, i int) {
		p, author := g.Post(i), g.User(n.Posts[i].Author)
		tx.CreateVertex(p)
		tx.SetVertexProp(weft.Handle(p), "kind", "post")
		tx.SetVertexProp(weft.Handle(p), "author", author)
		tx.SetVertexProp(weft.Handle(p), "text", n.Posts[i].Text)
		tx.SetVertexProp(weft.Handle(p), "at", n.Posts[i].At)
		tx.SetVertexProp(weft.Handle(p), "likes", likes[i])
		e := edgeTo(KindAuthored, p)
		tx.CreateEdge(weft.Handle(author), e, weft.Handle(p))
		tx.SetEdgeProp(weft.Handle(author), e, "kind", KindAuthored)
	}); err != nil {
		return txs, fmt.Errorf("load posts: %w", err)
	}
	if err := in(len(n.Likes), func(tx *weft.Tx, i int) {
		u, p := g.User(n.Likes[i][0]), g.Post(n.Likes[i][1])
		e := edgeTo(KindLiked, p)
		tx.CreateEdge(weft.Handle(u), e, weft.Handle(p))
		tx.SetEdgeProp(weft.Handle(u), e, "kind", KindLiked)
	}); err != nil {
		return txs, fmt.Errorf("load likes: %w", err)
	}
	return txs, nil
}

// befriend adds the two edges of a friendship to tx.
func befriend(tx *weft.Tx, a, b string) {
	for _, p := range [][2]string{{a, b}, {b, a}} {
		e := edgeTo(KindFriend, p[1])
		tx.CreateEdge(weft.Handle(p[0]), e, weft.Handle(p[1]))
		tx.SetEdgeProp(weft.Handle(p[0]), e, "kind", KindFriend)
	}
}

// Befriend makes users a and b friends in one transaction (both edges).
func (g *Graph) Befriend(ctx context.Context, a, b string) error {
	return g.c.Update(ctx, func(tx *weft.Tx) error { befriend(tx, a, b); return nil })
}

// edgesOf reads v's out-edges of one kind, their destinations sorted.
func edgesOf(ctx context.Context, tx *weft.Tx, v, kind string) ([]string, error) {
	x, err := tx.GetVertex(ctx, weft.Handle(v), weft.ReadOptions{NoAliases: true})
	if err != nil {
		return nil, err
	}
	if !x.Exists {
		return nil, fmt.Errorf("%s: %w", v, weft.ErrNotFound)
	}
	var out []string
	for _, e := range x.Edges {
		if e.Props["kind"] == kind {
			out = append(out, e.Dst)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Friends lists a user's friends (handles, sorted).
func (g *Graph) Friends(ctx context.Context, u string) ([]string, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return edgesOf(ctx, tx, u, KindFriend)
}

// Suggestion is a friend-of-a-friend who is not yet a friend.
type Suggestion struct {
	User   string
	Mutual int // friends in common
}

// Suggestions lists friends of friends of u who are not u's friends, most
// mutual friends first (then by handle), at most max. The candidates come
// from the two_neighborhood node program over friend edges; the mutual
// counts from the friends' edges, read at the same snapshot.
func (g *Graph) Suggestions(ctx context.Context, u string, max int) ([]Suggestion, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	friends, err := edgesOf(ctx, tx, u, KindFriend)
	if err != nil {
		return nil, err
	}
	var hood struct {
		Nodes []struct {
			Node string `json:"node"`
		} `json:"nodes"`
	}
	if err := g.c.RunAt(ctx, tx.Snapshot(), "two_neighborhood", map[string]any{
		"node": u, "prop_key": "name", "edge_props": map[string]any{"kind": KindFriend},
	}, &hood); err != nil {
		return nil, err
	}
	isFriend := map[string]bool{u: true}
	for _, f := range friends {
		isFriend[f] = true
	}
	mutual := map[string]int{}
	for _, n := range hood.Nodes {
		if !isFriend[n.Node] && strings.HasPrefix(n.Node, g.prefix+"/") {
			mutual[n.Node] = 0
		}
	}
	for _, f := range friends {
		ff, err := edgesOf(ctx, tx, f, KindFriend)
		if err != nil {
			return nil, err
		}
		for _, x := range ff {
			if _, ok := mutual[x]; ok {
				mutual[x]++
			}
		}
	}
	out := make([]Suggestion, 0, len(mutual))
	for h, m := range mutual {
		out = append(out, Suggestion{User: h, Mutual: m})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Mutual != out[j].Mutual {
			return out[i].Mutual > out[j].Mutual
		}
		return out[i].User < out[j].User
	})
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

// PostView is a post as read.
type PostView struct {
	Handle, Author, Text string
	At, Likes            int64
}

func postOf(v *weft.Vertex) PostView {
	p := PostView{Handle: v.Handle}
	p.Author, _ = v.Props["author"].(string)
	p.Text, _ = v.Props["text"].(string)
	p.At, _ = v.Props["at"].(int64)
	p.Likes, _ = v.Props["likes"].(int64)
	return p
}

// Timeline is u's friends' latest posts, newest first, at most max, read
// at one snapshot.
func (g *Graph) Timeline(ctx context.Context, u string, max int) ([]PostView, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	friends, err := edgesOf(ctx, tx, u, KindFriend)
	if err != nil {
		return nil, err
	}
	var out []PostView
	for _, f := range friends {
		posts, err := edgesOf(ctx, tx, f, KindAuthored)
		if err != nil {
			return nil, err
		}
		for _, p := range posts {
			v, err := tx.GetVertex(ctx, weft.Handle(p), weft.ReadOptions{NoEdges: true, NoAliases: true})
			if err != nil {
				return nil, err
			}
			out = append(out, postOf(v))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At > out[j].At })
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

// Posts reads posts 0..count-1 at one snapshot.
func (g *Graph) Posts(ctx context.Context, count int) ([]PostView, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]PostView, 0, count)
	for i := range count {
		v, err := tx.GetVertex(ctx, weft.Handle(g.Post(i)), weft.ReadOptions{NoEdges: true, NoAliases: true})
		if err != nil {
			return nil, err
		}
		out = append(out, postOf(v))
	}
	return out, nil
}

// Like records that user u likes post p, once: one transaction reads the
// post's count and the user's like edge, and writes count+1 with the edge.
// It reports whether this call added the like.
func (g *Graph) Like(ctx context.Context, u, p string) (added bool, err error) {
	e := edgeTo(KindLiked, p)
	err = g.c.Update(ctx, func(tx *weft.Tx) error {
		added = false
		have, err := tx.GetEdge(ctx, weft.Handle(u), e)
		if err != nil {
			return err
		}
		if have.Exists {
			return nil
		}
		v, err := tx.GetVertex(ctx, weft.Handle(p), weft.ReadOptions{NoEdges: true, NoAliases: true})
		if err != nil {
			return err
		}
		if !v.Exists {
			return fmt.Errorf("%s: %w", p, weft.ErrNotFound)
		}
		n, _ := v.Props["likes"].(int64)
		tx.SetVertexProp(weft.Handle(p), "likes", n+1)
		tx.CreateEdge(weft.Handle(u), e, weft.Handle(p))
		tx.SetEdgeProp(weft.Handle(u), e, "kind", KindLiked)
		added = true
		return nil
	})
	return added, err
}

// LikeCount reads post p's like count.
func (g *Graph) LikeCount(ctx context.Context, p string) (int64, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	v, err := tx.GetVertex(ctx, weft.Handle(p), weft.ReadOptions{NoEdges: true, NoAliases: true})
	if err != nil {
		return 0, err
	}
	return postOf(v).Likes, nil
}

// Liked reports whether user u has a like edge to post p.
func (g *Graph) Liked(ctx context.Context, u, p string) (bool, error) {
	tx, err := g.c.Begin(ctx)
	if err != nil {
		return false, err
	}
	e, err := tx.GetEdge(ctx, weft.Handle(u), edgeTo(KindLiked, p))
	if err != nil {
		return false, err
	}
	return e.Exists, nil
}
