package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// The hostile cases: the engine used as a careless or hostile caller would
// use it (misused API, odd directory contents, racing Close, exhausted
// resources). Each test is one case, named after what it caught or guards,
// and each demands a clear typed error or correct behaviour, with nothing
// acknowledged lost and the DB still opening afterwards. docs/reliability.md
// lists them with what they found.

func TestHostileOpenEmptyDirname(t *testing.T) {
	_, err := kv.Open("", nil)
	if !errors.Is(err, kv.ErrInvalidArgument) {
		t.Fatalf("Open(\"\") = %v, want ErrInvalidArgument", err)
	}
	if !strings.Contains(err.Error(), "directory name is empty") {
		t.Fatalf("Open(\"\") error %q does not say the directory name is empty", err)
	}
}

// hostileOpen opens dir with small memtables so a few writes make tables.
func hostileOpen(t *testing.T, dir string, o *kv.Options) *kv.DB {
	t.Helper()
	if o == nil {
		o = &kv.Options{}
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 16 << 10
	}
	d, err := kv.Open(dir, o)
	if err != nil {
		t.Fatalf("Open %s: %v", dir, err)
	}
	return d
}

// hostileWrite writes n keys prefix%05d = value-of-key, synced.
func hostileWrite(t *testing.T, d *kv.DB, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("%s%05d", prefix, i)
		if err := d.Set([]byte(k), []byte("value-of-"+k), kv.Sync); err != nil {
			t.Fatalf("Set %s: %v", k, err)
		}
	}
}

// hostileVerify checks that every key hostileWrite wrote reads back.
func hostileVerify(t *testing.T, d *kv.DB, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("%s%05d", prefix, i)
		v, err := d.Get([]byte(k))
		if err != nil || string(v) != "value-of-"+k {
			t.Fatalf("Get %s = %q, %v", k, v, err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Files whose names look like the engine's but are not spelled as it
// spells them (wrong padding, numbers out of its range) are not the DB's:
// Open neither replays, deletes nor refuses them.
func TestHostileNonCanonicalNamesAreLeftAlone(t *testing.T) {
	dir := t.TempDir()
	d := hostileOpen(t, dir, nil)
	hostileWrite(t, d, "a", 300)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	strays := map[string]string{
		"5000.log":       "not a WAL",
		"0000001.log":    "",
		"7.log":          "",
		"notes.tmp":      "mine",
		"7.tmp":          "",
		"MANIFEST-1":     "junk",
		"000001.sst.bak": "backup",
	}
	for name, content := range strays {
		writeFile(t, filepath.Join(dir, name), content)
	}
	for round := 0; round < 2; round++ {
		d = hostileOpen(t, dir, nil)
		hostileVerify(t, d, "a", 300)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range strays {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != content {
			t.Errorf("stray %s after two opens: %q, %v; want it untouched", name, got, err)
		}
	}
}

// A fresh directory holding someone else's empty 7.log is not a damaged
// DB (Open used to read it as WAL 000007.log and refuse the directory).
func TestHostileFreshDirWithStrayEmptyLog(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "7.log"), "")
	d := hostileOpen(t, dir, nil)
	hostileWrite(t, d, "b", 10)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = hostileOpen(t, dir, nil)
	defer d.Close()
	hostileVerify(t, d, "b", 10)
}

// A stray file named with a number near 2^64 used to move the file-number
// counter to its end: the next numbers wrapped and every later Open failed
// as corrupt.
func TestHostileHugeStrayFileNumber(t *testing.T) {
	dir := t.TempDir()
	d := hostileOpen(t, dir, nil)
	hostileWrite(t, d, "c", 100)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "18446744073709551613.tmp"), "")
	writeFile(t, filepath.Join(dir, "18446744073709551615.sst"), "")
	for round := 0; round < 3; round++ {
		d = hostileOpen(t, dir, nil)
		hostileWrite(t, d, fmt.Sprintf("r%d-", round), 300) // several flushes
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	d = hostileOpen(t, dir, nil)
	defer d.Close()
	hostileVerify(t, d, "c", 100)
	for round := 0; round < 3; round++ {
		hostileVerify(t, d, fmt.Sprintf("r%d-", round), 300)
	}
	names, _ := os.ReadDir(dir)
	for _, e := range names {
		if strings.HasPrefix(e.Name(), "0000") || e.Name() == "CURRENT" || e.Name() == "LOCK" ||
			strings.HasPrefix(e.Name(), "MANIFEST-0000") || strings.HasPrefix(e.Name(), "1844674407370955161") {
			continue
		}
		t.Errorf("unexpected file %s: a file number left the low range", e.Name())
	}
}

// With DisableWAL, Close used to flush before the barrier that stops new
// writes: writes acknowledged in between stayed in a memtable Close then
// dropped (about 10% of them, with Close returning nil). Four writers
// race Close; after reopening, every acknowledged key must be there, and
// every write that was refused must have been refused with ErrClosed.
func TestHostileNoWALCloseKeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	d := hostileOpen(t, dir, &kv.Options{DisableWAL: true, MemTableSize: 64 << 10})
	const writers = 4
	acked := make([][]string, writers)
	var wg sync.WaitGroup
	started := make(chan struct{}, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				if i == 200 {
					started <- struct{}{}
				}
				k := fmt.Sprintf("w%d/%07d", w, i)
				err := d.Set([]byte(k), []byte(k), kv.Sync)
				if errors.Is(err, kv.ErrClosed) {
					if i < 200 {
						started <- struct{}{}
					}
					return
				}
				if err != nil {
					t.Errorf("writer %d: Set %s: %v", w, k, err)
					return
				}
				acked[w] = append(acked[w], k)
			}
		}(w)
	}
	for w := 0; w < writers; w++ {
		<-started
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	d = hostileOpen(t, dir, &kv.Options{DisableWAL: true})
	defer d.Close()
	total, lost := 0, 0
	for w := range acked {
		for _, k := range acked[w] {
			total++
			if v, err := d.Get([]byte(k)); err != nil || string(v) != k {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged writes lost across Close", lost, total)
	}
}

// openFilesUnder counts this process's descriptors open on files in dir
// (Linux /proc/self/fd; the test is skipped elsewhere).
func openFilesUnder(t *testing.T, dir string) int { return len(openFileNamesUnder(t, dir)) }

func openFileNamesUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var names []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			names = append(names, filepath.Base(target))
		}
	}
	return names
}

