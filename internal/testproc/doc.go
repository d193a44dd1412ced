// Package testproc starts, kills and restarts real processes for tests: the
// weft binary built once per test, run on loopback ports, killed with SIGKILL
// (kill -9) by a nemesis and restarted on the same data directory and port.
//
// Every process runs in its own process group and is killed with the whole
// group, so nothing it forks outlives it. Start registers a cleanup that
// kills the process even when the test fails or panics; on Linux the child
// also receives SIGKILL if the test binary itself dies (Pdeathsig).
//
// A Proc is safe for concurrent use: a nemesis goroutine may Kill and
// Restart it while the test reads its state.
package testproc
