// Package errorfs wraps a vfs.FS so that one chosen operation fails with an
// injected error: the way reliability tests make every read, write, sync,
// create, rename, remove and open of a workload fail in turn and check that
// the engine reports the failure instead of losing or corrupting data.
//
// # Concurrency
//
// An FS and its files are safe for concurrent use; the operation counter is
// atomic, so with concurrent callers "the Nth operation" is whichever
// caller draws N.
//
// # Invariants
//
//	E1 (one count): every operation of a kind in Ops that reaches the
//	   wrapper is numbered, from 1, in one counter shared by all files,
//	   whether or not it fails.
//	E2 (exactly one failure per trigger): with FailAt(n), the operation
//	   numbered n fails with an error wrapping ErrInjected and does not
//	   reach the wrapped FS; every other operation is passed through. With
//	   Sticky, every operation numbered >= n fails (a dead disk).
package errorfs
