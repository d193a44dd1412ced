// Command weft is Weft's one binary: every role and tool is a subcommand.
// This package only parses flags and wires packages together.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
}
