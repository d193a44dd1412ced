// Package tao is a social network backend on Weft's graph database, through
// the public Go client, in the spirit of Facebook's TAO API (objects and
// associations; Weaver dissertation §4.8): users and posts are vertices,
// friendships are a pair of edges created in one transaction, authorship is
// an edge from the author to the post, and a like is an edge from the user
// to the post plus an increment of the post's like count in the same
// transaction.
//
// Every handle starts with the Graph's prefix, so that runs against one
// server do not collide. Queries read at one snapshot each: Friends and
// Timeline through a transaction's reads, Suggestions through the built-in
// two_neighborhood node program run at that transaction's snapshot.
//
// A Graph is safe for concurrent use (the Client is; each call has its own
// transaction).
package tao
