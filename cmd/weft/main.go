// Command weft is Weft's one binary: every role and tool is a subcommand.
// This package only parses flags and wires packages together.
package main

import (
	"fmt"
	"os"
)

func main() {
	cmd, err := newRootCmd().ExecuteC()
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", explain(cmd, err))
		os.Exit(1)
	}
}
