// Package launch starts, tracks and stops local processes: the detached
// processes of a cluster, for which `weft cluster up/down/status/add` are
// its commands and whose record the fault harness (internal/faults) and
// the scale bench (internal/bench/scale) read and update; and the supervised
// child processes of the fault harness and of the real-process tests
// (Child, through internal/testproc).
//
// The record is one typed state file, StateFile in the cluster's
// directory (State, Proc): every process started, with its pid, addresses,
// log and command line. Save writes it atomically (a temporary file, then
// a rename); Save and SetPid (a restart by someone else recording its new
// pid) hold the file's lock, so concurrent writers lose no update.
//
// Liveness is one check, Alive: the pid exists, is not a zombie
// (/proc/PID/stat), and runs the recorded command line, so that a reused
// pid is not taken for ours. Start runs a process detached in a process
// group of its own, its output appended to its log; signals (Signal, Kill,
// Stop: SIGTERM, a deadline, SIGKILL) go to the whole group, so nothing a
// process forks (PostgreSQL's server under `weft postgres`) outlives it.
//
// A Child is the one supervised child process: our child (not detached,
// and on Linux killed by the kernel if we die), in a process group of its
// own, its output appended to one log across restarts, each run after a
// line naming it. Start waits for a ready line (an exit first, or the
// timeout, is an error quoting the log's tail); Stop (SIGTERM and SIGCONT,
// SIGKILL after a grace), Kill, Pause (SIGSTOP), Resume and Restart signal
// the whole group. An exit nobody asked for (by Stop, Kill, a failed Start
// or ExpectExit) is recorded with the log's tail, for the nemesis's report.
//
// Up plans every process's name, directories and loopback addresses
// before any starts (a table of roles, plan.go; ports from FreeAddrs,
// ports.go), then starts the groups in order (Kronos and coordinator
// replicas, the store, shards, gatekeepers), each serving before the next
// starts, and waits for leaders and an active configuration. A stopped
// cluster restarts on its data with its addresses. LockDir keeps one Up or
// Add at a time per directory.
//
// Concurrency: the functions are safe to call from several goroutines and
// processes (the state file's lock, the directory's lock, the port
// reservations); a *State value itself is not synchronised; a *Child is
// safe for concurrent use.
package launch
