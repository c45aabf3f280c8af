//go:build invariants

package invariants

// Enabled is true: this build runs the expensive self-checks.
const Enabled = true
