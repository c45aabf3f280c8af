//go:build invariants || race

package tests

// pebbleInvariants mirrors Pebble's own internal/invariants build rule:
// with it on, Pebble asserts that no empty user key reaches its block
// separator, so the oracle leaves the empty key out of its sequences (kv's
// own tests cover it).
const pebbleInvariants = true
