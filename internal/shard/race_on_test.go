//go:build race

package shard

// raceEnabled shortens the simulation under the race detector (about 10x slower).
const raceEnabled = true
