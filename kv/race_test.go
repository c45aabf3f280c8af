//go:build race

package kv

// raceEnabled: the race detector makes sync.Pool drop a random quarter of
// what is put in it, so tests that count pool reuse skip their bound.
const raceEnabled = true
