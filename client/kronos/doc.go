// Package kronos is the Go client of Weft's event ordering service (Kronos).
//
// A Client talks to a replica group: mutations go to the leader (it follows
// NOT_LEADER hints and fails over between addresses), query_order pairs a
// follower cannot answer from its copy are re-asked of the leader, and every
// mutation carries a session sequence number so a retry after a lost reply is
// applied exactly once. Concurrent calls are batched by the server into one
// replicated log entry. A Client is safe for concurrent use.
package kronos
