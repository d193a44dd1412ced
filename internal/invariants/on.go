//go:build invariants

package invariants

// On is set: this build checks invariants.
const On = true
