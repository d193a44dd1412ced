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
// A Log is used by one goroutine at a time.
package raftlog
