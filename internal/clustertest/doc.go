// Package clustertest runs Weft clusters of real processes on loopback — a
// Kronos replica, shard processes, gatekeeper processes and PostgreSQL as the
// shared store, each started by the tests themselves — and checks them
// through the Go client. It has no non-test code.
package clustertest
