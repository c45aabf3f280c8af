package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
)

// killNoSyncChildEnv makes this test binary the child of
// TestKillNoSyncWriters: it opens the DB named by the variable and writes
// until killed.
const killNoSyncChildEnv = "SIEVEKV_KILL_NOSYNC_CHILD"

func init() {
	if dir := os.Getenv(killNoSyncChildEnv); dir != "" {
		os.Exit(killNoSyncChild(dir))
	}
}

const killNoSyncWriters = 4

func killNoSyncValue(key string) []byte {
	return bytes.Repeat([]byte(key), 100/len(key)+1)[:100]
}

// killNoSyncChild writes distinct keys with NoSync from several goroutines
// and prints each key on stdout once its Set has returned. os.Stdout is
// unbuffered, so a printed line is in the pipe (the kernel) before the
// next write starts: every line the parent reads names an acknowledged
// write.
func killNoSyncChild(dir string) int {
	d, err := kv.Open(dir, &kv.Options{MemTableSize: 64 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 2
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range killNoSyncWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("g%d-%08d", g, i)
				if err := d.Set([]byte(k), killNoSyncValue(k), kv.NoSync); err != nil {
					fmt.Fprintln(os.Stderr, "child set:", err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, k)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return 0
}

// TestKillNoSyncWriters checks kv.NoSync's promise on the real file system,
// where the WAL is written through a shared mapping: after SIGKILL of a
// process writing with NoSync from several goroutines, every write it had
// acknowledged is in the reopened DB with its value.
func TestKillNoSyncWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	for cycle := range 3 {
		child := testutil.StartChild(t, killNoSyncChildEnv, dir, "-test.run=^$")
		acked := make(chan []string, 1)
		var count atomic.Int64
		go func() {
			var keys []string
			sc := bufio.NewScanner(child.Stdout)
			for sc.Scan() {
				keys = append(keys, sc.Text())
				count.Add(1)
			}
			acked <- keys
		}()
		// Kill once the child has acknowledged enough writes to have
		// rotated several 64 KiB memtables (each cycle more), however slow
		// its start is (-race, a loaded machine).
		want := int64(2000 * (cycle + 1))
		for deadline := time.Now().Add(time.Minute); count.Load() < want && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if err := child.Kill(); err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		keys := <-acked
		if stderr := child.Stderr(); strings.TrimSpace(stderr) != "" {
			t.Fatalf("cycle %d: child failed: %s", cycle, stderr)
		}
		if int64(len(keys)) < want {
			t.Fatalf("cycle %d: child acknowledged only %d writes", cycle, len(keys))
		}
		d, err := kv.Open(dir, nil)
		if err != nil {
			t.Fatalf("cycle %d: reopen after SIGKILL: %v", cycle, err)
		}
		for _, k := range keys {
			if len(k) != len("g0-00000000") {
				continue // a line cut by the kill names no finished write
			}
			v, err := d.Get([]byte(k))
			if err != nil || !bytes.Equal(v, killNoSyncValue(k)) {
				d.Close()
				t.Fatalf("cycle %d: acknowledged NoSync write %s lost after SIGKILL (%d acknowledged): %q %v", cycle, k, len(keys), v, err)
			}
		}
		t.Logf("cycle %d: %d acknowledged NoSync writes all present", cycle, len(keys))
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
