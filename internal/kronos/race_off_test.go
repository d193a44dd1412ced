//go:build !race

package kronos

const raceEnabled = false
