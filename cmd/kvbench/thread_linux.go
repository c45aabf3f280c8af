package main

import "syscall"

// threadID is the calling OS thread's id: a goroutine locked to its
// thread (runtime.LockOSThread) is the only one that runs on it, so the
// id names the goroutine while it stays locked.
func threadID() (int, bool) { return syscall.Gettid(), true }
