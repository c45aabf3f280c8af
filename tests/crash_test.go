package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
)

// The crash test runs the workload of model_test.go in a child process (this
// test binary re-executed with crashChildEnv set, see TestMain), kills it
// with SIGKILL at a random moment, and checks the reopened DB against the
// model. The child appends "w i" to an acknowledgement file after batch i
// of writer w returns; a line written by a process survives its SIGKILL
// (it is in the kernel), so every line names a batch the DB acknowledged.
// Both Sync and NoSync batches must survive a process kill: NoSync writes
// are handed to the OS before Apply returns.

const (
	crashChildEnv = "SIEVEKV_CRASH_CHILD" // "dir|ackfile|seed|start0,start1,..."
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		os.Exit(crashChild(spec))
	}
	os.Exit(m.Run())
}

// crashCfg is the workload of the crash test: small memtables and blocks
// so that a run of a few hundred milliseconds flushes several times, and a
// background goroutine compacts, so kills land in flushes and compactions.
func crashCfg(seed uint64) wlConfig {
	// Most batches are NoSync: a process kill must not lose them either,
	// and a synced batch would make every earlier one durable.
	return wlConfig{seed: seed, writers: 4, keys: 300, maxOps: 6, maxValue: 300, noSyncPct: 80}
}

func crashOptions() *kv.Options {
	return &kv.Options{MemTableSize: 16 << 10, BlockSize: 512}
}

// crashChild is the child process: it writes until it is killed.
func crashChild(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 4 {
		fmt.Fprintf(os.Stderr, "bad child spec %q\n", spec)
		return 2
	}
	dir, ackPath := parts[0], parts[1]
	seed, _ := strconv.ParseUint(parts[2], 10, 64)
	var starts []int
	for _, s := range strings.Split(parts[3], ",") {
		n, _ := strconv.Atoi(s)
		starts = append(starts, n)
	}
	cfg := crashCfg(seed)
	ack, err := os.OpenFile(ackPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	d, err := kv.Open(dir, crashOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		return 3
	}
	if _, err := ack.Write([]byte("open\n")); err != nil {
		return 2
	}
	fail := make(chan error, len(starts)+1)
	var wg sync.WaitGroup
	for w := range cfg.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := starts[w]; ; i++ {
				if err := cfg.apply(d, w, i); err != nil {
					fail <- fmt.Errorf("writer %d batch %d: %w", w, i, err)
					return
				}
				if _, err := fmt.Fprintf(ack, "%d %d\n", w, i); err != nil {
					fail <- err
					return
				}
			}
		}()
	}
	go func() {
		r := rand.New(rand.NewPCG(seed, 99))
		for {
			time.Sleep(time.Duration(10+r.IntN(40)) * time.Millisecond)
			var err error
			if r.IntN(2) == 0 {
				err = d.Flush()
			} else {
				lo := fmt.Sprintf("w%d/", r.IntN(cfg.writers))
				err = d.Compact([]byte(lo), []byte(lo+"\xff"))
			}
			if err != nil {
				fail <- fmt.Errorf("flush/compact: %w", err)
				return
			}
		}
	}()
	err = <-fail
	fmt.Fprintln(os.Stderr, "child:", err)
	return 4
}

// readAcks returns, per writer, the highest acknowledged batch (-1 if
// none) and whether the child got as far as opening the DB.
func readAcks(t *testing.T, path string, writers int) (last []int, opened bool) {
	last = make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "open" {
			opened = true
			continue
		}
		var w, i int
		if _, err := fmt.Sscanf(line, "%d %d", &w, &i); err != nil || w < 0 || w >= writers {
			continue // a torn last line: that ack did not complete
		}
		last[w] = max(last[w], i)
	}
	return last, opened
}

func TestCrashKillCycles(t *testing.T) {
	runCrashCycles(t, shortOr(5, 24), 1)
}

// TestCrashKillSoak is the long form, for make soak.
func TestCrashKillSoak(t *testing.T) {
	runCrashCycles(t, shortOr(5, soakCycles(t, 400)), 2)
}

