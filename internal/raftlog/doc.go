// Package raftlog is the durable half of an etcd raft replica: hard state,
// log entries and the latest snapshot kept in Pebble, loaded at start into a
// raft.MemoryStorage (etcd's own pattern: the WAL on disk, the serving copy
// in memory). Save is called with each Ready before its messages are sent,
// so nothing is acknowledged that is not on disk ("persist before send").
//
// With Sync the batch is fsynced before Save returns. Without it Pebble may
// still hold the batch in its own buffers, so kill -9 can lose entries the
// replica already acknowledged, which breaks raft's safety: use it for
// benchmarks only.
//
// The package also holds what the raft service shells of Kronos and the
// coordinator share (shell.go, transport.go): the log's place in a data
// directory, a group's ids, the message streams to the peers (Peers) and
// the receiving end of a peer's stream (ServeStream), and when to snapshot
// (Compactor). Each service keeps its own run loop, Ready handling and
// state machine.
//
// A Log and a Compactor are used by one goroutine at a time (the service's
// run loop); Peers' Send is safe for concurrent use.
package raftlog
