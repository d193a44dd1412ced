//go:build invariants

package coord

// invariantsOn makes every Apply verify the whole state afterwards
// (go test -tags invariants).
const invariantsOn = true
