// Package humanize formats quantities for people: the byte sizes that kv's
// Metrics.String and kvshell's table listings print. It exists so that the
// engine's report and the shell's show one size in one way.
//
// Concurrency: the functions hold no state.
//
// Invariants:
//
//	H1 (binary units): Bytes counts in powers of 1024 and says so (KiB,
//	   MiB, ...); below 1 KiB it prints the exact count.
package humanize
