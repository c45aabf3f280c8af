//go:build race

package wal

// raceEnabled thins the exhaustive loops: the race detector makes them ~10x
// slower and they test framing, not concurrency.
const raceEnabled = true
