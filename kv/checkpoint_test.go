package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// checkpointWriterKey is writer w's i-th key; each batch also writes its
// twin, so a checkpoint holding half a batch is caught.
func checkpointWriterKey(w, i int) []byte { return fmt.Appendf(nil, "w%d-%06d", w, i) }

func checkpointTwinKey(w, i int) []byte { return fmt.Appendf(nil, "w%d-%06d-twin", w, i) }

// TestCheckpointWhileWriting takes a checkpoint while writers commit, with
// memtables small enough that flushes and compactions run meanwhile, then
// deletes the source and opens the checkpoint: each writer's keys there are
// an unbroken prefix of its writes, at least what it had committed when
// Checkpoint was called and at most what it had begun when Checkpoint
// returned, and every batch is whole. The upper bound counts batches
// begun, not acknowledged: a batch can commit before the checkpoint while
// its writer, not yet scheduled again, has still to see Apply return.
func TestCheckpointWhileWriting(t *testing.T) {
	root := t.TempDir()
	src, cp := filepath.Join(root, "src"), filepath.Join(root, "cp")
	opts := &Options{MemTableSize: 32 << 10, L0CompactionThreshold: 2}
	d, err := Open(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	// begun counts the batches a writer has handed to Apply, acked those
	// Apply returned for.
	var begun, acked [writers]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			value := make([]byte, 64)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := d.NewBatch()
				b.Set(checkpointWriterKey(w, i), value)
				b.Set(checkpointTwinKey(w, i), value)
				begun[w].Store(int64(i + 1))
				if err := d.Apply(b, NoSync); err != nil {
					errs <- err
					return
				}
				acked[w].Store(int64(i + 1))
			}
		}()
	}
	// Let every writer get going, so the checkpoint lands mid-stream.
	for w := range writers {
		for acked[w].Load() < 100 {
			select {
			case err := <-errs:
				t.Fatal(err)
			case <-time.After(time.Millisecond):
			}
		}
	}
	var lo, hi [writers]int64
	for w := range writers {
		lo[w] = acked[w].Load()
	}
	if err := d.Checkpoint(cp); err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		hi[w] = begun[w].Load()
	}
	// Writes begun after Checkpoint returned must not reach the checkpoint.
	for w := range writers {
		for acked[w].Load() < hi[w]+50 {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}

	c, err := Open(cp, nil)
	if err != nil {
		t.Fatalf("open checkpoint after deleting the source: %v", err)
	}
	defer c.Close()
	for w := range writers {
		n := checkpointPrefixLen(t, c, w)
		if n < lo[w] || n > hi[w] {
			t.Errorf("writer %d: checkpoint holds its first %d writes, want between %d and %d", w, n, lo[w], hi[w])
		}
	}
}

