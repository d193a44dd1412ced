package kvcore

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weft-db/weft/internal/invariants"
)

// Ring limits.
const (
	// ServersMax bounds the servers of a ring (and of a monitor spec).
	ServersMax = 1 << 12
	// VNodesMax bounds the virtual nodes per server.
	VNodesMax = 1 << 12
)

// Ring is a consistent-hash ring of servers with virtual nodes (Dynamo,
// Voldemort): each server owns VNodes points ("tokens") on a 64-bit circle,
// and a key's replicas are the first N distinct servers met walking
// clockwise from the key's hash — its preference list.
//
// Servers are numbered 0..Servers−1 (their order in the peer list) and a
// token depends only on (server number, vnode number), never on addresses:
// every client and server that agrees on the count and VNodes computes the
// same ring, and adding server n moves only the keys its new tokens take
// (about 1/(n+1) of them), none between old servers.
//
// A Ring is immutable and safe for concurrent use.
type Ring struct {
	servers int
	vnodes  int
	tokens  []token // sorted by (hash, server)
}

type token struct {
	hash   uint64
	server int
}

// NewRing builds the ring of servers servers with vnodes tokens each.
func NewRing(servers, vnodes int) (*Ring, error) {
	if servers < 1 || servers > ServersMax {
		return nil, fmt.Errorf("%w: %d servers (want 1 to %d)", ErrInvalid, servers, ServersMax)
	}
	if vnodes < 1 || vnodes > VNodesMax {
		return nil, fmt.Errorf("%w: %d virtual nodes (want 1 to %d)", ErrInvalid, vnodes, VNodesMax)
	}
	r := &Ring{servers: servers, vnodes: vnodes, tokens: make([]token, 0, servers*vnodes)}
	var buf [16]byte
	for s := range servers {
		for v := range vnodes {
			binary.BigEndian.PutUint64(buf[:8], uint64(s))
			binary.BigEndian.PutUint64(buf[8:], uint64(v))
			r.tokens = append(r.tokens, token{hash: hash64(buf[:]), server: s})
		}
	}
	slices.SortFunc(r.tokens, func(a, b token) int {
		if a.hash != b.hash {
			if a.hash < b.hash {
				return -1
			}
			return 1
		}
		return a.server - b.server
	})
	if invariants.On {
		for i := 1; i < len(r.tokens); i++ {
			a, b := r.tokens[i-1], r.tokens[i]
			assert(a.hash < b.hash || (a.hash == b.hash && a.server < b.server), "ring tokens out of order at %d", i)
		}
	}
	return r, nil
}

// Servers is the number of servers.
func (r *Ring) Servers() int { return r.servers }

// VNodes is the number of tokens per server.
func (r *Ring) VNodes() int { return r.vnodes }

// KeyHash is the position of key on the ring.
func KeyHash(key string) uint64 { return hash64([]byte(key)) }

// Replicas appends to dst the preference list of key: the first n distinct
// servers clockwise from the key's hash (n is capped at the server count).
// The first is the key's primary.
func (r *Ring) Replicas(dst []int, key string, n int) []int {
	n = min(n, r.servers)
	h := KeyHash(key)
	i, _ := slices.BinarySearchFunc(r.tokens, h, func(t token, h uint64) int {
		if t.hash < h {
			return -1
		}
		if t.hash > h {
			return 1
		}
		return 0
	})
	start := len(dst)
	for k := 0; k < len(r.tokens) && len(dst)-start < n; k++ {
		s := r.tokens[(i+k)%len(r.tokens)].server
		if !slices.Contains(dst[start:], s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// hash64 is FNV-1a followed by a 64-bit finaliser (splitmix64's), so that
// keys differing in their last byte land far apart.
func hash64(b []byte) uint64 {
	x := uint64(14695981039346656037) // FNV-1a offset basis
	for _, c := range b {
		x ^= uint64(c)
		x *= 1099511628211 // FNV prime
	}
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