// hostileTables builds a closed DB in dir whose data sits in many small
// tables of the bottom level (one compaction with tiny target files), and
// returns its keys; value(k) is what each holds.
func hostileTables(t *testing.T, dir string, keys int) []string {
	t.Helper()
	d := hostileOpen(t, dir, &kv.Options{MemTableSize: 64 << 10, TargetFileSize: 1 << 10, DisableAutomaticCompactions: true})
	var out []string
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("key%07d", i)
		out = append(out, k)
		if err := d.Set([]byte(k), hostileValue(k), kv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func hostileValue(k string) []byte {
	return []byte("value-" + k + "-0123456789012345678901234567890123456789")
}

// With MaxOpenFiles 16 and some 250 tables, point reads, full scans and a
// reopen all work, and the DB never holds more than 16 descriptors (it
// used to keep one per table forever, and Open opened them all).
func TestHostileManyTablesFewDescriptors(t *testing.T) {
	dir := t.TempDir()
	keys := hostileTables(t, dir, 3000)
	const maxOpen = 16
	o := &kv.Options{MaxOpenFiles: maxOpen, DisableAutomaticCompactions: true}
	for round := 0; round < 2; round++ {
		d := hostileOpen(t, dir, o)
		infos, err := d.Tables()
		if err != nil {
			t.Fatal(err)
		}
		if tables := len(infos); tables < 200 {
			t.Fatalf("%d tables, want at least 200 for the test to mean something", len(infos))
		}
		peak := openFilesUnder(t, dir)
		for i, k := range keys {
			if i%7 != 0 {
				continue
			}
			if v, err := d.Get([]byte(k)); err != nil || string(v) != string(hostileValue(k)) {
				t.Fatalf("Get %s = %q, %v", k, v, err)
			}
			if i%35 == 0 {
				peak = max(peak, openFilesUnder(t, dir))
			}
		}
		for pass := 0; pass < 2; pass++ {
			it := d.NewIter(nil)
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				if string(it.Key()) != keys[n] || string(it.Value()) != string(hostileValue(keys[n])) {
					t.Fatalf("scan: entry %d = %q", n, it.Key())
				}
				n++
				if n%100 == 0 {
					peak = max(peak, openFilesUnder(t, dir))
				}
			}
			if err := it.Close(); err != nil || n != len(keys) {
				t.Fatalf("scan saw %d of %d keys, %v", n, len(keys), err)
			}
		}
		if peak > maxOpen {
			t.Fatalf("round %d: %d descriptors open on the DB's files, MaxOpenFiles is %d", round, peak, maxOpen)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if open := openFileNamesUnder(t, dir); len(open) != 0 {
			t.Fatalf("open after Close returned: %v", open)
		}
	}
}

// Gets and iterators racing Close end with a correct answer or ErrClosed
// (they used to fail with "file already closed"), and once Close returns
// no file of the DB is open (the table cache used to reopen readers for
// reads in flight into a cache no one closed).
func TestHostileReadsRacingClose(t *testing.T) {
	dir := t.TempDir()
	keys := hostileTables(t, dir, 1500)
	for round := 0; round < 12; round++ {
		d := hostileOpen(t, dir, &kv.Options{MaxOpenFiles: 32})
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		stop := make(chan struct{})
		started := make(chan struct{}, 8)
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; ; i = (i + 97) % len(keys) {
					if i%50 == 0 {
						select {
						case started <- struct{}{}:
						default:
						}
					}
					v, err := d.Get([]byte(keys[i]))
					if errors.Is(err, kv.ErrClosed) {
						return
					}
					if err != nil || string(v) != string(hostileValue(keys[i])) {
						errs <- fmt.Errorf("Get %s = %q, %v", keys[i], v, err)
						return
					}
				}
			}(g)
		}
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					it := d.NewIter(nil)
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						if string(it.Key()) != keys[n] {
							errs <- fmt.Errorf("scan entry %d = %q, want %q", n, it.Key(), keys[n])
							it.Close()
							return
						}
						n++
					}
					err := it.Error()
					it.Close()
					if errors.Is(err, kv.ErrClosed) {
						return
					}
					if err != nil || n != len(keys) {
						errs <- fmt.Errorf("scan: %d of %d keys, %v", n, len(keys), err)
						return
					}
					select {
					case started <- struct{}{}:
					case <-stop:
						return
					default:
					}
				}
			}()
		}
		<-started
		<-started
		if err := d.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if open := openFileNamesUnder(t, dir); len(open) != 0 {
			t.Fatalf("round %d: open after Close returned: %v", round, open)
		}
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	d := hostileOpen(t, dir, nil)
	defer d.Close()
	hostileVerify0(t, d, keys)
}

func hostileVerify0(t *testing.T, d *kv.DB, keys []string) {
	t.Helper()
	for _, k := range keys {
		if v, err := d.Get([]byte(k)); err != nil || string(v) != string(hostileValue(k)) {
			t.Fatalf("Get %s = %q, %v", k, v, err)
		}
	}
}
