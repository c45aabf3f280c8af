// Package vfs is the file-system seam of sievekv: every byte the engine
// reads or writes goes through an FS, so tests can swap in an in-memory file
// system, count reads, inject faults and simulate power loss.
//
// Default is the operating system; NewMem is an in-memory FS that separates
// synced from unsynced state, and its CrashClone returns the state a power
// loss would leave (V1), which tests/powerloss_test.go checks the engine
// recovers from; NewCounting wraps any FS and counts ReadAt calls and bytes
// per file. Package vfs/errorfs wraps any FS so that one chosen operation
// (or every one from it on) fails with an injected error, which the
// reliability tests (tests/faults_test.go, docs/reliability.md) use to fail
// each read, write, sync, create, rename, remove and open of a workload in
// turn.
//
// # Concurrency
//
// FS implementations are safe for concurrent use. A File is safe for
// concurrent ReadAt calls; Write, Sync and Close must not race with each
// other on the same File (the engine has one writer per file).
//
// # Invariants
//
//	V1 (durability model): data written to a file is durable only after that
//	   file's Sync returns; a file's existence under a name (after Create or
//	   Rename) is durable only after the parent directory, opened with
//	   OpenDir, is Synced, and so is a new directory's (MkdirAllDurable).
//	   MemFS.CrashClone keeps exactly that durable state, as of one
//	   instant: no Sync runs while it copies (directories excepted: MemFS
//	   keeps them from MkdirAll on).
//	V2 (locks): while a Lock on a name is held, a second Lock or an RLock
//	   of the same name, from this or another process, fails with an error
//	   wrapping ErrLocked; while an RLock is held, a Lock fails so and
//	   further RLocks succeed.
//	V3 (counted reads): a Counting FS records every ReadAt call and the
//	   bytes it returned, per file name, including failed or short reads.
//	V4 (appended bytes reach the OS): when Appender.Write returns, its bytes
//	   are in the kernel (page cache), through a shared mapping of a
//	   preallocated segment where the File is a Mapper, else through Write,
//	   so a process crash loses none of them; Sync makes them durable. A
//	   mapped file's tail past Appender.Size reads as zeros.
package vfs
