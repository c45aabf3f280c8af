// Package tests holds sievekv's cross-package tests: the differential test
// that drives kv and Pebble (github.com/cockroachdb/pebble/v2, the reference
// oracle) with the same random operations and demands identical answers, and
// the reliability tests that span the engine's layers.
//
// Nothing outside this package imports Pebble; the engine never does.
package tests
