// Package datadriven runs scenario tests kept as text files: each case is a
// command line, optional input lines, a "----" separator and the expected
// output. A test supplies a function that runs one case and returns its
// output; the runner compares it with the file, or, with -update, rewrites
// the file with the outputs the code now produces (review the diff before
// committing it). The idea is Pebble's testdata files; this is our own small
// runner, with no dependency.
//
// File syntax:
//
//	# comment lines and blank lines between cases are ignored
//	command arg key=value key=(v1, v2)
//	input line
//	input line
//	----
//	output line
//	output line
//
// A case's output ends at the first blank line or the end of the file, so
// an output must not contain a blank line (the runner reports one rather
// than write a file it could not read back).
//
// # Invariants
//
//	D1 (round trip): with -update, the rewritten file parses back into the
//	   same cases (commands, inputs, comments kept) with the new outputs, so
//	   running again without -update passes.
//	D2 (positions): every failure names the file and the line of its case.
//
// # Concurrency
//
// Run one file from one goroutine; separate files may run in parallel
// subtests.
package datadriven
