// Package vclock holds Weft's vector clocks: pure values, safe for concurrent
// reads, never mutated in place by comparison.
//
// A clock is an epoch (the cluster configuration version) followed by one
// counter per gatekeeper (dissertation §3.3.3). Epochs compare first: every
// clock of epoch e precedes every clock of epoch e+1. Within an epoch, clocks
// compare entry-wise; neither dominating means concurrent, and only those
// pairs need the timeline oracle (Kronos).
package vclock
