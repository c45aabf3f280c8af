package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// bufferSink is a raft.SnapshotSink into memory.
type bufferSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *bufferSink) ID() string    { return "buffer" }
func (s *bufferSink) Close() error  { s.closed = true; return nil }
func (s *bufferSink) Cancel() error { s.cancelled = true; return nil }

func applySet(t *testing.T, sm *stateMachine, index uint64, key, value string) {
	t.Helper()
	if r := sm.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: command{op: opSet, key: []byte(key), value: []byte(value)}.encode()}); r != nil {
		t.Fatalf("Apply %d: %v", index, r)
	}
}

// TestRestoreDoesNotWaitForASnapshot caught a deadlock (S5): Snapshot held
// stateMachine.mu shared until Release, and Restore took it exclusively.
// raft's takeSnapshot keeps its FSM snapshot unreleased while it asks
// raft's main goroutine for the configuration; a follower's main goroutine
// in installSnapshot waits for Restore; so a follower that began a
// snapshot of its own as the leader sent it one hung for good. Restore
// must finish with a snapshot outstanding, which must still stream the
// state it was taken of, and its Release then removes the old generation.
func TestRestoreDoesNotWaitForASnapshot(t *testing.T) {
	sm, err := openStateMachine(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	applySet(t, sm, 1, "k", "old")
	held, err := sm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	oldDir := sm.genDir(sm.gen)

	restored := make(chan error, 1)
	go func() { restored <- sm.Restore(io.NopCloser(bytes.NewReader(streamOf(t, 3)))) }()
	select {
	case err := <-restored:
		if err != nil {
			t.Fatalf("Restore: %v", err)
		}
	case <-time.After(20 * time.Second):
		held.Release() // let the test end
		t.Fatal("Restore is still waiting for the release of a snapshot taken before it")
	}
	if _, err := sm.get([]byte("k")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("k after Restore: %v; want it gone with the old state", err)
	}
	if v, err := sm.get([]byte("key-0002")); err != nil || string(v) != "value-2" {
		t.Fatalf("restored key: %q, %v", v, err)
	}

	// The outstanding snapshot still streams the state it was taken of.
	var sink bufferSink
	if err := held.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("Persist after Restore: %v (sink closed %v)", err, sink.closed)
	}
	if _, err := os.Stat(oldDir); err != nil {
		t.Fatalf("the old generation is gone before its snapshot's Release: %v", err)
	}
	held.Release()
	if _, err := os.Stat(oldDir); !os.IsNotExist(err) {
		t.Fatalf("the old generation %s outlived its snapshot's Release: %v", oldDir, err)
	}
	db := openTestDB(t)
	if applied, err := readSnapshotStream(bytes.NewReader(sink.Bytes()), db); err != nil || applied != 1 {
		t.Fatalf("the held snapshot's stream: applied %d, %v", applied, err)
	}
	if v, err := db.Get(prefixed(userPrefix, []byte("k"))); err != nil || string(v) != "old" {
		t.Fatalf("k in the held snapshot's stream: %q, %v; want old", v, err)
	}
}

// TestFailedStateIsNotSnapshotted: after an Apply fails to write (a dead
// disk; or a command kv refuses as too large, which does not make the DB
// read-only), later commands are skipped and the state is behind raft's
// applied index, so Snapshot must fail (S6): raft would otherwise compact
// the skipped commands out of its log under a snapshot that lacks them,
// and install that snapshot on followers. A Restore replaces the state
// whole, and the state machine applies commands again after it.
func TestFailedStateIsNotSnapshotted(t *testing.T) {
	dir := t.TempDir()
	// Over a MemFS, which maps nothing, the WAL is written with write(2),
	// which the errorfs can fail.
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpWrite|errorfs.OpSync)
	sm, err := openStateMachine(dir, &kv.Options{FS: efs})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	applySet(t, sm, 1, "k", "one")
	firstGen := sm.genDir(sm.gen)
	efs.SetMatch(func(_ errorfs.Op, name string) bool { return strings.HasPrefix(name, firstGen) })
	efs.FailAt(1, true)
	if r := sm.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: command{op: opSet, key: []byte("k"), value: []byte("two")}.encode()}); r == nil {
		t.Fatal("Apply on a dead disk succeeded")
	}
	if r := sm.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: command{op: opSet, key: []byte("k3"), value: []byte("three")}.encode()}); r == nil {
		t.Fatal("Apply after a failed Apply succeeded")
	}
	if snap, err := sm.Snapshot(); err == nil {
		snap.Release()
		t.Fatal("Snapshot of a state behind the log succeeded")
	}
	// The same with a DB that still takes writes: the failure alone must
	// stop the snapshot, not the write Snapshot makes to sync the state.
	healthy, err := openStateMachine(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer healthy.close()
	applySet(t, healthy, 1, "k", "one")
	refused := fmt.Errorf("kvserver: apply log entry 2: %w: a write too large", kv.ErrInvalidArgument)
	healthy.failed.Store(&refused)
	if snap, err := healthy.Snapshot(); err == nil {
		snap.Release()
		t.Fatal("Snapshot after a failed Apply succeeded on a DB that takes writes")
	}

	if err := sm.Restore(io.NopCloser(bytes.NewReader(streamOf(t, 3)))); err != nil {
		t.Fatalf("Restore onto a new generation: %v", err)
	}
	applySet(t, sm, 80, "after", "restore")
	if v, err := sm.get([]byte("after")); err != nil || string(v) != "restore" {
		t.Fatalf("a command applied after Restore: %q, %v", v, err)
	}
	snap, err := sm.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot after Restore: %v", err)
	}
	snap.Release()
}
