// Package testproc runs real processes for tests: the weft binary built
// once per test (Build), run on loopback ports (FreeAddrs), killed with
// SIGKILL (kill -9) by a nemesis and restarted on the same data directory
// and port.
//
// A Proc is a launch.Child, which does the supervising: a process group of
// its own, signals to the whole group, the output appended to one log
// across restarts, the wait for a ready line, and on Linux a SIGKILL from
// the kernel if the test binary itself dies (Pdeathsig). This package adds
// only what needs testing: Start fails the test when the process does not
// come up and registers a cleanup that kills it even when the test fails
// or panics.
//
// A Proc is safe for concurrent use: a nemesis goroutine may Kill and
// Restart it while the test reads its state.
package testproc
