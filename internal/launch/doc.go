// Package launch starts, tracks and stops the local processes of a
// cluster: `weft cluster up/down/status/add` are its commands, and the
// fault harness (internal/faults) and the scale bench (internal/bench/scale)
// read and update what it records.
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
// reservations); a *State value itself is not synchronised.
package launch
