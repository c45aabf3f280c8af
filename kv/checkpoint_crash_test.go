package kv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
)

// checkpointChildEnv, when set to a directory, makes
// TestCheckpointKillLeavesSourceIntact the child: it writes synced batches
// into DB "src" there and checkpoints it again and again until killed.
const checkpointChildEnv = "SIEVEKV_CHECKPOINT_CHILD"

// TestCheckpointKillLeavesSourceIntact kills (SIGKILL) a process in the
// middle of taking checkpoints while it writes, then checks the source:
// it passes Check, opens, and holds every acknowledged synced write as an
// unbroken prefix. Every checkpoint that got as far as its CURRENT opens
// too.
func TestCheckpointKillLeavesSourceIntact(t *testing.T) {
	if dir := os.Getenv(checkpointChildEnv); dir != "" {
		checkpointChild(dir)
		return
	}
	for cycle := range 3 {
		root := t.TempDir()
		child := testutil.StartChild(t, checkpointChildEnv, root, "-test.run=^TestCheckpointKillLeavesSourceIntact$")
		// The child prints "acked N" after each synced batch and
		// "checkpoint N" as each checkpoint starts; the kill lands once a
		// few checkpoints have begun, at a moment that varies per cycle.
		acked, checkpoints := 0, 0
		lines := bufio.NewScanner(child.Stdout)
		killAt := 2 + cycle
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) != 2 {
				continue
			}
			n, _ := strconv.Atoi(f[1])
			switch f[0] {
			case "acked":
				acked = n
			case "checkpoint":
				checkpoints = n
			}
			if checkpoints >= killAt {
				time.Sleep(time.Duration(cycle) * time.Millisecond)
				break
			}
		}
		if checkpoints < killAt {
			t.Fatalf("cycle %d: child stopped after %d checkpoints:\n%s", cycle, checkpoints, child.Stderr())
		}
		if err := child.Kill(); err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		// Lines written before the kill may still be in the pipe.
		for lines.Scan() {
			if f := strings.Fields(lines.Text()); len(f) == 2 && f[0] == "acked" {
				acked, _ = strconv.Atoi(f[1])
			}
		}

		src := filepath.Join(root, "src")
		rep, err := Check(src, nil)
		if err != nil {
			t.Fatalf("cycle %d: Check: %v", cycle, err)
		}
		if !rep.OK() {
			t.Fatalf("cycle %d: the source is damaged after a kill during a checkpoint:\n%s", cycle, rep)
		}
		d, err := Open(src, nil)
		if err != nil {
			t.Fatalf("cycle %d: open source: %v", cycle, err)
		}
		n := checkpointPrefixLen(t, d, 0)
		d.Close()
		if n < int64(acked) {
			t.Fatalf("cycle %d: source holds %d batches, %d were acknowledged as synced", cycle, n, acked)
		}
		for i := 1; i <= checkpoints; i++ {
			cp := filepath.Join(root, fmt.Sprintf("cp-%d", i))
			if _, err := os.Stat(filepath.Join(cp, "CURRENT")); err != nil {
				continue // cut short by the kill: no CURRENT, not a DB
			}
			c, err := Open(cp, nil)
			if err != nil {
				t.Fatalf("cycle %d: checkpoint %d has CURRENT but does not open: %v", cycle, i, err)
			}
			checkpointPrefixLen(t, c, 0)
			c.Close()
		}
	}
}

// checkpointChild writes and checkpoints until killed.
func checkpointChild(root string) {
	d, err := Open(filepath.Join(root, "src"), &Options{MemTableSize: 32 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() {
		value := make([]byte, 100)
		for i := 0; ; i++ {
			b := d.NewBatch()
			b.Set(checkpointWriterKey(0, i), value)
			b.Set(checkpointTwinKey(0, i), value)
			if err := d.Apply(b, Sync); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			fmt.Printf("acked %d\n", i+1)
		}
	}()
	for n := 1; ; n++ {
		fmt.Printf("checkpoint %d\n", n)
		if err := d.Checkpoint(filepath.Join(root, fmt.Sprintf("cp-%d", n))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}
