//go:build !invariants && !race

package dqlexec

const slowBuild = false
