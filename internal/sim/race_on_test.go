//go:build race

package sim

// raceEnabled shortens the simulation under the race detector (about 10x slower).
const raceEnabled = true
