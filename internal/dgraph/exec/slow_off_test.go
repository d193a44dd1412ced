//go:build !invariants && !race

package exec

const slowBuild = false
