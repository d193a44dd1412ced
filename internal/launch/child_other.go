//go:build unix && !linux

package launch

import "syscall"

// childSysProcAttr puts a Child in its own process group.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
