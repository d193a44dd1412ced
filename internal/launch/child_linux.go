package launch

import "syscall"

// childSysProcAttr puts a Child in its own process group and has the
// kernel SIGKILL it if the thread that started it (and so its supervisor)
// dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
