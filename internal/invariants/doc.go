// Package invariants switches on the expensive self-checks of the engine.
// Enabled is a constant, so when the build leaves it false the compiler
// drops the guarded code from hot paths entirely.
//
// Build with `-tags invariants` (what `make test` does) to turn the checks
// on: a check then costs time proportional to the data it re-examines,
// which is fine in tests and too slow for production reads.
//
// # Concurrency
//
// Enabled is a constant; there is no state.
//
// # Invariants
//
//	V1 (no behaviour change): a guarded check only ever turns a broken
//	   invariant into an error or a panic; code that is correct behaves
//	   the same with and without the tag.
package invariants
