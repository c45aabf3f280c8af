//go:build !invariants && !race

package tests

// pebbleInvariants: see pebble_invariants_on_test.go.
const pebbleInvariants = false
