package faults

import "syscall"

// sysProcAttr puts the server in its own process group, so that signals
// reach everything it runs, and has the kernel SIGKILL it if the harness
// dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
