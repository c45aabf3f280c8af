package raftstore

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/sievekv/sievekv/internal/testutil"
)

// killChildDirEnv, when set, makes TestKill9KeepsAcknowledgedLogs the child:
// it appends to the store in that directory until killed.
const killChildDirEnv = "RAFTSTORE_KILL9_DIR"

// TestKill9KeepsAcknowledgedLogs runs a child process that appends batches
// of entries and prints each batch's last index once StoreLogs returned,
// kills it with SIGKILL mid-stream, and checks that the reopened store holds
// every acknowledged entry (R3). Three rounds, each resuming the log.
func TestKill9KeepsAcknowledgedLogs(t *testing.T) {
	if dir := os.Getenv(killChildDirEnv); dir != "" {
		killChild(dir)
		return
	}
	dir := t.TempDir()
	var acked uint64
	for round := 0; round < 3; round++ {
		child := testutil.StartChild(t, killChildDirEnv, dir, "-test.run=^TestKill9KeepsAcknowledgedLogs$", "-test.count=1")
		// Let the child acknowledge a number of batches that varies by
		// round, so the kill lands at different points of a commit.
		target := 150 + 70*round
		lines := bufio.NewScanner(child.Stdout)
		for n := 0; n < target && lines.Scan(); n++ {
			idx, err := strconv.ParseUint(strings.TrimPrefix(lines.Text(), "ack "), 10, 64)
			if err != nil {
				t.Fatalf("child said %q", lines.Text())
			}
			if idx <= acked {
				t.Fatalf("child acknowledged %d after %d", idx, acked)
			}
			acked = idx
		}
		if err := child.Kill(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if acked == 0 {
			t.Fatalf("round %d: the child acknowledged nothing", round)
		}

		s, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		last, _ := s.LastIndex()
		if first, _ := s.FirstIndex(); first != 1 || last < acked {
			t.Fatalf("round %d: bounds %d-%d after %d acknowledged", round, first, last, acked)
		}
		for i := uint64(1); i <= last; i++ {
			var l raft.Log
			if err := s.GetLog(i, &l); err != nil {
				t.Fatalf("round %d: entry %d of %d acknowledged: %v", round, i, acked, err)
			}
			sameLog(t, &l, testLog(i))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged, %d present", round, acked, last)
	}
}

// killChild appends batches of 1 to 8 entries after the store's last index
// forever, printing "ack N" after each StoreLogs returns.
func killChild(dir string) {
	s, err := Open(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	next, _ := s.LastIndex()
	next++
	deadline := time.Now().Add(30 * time.Second) // never outlive a lost parent
	for n := 0; time.Now().Before(deadline); n++ {
		var logs []*raft.Log
		for i := 0; i < n%8+1; i++ {
			logs = append(logs, testLog(next))
			next++
		}
		if err := s.StoreLogs(logs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", next-1)
	}
	os.Exit(3)
}
