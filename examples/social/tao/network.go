package tao

import (
	"math/rand/v2"
	"sort"
)

// Network is a generated social network: users are 0..Users-1, posts are
// indexes into Posts, and every pair is distinct.
type Network struct {
	Users       int
	Friendships [][2]int // a < b
	Posts       []PostSpec
	Likes       [][2]int // (user, post)
}

// PostSpec is one generated post: its author and its time (seconds).
type PostSpec struct {
	Author int
	At     int64
	Text   string
}

// Generate builds a network from seed: users users, about friendships
// friendships (a few "popular" users attract more), posts posts by random
// authors at increasing times, and about likes likes. The same arguments
// give the same network.
func Generate(seed uint64, users, friendships, posts, likes int) *Network {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	n := &Network{Users: users}
	pick := func() int {
		// Half the picks go to the first tenth of the users: a skewed degree.
		if r.IntN(2) == 0 {
			return r.IntN(max(1, users/10))
		}
		return r.IntN(users)
	}
	seen := map[[2]int]bool{}
	for tries := 0; len(n.Friendships) < friendships && tries < 20*friendships; tries++ {
		a, b := pick(), r.IntN(users)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		if k := [2]int{a, b}; !seen[k] {
			seen[k] = true
			n.Friendships = append(n.Friendships, k)
		}
	}
	words := []string{"coffee", "graphs", "raft", "lunch", "hiking", "jazz", "a cat", "the deadline", "snapshots", "rain"}
	at := int64(1_700_000_000)
	for range posts {
		at += 1 + r.Int64N(600)
		n.Posts = append(n.Posts, PostSpec{Author: r.IntN(users), At: at,
			Text: "thinking about " + words[r.IntN(len(words))] + " and " + words[r.IntN(len(words))]})
	}
	liked := map[[2]int]bool{}
	for tries := 0; len(n.Likes) < likes && tries < 20*likes && posts > 0; tries++ {
		// Early posts are liked more: a few posts become popular.
		p := min(r.IntN(posts), r.IntN(posts))
		if k := [2]int{r.IntN(users), p}; !liked[k] {
			liked[k] = true
			n.Likes = append(n.Likes, k)
		}
	}
	return n
}

// FriendsOf lists user u's friends, ascending.
func (n *Network) FriendsOf(u int) []int {
	var out []int
	for _, f := range n.Friendships {
		switch u {
		case f[0]:
			out = append(out, f[1])
		case f[1]:
			out = append(out, f[0])
		}
	}
	sort.Ints(out)
	return out
}

// LikesOf counts each post's likes.
func (n *Network) LikesOf() []int64 {
	out := make([]int64, len(n.Posts))
	for _, l := range n.Likes {
		out[l[1]]++
	}
	return out
}
