//go:build !race && !invariants

package bulk_test

const slowBuild = false
