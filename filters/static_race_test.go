//go:build race

package filters

// staticRaceEnabled scales the statistical tests down under the race
// detector, which makes a 1M-key build ~20x slower: `make test` (which
// always uses -race) then runs the 1M-key false-negative check for
// BinaryFuse8 only and the every-width FP sweep on a subset of widths, while
// a plain `go test` runs them all. The statistics asserted are the same.
const staticRaceEnabled = true
