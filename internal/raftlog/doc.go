// Package raftlog is the durable half of an etcd raft replica: hard state,
// log entries and the latest snapshot kept in Pebble, loaded at start into a
// raft.MemoryStorage (etcd's own pattern: the WAL on disk, the serving copy
// in memory). Save is called with each Ready before its messages are sent,
// so nothing is acknowledged that is not on disk ("persist before send").
//
// With Sync the batch is fsynced (survives power loss); without it, it is
// written to the OS (survives kill -9 of the process, not of the machine), and
// durability against machine loss comes from the other replicas.
//
// A Log is used by one goroutine at a time.
package raftlog