// checkpointPrefixLen counts writer w's keys in db and fails unless they
// are exactly its first n batches, each with its twin.
func checkpointPrefixLen(t *testing.T, db *DB, w int) int64 {
	t.Helper()
	prefix := fmt.Appendf(nil, "w%d-", w)
	it := db.NewIter(&IterOptions{LowerBound: prefix, UpperBound: fmt.Appendf(nil, "w%d.", w)})
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		if want := checkpointWriterKey(w, int(n)); string(it.Key()) != string(want) {
			t.Fatalf("writer %d: key %q where %q should be: the checkpoint is not a prefix", w, it.Key(), want)
		}
		if !it.Next() || string(it.Key()) != string(checkpointTwinKey(w, int(n))) {
			t.Fatalf("writer %d: batch %d is in the checkpoint without its twin", w, n)
		}
		n++
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCheckpointDirMustBeEmpty: a checkpoint goes into a new or empty
// directory only, and says why otherwise.
func TestCheckpointDirMustBeEmpty(t *testing.T) {
	root := t.TempDir()
	d, err := Open(filepath.Join(root, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Set([]byte("k"), []byte("v"), NoSync); err != nil {
		t.Fatal(err)
	}

	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(full); !errors.Is(err, ErrCheckpointDirNotEmpty) {
		t.Fatalf("Checkpoint into a non-empty directory: %v, want ErrCheckpointDirNotEmpty", err)
	}
	if got, _ := os.ReadFile(filepath.Join(full, "keep")); string(got) != "x" {
		t.Fatalf("the non-empty directory was modified")
	}
	if err := d.Checkpoint(filepath.Join(root, "db")); !errors.Is(err, ErrCheckpointDirNotEmpty) {
		t.Fatalf("Checkpoint into the DB's own directory: %v, want ErrCheckpointDirNotEmpty", err)
	}

	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint(empty); err != nil {
		t.Fatalf("Checkpoint into an empty directory: %v", err)
	}
	if err := d.Checkpoint(empty); !errors.Is(err, ErrCheckpointDirNotEmpty) {
		t.Fatalf("second Checkpoint into the same directory: %v, want ErrCheckpointDirNotEmpty", err)
	}
	c, err := Open(empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("checkpoint Get = %q, %v", v, err)
	}
}

// noLinkFS hides the Linker of the FS it wraps, as errorfs and other
// wrappers do, so Checkpoint must copy.
type noLinkFS struct{ vfs.FS }

// TestCheckpointCopiesWithoutLinks: on a file system that cannot link,
// the tables are copied, and the copy stands alone once every source file
// is removed.
func TestCheckpointCopiesWithoutLinks(t *testing.T) {
	mem := vfs.NewMem()
	fsys := noLinkFS{mem}
	d, err := Open("db", &Options{FS: fsys, MemTableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if err := d.Set(fmt.Appendf(nil, "key%04d", i), fmt.Appendf(nil, "value%d", i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Checkpoint("cp"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names := mustList(t, mem, "db")
	for _, n := range names {
		if err := mem.Remove(mem.PathJoin("db", n)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Open("cp", &Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 500 {
		v, err := c.Get(fmt.Appendf(nil, "key%04d", i))
		if err != nil || string(v) != fmt.Sprintf("value%d", i) {
			t.Fatalf("key%04d in the copy: %q, %v", i, v, err)
		}
	}
}

// A checkpoint's table is a hard link to the source's: when its name is
// already taken in the checkpoint directory (a second checkpoint into the
// same directory got there first), copying over it would truncate the
// shared file, the source DB's live table. The name is refused instead.
func TestLinkOrCopyNeverWritesOverAnExistingName(t *testing.T) {
	fs := vfs.NewMem()
	for _, dir := range []string{"db", "cp"} {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	content := []byte("an immutable table's bytes")
	f, err := fs.Create("db/000007.sst")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(content)
	f.Close()
	if err := linkOrCopy(fs, "db/000007.sst", "cp/000007.sst", uint64(len(content)), func(string) {}); err != nil {
		t.Fatal(err)
	}
	err = linkOrCopy(fs, "db/000007.sst", "cp/000007.sst", uint64(len(content)), func(string) {})
	if !errors.Is(err, ErrCheckpointDirNotEmpty) {
		t.Fatalf("second linkOrCopy to a taken name = %v, want ErrCheckpointDirNotEmpty", err)
	}
	if st, err := fs.Stat("db/000007.sst"); err != nil || st.Size() != int64(len(content)) {
		t.Fatalf("source table after the refused copy: %v, %v; want %d bytes", st, err, len(content))
	}
}

// Two checkpoints into one directory at once: one succeeds, the other is
// refused, and the source keeps every table (they used to race to a copy
// over the first one's hard links, emptying the source's tables).
func TestConcurrentCheckpointsIntoOneDirLeaveTheSourceWhole(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	for i := 0; i < 500; i++ {
		if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("value"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 10; round++ {
		dir := fmt.Sprintf("cp%d", round)
		errs := make(chan error, 2)
		for g := 0; g < 2; g++ {
			go func() { errs <- d.Checkpoint(dir) }()
		}
		ok := 0
		for g := 0; g < 2; g++ {
			switch err := <-errs; {
			case err == nil:
				ok++
			case !errors.Is(err, ErrCheckpointDirNotEmpty):
				t.Fatalf("round %d: Checkpoint = %v, want nil or ErrCheckpointDirNotEmpty", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d of 2 checkpoints into one directory succeeded, want 1", round, ok)
		}
	}
	d = reopen(t, d, "db", &Options{FS: fs})
	defer d.Close()
	for i := 0; i < 500; i++ {
		if _, err := d.Get([]byte(fmt.Sprintf("k%05d", i))); err != nil {
			t.Fatalf("source lost k%05d: %v", i, err)
		}
	}
}

// TestCheckpointRefusesADBFileNameInItsDirectory caught a checkpoint
// made at DBDIR/000100.log: Checkpoint succeeded, and the source DB then
// failed to open (and Check reported a problem), since recovery took the
// directory for a WAL to replay. Such a name inside the DB's directory is
// refused before anything is made; another name there is fine.
func TestCheckpointRefusesADBFileNameInItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	// Below such a name too: Checkpoint(db/000999.log/cp) made the
	// directory db/000999.log, and the next Open failed on it as a WAL.
	for _, name := range []string{"000100.log", "MANIFEST-000009", "000007.sst", "CURRENT",
		"000999.log/cp", "000998.sst/a/b", "MANIFEST-000997/cp"} {
		cp := filepath.Join(dir, name)
		if err := d.Checkpoint(cp); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Checkpoint(%s): %v; want ErrInvalidArgument", cp, err)
		}
		if top := filepath.Join(dir, strings.Split(name, "/")[0]); name != "CURRENT" {
			if _, err := os.Stat(top); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the refused Checkpoint(%s) left %s: %v", cp, top, err)
			}
		}
	}
	if err := d.Checkpoint(filepath.Join(dir, "cp")); err != nil {
		t.Fatalf("Checkpoint into a plain subdirectory: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(dir, nil); err != nil || !rep.OK() {
		t.Fatalf("Check of the source after the checkpoints: %v\n%v", err, rep)
	}
	d, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen of the source: %v", err)
	}
	defer d.Close()
	if v, err := d.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}

// TestCheckpointOntoAFileKeepsTheFile: a Checkpoint into a name that a
// regular file holds fails, and leaves the file. On the in-memory FS, whose
// List said "does not exist" for a file, the failed Checkpoint took the name
// for a directory it had made and removed it: the user's file.
func TestCheckpointOntoAFileKeepsTheFile(t *testing.T) {
	for name, fsys := range map[string]vfs.FS{"mem": vfs.NewMem(), "os": vfs.Default} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			d, err := Open(filepath.Join(root, "db"), &Options{FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			precious := filepath.Join(root, "precious")
			f, err := fsys.Create(precious)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("user data"))
			f.Close()
			if err := d.Checkpoint(precious); err == nil {
				t.Fatal("Checkpoint onto a regular file succeeded")
			}
			if st, err := fsys.Stat(precious); err != nil || st.IsDir() || st.Size() != int64(len("user data")) {
				t.Fatalf("after the failed Checkpoint the file is %v, %v", st, err)
			}
		})
	}
}
