package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/weft-db/weft/internal/launch"
)

// errPrefix starts the messages of the client packages' errors; main adds
// its own, so explain drops theirs.
const errPrefix = "weft: "

// dialAddr finds the address a failed dial named ("dial tcp ADDR: ...").
var dialAddr = regexp.MustCompile(`dial tcp ([^ ]+?): `)

// addrFlag names, for the commands that talk to a Weft server, the flag
// that points them at it; commands not listed get a generic hint.
var addrFlag = map[string]string{
	"weft tx": "--addr", "weft run": "--addr",
	"weft placement": "--http-addr", "weft move": "--http-addr", "weft rebalance": "--http-addr",
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
		if f, ok := addrFlag[cmd.CommandPath()]; ok {
			hint = `is "weft serve" running? Start one with "weft serve --demo" or pass ` + f + "."
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
	pid, cmdline := launch.FileHolder(filepath.Join(dir, "LOCK"))
	if pid == 0 {
		return fmt.Sprintf("data dir %s is in use by another process (its LOCK file is held); stop it or choose another --data-dir", dir)
	}
	return fmt.Sprintf("data dir %s is in use by pid %d (%s); stop it or choose another --data-dir", dir, pid, cmdline)
}
