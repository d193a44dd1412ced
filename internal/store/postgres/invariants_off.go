//go:build !invariants

package postgres

const invariantsOn = false

func assert(bool, string, ...any) {}
