package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// errPrefix starts the messages of the client packages' errors; main adds
// its own, so explain drops theirs.
const errPrefix = "weft: "

// dialAddr finds the address a failed dial named ("dial tcp ADDR: ...").
var dialAddr = regexp.MustCompile(`dial tcp ([^ ]+?): `)

// serverHint says, for the commands that talk to a server, which server
// they need and how to point them at it (the root command's path to a
// hint); commands not listed get the generic hint.
var serverHint = map[string]string{
	"weft tx":        `is "weft serve" running? Start one with "weft serve --demo" or pass --addr.`,
	"weft run":       `is "weft serve" running? Start one with "weft serve --demo" or pass --addr.`,
	"weft placement": `is "weft serve" running? Start one with "weft serve --demo" or pass --http-addr.`,
	"weft move":      `is "weft serve" running? Start one with "weft serve --demo" or pass --http-addr.`,
	"weft rebalance": `is "weft serve" running? Start one with "weft serve --demo" or pass --http-addr.`,
}

// explain turns err, returned by cmd, into the one line main prints after
// "weft: ": without the client packages' own "weft: " prefixes, and for a
// server that cannot be reached, what to do about it.
func explain(cmd *cobra.Command, err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, errPrefix) {
		msg = strings.TrimPrefix(msg, errPrefix)
	}
	if held(err, msg) {
		if m := openedDir.FindStringSubmatch(msg); m != nil {
			return heldDir(m[1])
		}
	}
	if !refused(err, msg) {
		return msg
	}
	addr := "the server"
	if m := dialAddr.FindStringSubmatch(msg); m != nil {
		addr = m[1]
	}
	hint := "is the server running? Check the address flags (--help)."
	if cmd != nil {
		if h, ok := serverHint[cmd.CommandPath()]; ok {
			hint = h
		} else if strings.HasPrefix(cmd.CommandPath(), "weft kv") {
			hint = `is "weft kv serve" running? Pass its address with --servers.`
		} else if strings.HasPrefix(cmd.CommandPath(), "weft coord") {
			hint = `is "weft coord" running? Pass its addresses with --coord.`
		}
	}
	if strings.HasPrefix(addr, "the server") {
		return fmt.Sprintf("cannot reach the server (connection refused): %s", hint)
	}
	return fmt.Sprintf("cannot reach a Weft server at %s (connection refused): %s", addr, hint)
}

// refused reports whether err is a connection refused (a dial's, or a gRPC
// status that carries one only as text).
func refused(err error, msg string) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(msg, "connection refused")
}

// openedDir finds the directory a failed open named ("open DIR: ...", the
// stores' and raft logs' wrapping of Pebble's errors).
var openedDir = regexp.MustCompile(`open ([^ :]+): `)

// held reports whether err is a lock another process holds (flock's
// EWOULDBLOCK, which Pebble returns for a LOCK file in use).
func held(err error, msg string) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(msg, "resource temporarily unavailable")
}

// heldDir says which process holds the data directory dir's LOCK file.
func heldDir(dir string) string {
	pid, cmdline := lockHolder(filepath.Join(dir, "LOCK"))
	if pid == 0 {
		return fmt.Sprintf("data dir %s is in use by another process (its LOCK file is held); stop it or choose another --data-dir", dir)
	}
	return fmt.Sprintf("data dir %s is in use by pid %d (%s); stop it or choose another --data-dir", dir, pid, cmdline)
}

// cmdlineMax bounds the holder's command line in the message.
const cmdlineMax = 120

// lockHolder finds the process that has path open, through /proc/*/fd
// (Linux; elsewhere, or when no such process is visible, pid 0), and its
// command line (argv[0] as its base name).
func lockHolder(path string) (pid int, cmdline string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, ""
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, ""
	}
	self := os.Getpid()
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil || n == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // not ours to read, or gone
		}
		for _, fd := range fds {
			if t, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && t == abs {
				return n, procCmdline(n)
			}
		}
	}
	return 0, ""
}

func procCmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = filepath.Base(args[0])
	s := strings.Join(args, " ")
	if len(s) > cmdlineMax {
		s = s[:cmdlineMax] + "…"
	}
	return s
}
