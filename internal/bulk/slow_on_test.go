//go:build race || invariants

package bulk_test

// slowBuild shrinks the film comparisons under the race detector and the
// invariants build, which slow the online load they compare with tenfold;
// the plain run keeps the full size.
const slowBuild = true
