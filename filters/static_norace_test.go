//go:build !race

package filters

// staticRaceEnabled: see static_race_test.go.
const staticRaceEnabled = false
