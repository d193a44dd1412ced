package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// deprecatedAlias keeps the flag old working as a hidden spelling of the
// flag current of f (the same value), for scripts written before the
// rename: pflag prints a one-line deprecation notice when it is used. The
// flag convention is in docs/operations.md ("Flags").
func deprecatedAlias(f *pflag.FlagSet, old, current string) {
	cur := f.Lookup(current)
	if cur == nil {
		panic(fmt.Sprintf("deprecatedAlias: no flag --%s", current))
	}
	f.AddFlag(&pflag.Flag{
		Name:       old,
		Usage:      cur.Usage,
		Value:      cur.Value,
		DefValue:   cur.DefValue,
		Hidden:     true,
		Deprecated: fmt.Sprintf("use --%s", current),
	})
}
