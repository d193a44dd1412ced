package testproc

import "syscall"

// sysProcAttr puts the child in its own process group and has the kernel
// SIGKILL it if the thread that started it (and so the test) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
