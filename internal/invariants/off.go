//go:build !invariants

package invariants

// Enabled is false: build with -tags invariants to run the expensive
// self-checks.
const Enabled = false
