package main

import (
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// TestCommandLimitFitsOneRaftBatch caught that StartNode took any
// -max-value-bytes: raft stores up to MaxAppendEntries commands with one
// StoreLogs, which raftstore writes as one kv batch of at most 1 GiB, so
// with values of 32 MiB a burst of 32 writes made the leader's StoreLogs
// fail (it stepped down, every write failed), and a follower sent those
// entries in one AppendEntries failed it on every retry and never caught
// up. Limits whose largest command does not fit 1/MaxAppendEntries of a
// batch are refused; the largest that does is taken.
func TestCommandLimitFitsOneRaftBatch(t *testing.T) {
	start := func(l Limits) (*Node, error) {
		_, tr := raft.NewInmemTransport("")
		return StartNode(Config{ID: "n1", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", Transport: tr, Limits: l, LogOutput: io.Discard, LogLevel: "ERROR"})
	}
	if n, err := start(Limits{MaxValueBytes: 32 << 20}); !errors.Is(err, ErrLimits) {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("StartNode with 32 MiB values = %v; want ErrLimits", err)
	}
	largest := Limits{MaxKeyBytes: 4 << 10, MaxValueBytes: maxCommandBytes() - 4<<10}
	n, err := start(largest)
	if err != nil {
		t.Fatalf("StartNode with the largest limits that fit: %v", err)
	}
	n.Shutdown()
	if raft.DefaultConfig().MaxAppendEntries*(largest.MaxKeyBytes+largest.MaxValueBytes) > 1<<30-1<<20 {
		t.Fatalf("MaxAppendEntries commands of %d bytes come within 1 MiB of kv's 1 GiB batch", largest.MaxKeyBytes+largest.MaxValueBytes)
	}
}

// TestKeyLimitWithinTheStateDB: kv takes keys of at most kv.MaxKeySize,
// and the state DB prefixes each user key with a byte, so a node that
// took longer keys would commit a command no member can apply, and a
// failed apply stops the node. Such limits are refused at start, and
// such a command, should one be in a log, is skipped like any bad one.
func TestKeyLimitWithinTheStateDB(t *testing.T) {
	start := func(l Limits) (*Node, error) {
		_, tr := raft.NewInmemTransport("")
		return StartNode(Config{ID: "n1", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", Transport: tr, Limits: l, LogOutput: io.Discard, LogLevel: "ERROR"})
	}
	if n, err := start(Limits{MaxKeyBytes: maxStateKeyBytes + 1}); !errors.Is(err, ErrLimits) {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("StartNode with %d-byte keys = %v; want ErrLimits", maxStateKeyBytes+1, err)
	}
	n, err := start(Limits{MaxKeyBytes: maxStateKeyBytes})
	if err != nil {
		t.Fatalf("StartNode with %d-byte keys: %v", maxStateKeyBytes, err)
	}
	n.Shutdown()
	long := make([]byte, maxStateKeyBytes+1)
	if _, err := decodeCommand(command{op: opSet, key: long}.encode()); !errors.Is(err, ErrBadCommand) {
		t.Fatalf("decodeCommand of a %d-byte key = %v; want ErrBadCommand", len(long), err)
	}
	if _, err := decodeCommand(command{op: opSet, key: long[:maxStateKeyBytes]}.encode()); err != nil {
		t.Fatalf("decodeCommand of a %d-byte key: %v", maxStateKeyBytes, err)
	}
}