func runCrashCycles(t *testing.T, cycles int, seed uint64) {
	dir := filepath.Join(t.TempDir(), "db")
	cfg := crashCfg(seed)
	model := newModel(cfg)
	r := rand.New(rand.NewPCG(seed, 7))
	var killedBeforeOpen, maxTables int
	for cycle := 0; cycle < cycles; cycle++ {
		ackPath := filepath.Join(t.TempDir(), fmt.Sprintf("acks-%d", cycle))
		starts := make([]string, cfg.writers)
		for w := range starts {
			starts[w] = strconv.Itoa(model.applied[w])
		}
		spec := strings.Join([]string{dir, ackPath, strconv.FormatUint(seed, 10), strings.Join(starts, ",")}, "|")
		child := testutil.StartChild(t, crashChildEnv, spec)

		// One kill in five lands at a random moment of start-up (recovery,
		// often); the others a random time after the child reports Open.
		early := r.IntN(5) == 0
		if !early {
			deadline := time.Now().Add(time.Minute)
			for {
				if _, opened := readAcks(t, ackPath, cfg.writers); opened {
					break
				}
				select {
				case <-child.Exited():
					t.Fatalf("cycle %d: child exited before opening: %v\n%s", cycle, child.Wait(), child.Stderr())
				case <-time.After(2 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("cycle %d: child did not open the DB in a minute", cycle)
				}
			}
		}
		delay := time.Duration(r.IntN(300)) * time.Millisecond
		if early {
			delay = time.Duration(r.IntN(60)) * time.Millisecond
		}
		select {
		case <-child.Exited():
			t.Fatalf("cycle %d: child exited on its own: %v\n%s", cycle, child.Wait(), child.Stderr())
		case <-time.After(delay):
		}
		if err := child.Kill(); err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		child.Stdout.Close() // its acknowledgements are in ackPath, and hundreds of cycles should not hold a pipe each

		// The child never exits normally, so a race it detected would
		// otherwise go unreported.
		if stderr := child.Stderr(); strings.Contains(stderr, "DATA RACE") || strings.Contains(stderr, "panic:") {
			t.Fatalf("cycle %d: the child reported:\n%s", cycle, stderr)
		}
		last, opened := readAcks(t, ackPath, cfg.writers)
		if !opened {
			killedBeforeOpen++
		}
		lo, hi := make([]int, cfg.writers), make([]int, cfg.writers)
		for w := range lo {
			// Batches start..last[w] were acknowledged; last[w]+1 may be
			// in flight.
			lo[w] = max(model.applied[w], last[w]+1)
			hi[w] = lo[w] + 1
		}
		if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err == nil {
			rep, err := kv.Check(dir, nil)
			if err != nil {
				t.Fatalf("cycle %d: Check: %v", cycle, err)
			}
			if !rep.OK() {
				t.Fatalf("cycle %d: Check after SIGKILL found problems:\n%s", cycle, rep)
			}
			maxTables = max(maxTables, rep.Tables)
		}
		d, err := kv.Open(dir, crashOptions())
		if err != nil {
			t.Fatalf("cycle %d: reopen after SIGKILL: %v", cycle, err)
		}
		model.verify(t, d, lo, hi)
		if cycle%10 == 9 {
			// Children rarely live long enough to finish a compaction of
			// a large L0; without this every cycle's recovery adds tables
			// and a long run slows down quadratically.
			if err := d.Compact(nil, nil); err != nil {
				t.Fatalf("cycle %d: compact: %v", cycle, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", cycle, err)
		}
	}
	total := 0
	for _, n := range model.applied {
		total += n
	}
	t.Logf("%d kill cycles (%d before Open completed), %d batches verified, up to %d live tables", cycles, killedBeforeOpen, total, maxTables)
	if total < cycles {
		t.Fatalf("only %d batches committed over %d cycles: the child is not making progress", total, cycles)
	}
}
