package kv

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/wal"
)

// twoLogImage builds a closed DB whose first WAL holds the synced keys
// a00..a19 and whose second holds laterKeys, written with Sync when
// laterSync. It returns the FS and the two logs' names.
func twoLogImage(t *testing.T, laterKeys []string, laterSync bool) (vfs.FS, string, string) {
	t.Helper()
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	for i := range 20 {
		if err := d.Set(fmt.Appendf(nil, "a%02d", i), make([]byte, 100), Sync); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	first := d.mem.logNum
	d.mu.Unlock()
	if err := d.asLeader(d.rotateMemTableLocked); err != nil {
		t.Fatal(err)
	}
	opts := NoSync
	if laterSync {
		opts = Sync
	}
	for _, k := range laterKeys {
		if err := d.Set([]byte(k), []byte("later"), opts); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	second := d.mem.logNum
	d.mu.Unlock()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, d.path(fileKindLog, first), d.path(fileKindLog, second)
}

// lastRecordStart returns the offset of the last record of a log image.
func lastRecordStart(t *testing.T, data []byte, num uint64) int64 {
	t.Helper()
	r := wal.NewReader(strings.NewReader(string(data)), num)
	var prev, last int64
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatalf("reading the undamaged log: %v", err)
			}
			return prev
		}
		prev, last = last, r.LastRecordEnd()
	}
}

// olderLogDamage is what a power loss can leave of the first log's
// unsynced tail once its sync runs in the background: a torn last record,
// its pages lost to the preallocated zeros (a clean end by wal's W6, so
// only the sequence numbers show the gap), or nothing of it at all.
var olderLogDamage = []struct {
	name    string
	damage  func(t *testing.T, data []byte, num uint64) []byte
	kept    string // a key that survives, "" if none does
	dropped string
}{
	{"torn", func(t *testing.T, data []byte, _ uint64) []byte { return data[:len(data)-30] }, "a18", "a19"},
	{"zeroed", func(t *testing.T, data []byte, num uint64) []byte {
		out := append([]byte(nil), data...)
		clear(out[lastRecordStart(t, data, num):])
		return out
	}, "a18", "a19"},
	{"empty", func(t *testing.T, data []byte, _ uint64) []byte { return make([]byte, len(data)) }, "", "a00"},
}

// damagedCopy copies the image and damages its first log.
func damagedCopy(t *testing.T, fs vfs.FS, firstName string, damage func(*testing.T, []byte, uint64) []byte) vfs.FS {
	t.Helper()
	out := vfs.NewMem()
	copyDir(t, fs, out, "db")
	_, num, ok := parseFileName(firstName[strings.LastIndex(firstName, "/")+1:])
	if !ok {
		t.Fatalf("cannot parse %s", firstName)
	}
	writeMemFile(t, out, firstName, damage(t, readMemFile(t, fs, firstName), uint64(num)))
	return out
}

// TestDamagedOlderLogRecoversPrefix checks K11's recovery rule: a power
// loss before a retired log's background sync can damage its tail while
// the next log holds writes acknowledged without Sync; recovery keeps the
// prefix up to the damage and drops everything after it, the later log
// included, so no hole is ever followed by later data. Before K11 a torn
// older log was corruption and a zeroed one let the later log's records
// replay over a hole.
func TestDamagedOlderLogRecoversPrefix(t *testing.T) {
	fs, firstName, _ := twoLogImage(t, []string{"b"}, false)
	for _, c := range olderLogDamage {
		t.Run(c.name, func(t *testing.T) {
			img := damagedCopy(t, fs, firstName, c.damage)
			rep, err := Check("db", &Options{FS: img})
			if err != nil || !rep.OK() {
				t.Fatalf("Check: %v, %v; want notes only", err, rep)
			}
			if !strings.Contains(strings.Join(rep.Notes, "\n"), "dropping the rest") {
				t.Fatalf("Check notes no dropped logs: %v", rep)
			}
			d := openMem(t, img, nil)
			defer d.Close()
			if c.kept != "" {
				if _, err := d.Get([]byte(c.kept)); err != nil {
					t.Fatalf("%s before the damage lost: %v", c.kept, err)
				}
			}
			for _, k := range []string{c.dropped, "b"} {
				if _, err := d.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s, after the damage, read back: %v", k, err)
				}
			}
		})
	}
}

// TestDamagedOlderLogBeforeSyncedRecordIsCorruption checks the other half
// of K11's rule: a chunk with a synced mark in a later log proves that
// log's Sync completed, which waited for every older log to be durable, so
// damage in an older log is then corruption, never a prefix to recover.
// (The later log needs two synced writes: a chunk carries the mark of the
// Sync before it.)
func TestDamagedOlderLogBeforeSyncedRecordIsCorruption(t *testing.T) {
	fs, firstName, _ := twoLogImage(t, []string{"b", "c"}, true)
	for _, c := range olderLogDamage {
		t.Run(c.name, func(t *testing.T) {
			img := damagedCopy(t, fs, firstName, c.damage)
			if rep, err := Check("db", &Options{FS: img}); err != nil || rep.OK() {
				t.Fatalf("Check: %v, %v; want a problem", err, rep)
			}
			if _, err := Open("db", &Options{FS: img}); !errors.Is(err, ErrCorruption) {
				t.Fatalf("Open: %v, want ErrCorruption", err)
			}
		})
	}
}

// TestDamagedNewestLogBeforeEmptyLog checks that the log created ahead,
// which a crash leaves empty after the one being written, does not turn a
// torn tail of the newest log holding records into anything but a torn
// tail.
func TestDamagedNewestLogBeforeEmptyLog(t *testing.T) {
	fs, firstName, secondName := twoLogImage(t, nil, false)
	img := damagedCopy(t, fs, firstName, olderLogDamage[0].damage)
	writeMemFile(t, img, secondName, nil)
	if rep, err := Check("db", &Options{FS: img}); err != nil || !rep.OK() {
		t.Fatalf("Check: %v, %v; want notes only", err, rep)
	}
	d := openMem(t, img, nil)
	defer d.Close()
	if _, err := d.Get([]byte("a18")); err != nil {
		t.Fatalf("record before the torn tail lost: %v", err)
	}
	if _, err := d.Get([]byte("a19")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("torn record read back: %v", err)
	}
}

// TestWALChainPrefixProperty checks K11 over random histories: writes,
// some with Sync, across randomly rotated logs; then one log's tail is cut
// or zeroed from a random offset, as a power loss can leave a log whose
// sync had not finished. Recovery must then return exactly the writes
// before the damage, or, when a later log holds a synced mark (which
// proves the damaged bytes had been durable), fail with ErrCorruption.
func TestWALChainPrefixProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 11))
	for iter := range 40 {
		fs := vfs.NewMem()
		d := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
		n := 5 + rng.IntN(60)
		var logs []fileNum
		logOf := func() fileNum {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.mem.logNum
		}
		logs = append(logs, logOf())
		for i := range n {
			opts := NoSync
			if rng.IntN(10) < 3 {
				opts = Sync
			}
			if err := d.Set(fmt.Appendf(nil, "k%05d", i), []byte("v"), opts); err != nil {
				t.Fatal(err)
			}
			if i < n-1 && rng.IntN(100) < 15 {
				if err := d.asLeader(d.rotateMemTableLocked); err != nil {
					t.Fatal(err)
				}
				logs = append(logs, logOf())
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// Each log's record ends and synced mark, read intact.
		ends := make([][]int64, len(logs))
		marks := make([]int64, len(logs))
		for j, num := range logs {
			data := readMemFile(t, fs, d.path(fileKindLog, num))
			r := wal.NewReader(strings.NewReader(string(data)), uint64(num))
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				ends[j] = append(ends[j], r.LastRecordEnd())
			}
			marks[j] = r.SyncedMark()
		}
		j := rng.IntN(len(logs))
		name := d.path(fileKindLog, logs[j])
		data := readMemFile(t, fs, name)
		if len(data) == 0 {
			continue
		}
		cut := rng.IntN(len(data))
		damaged := append([]byte(nil), data...)
		how := "cut"
		if rng.IntN(2) == 0 {
			damaged = damaged[:cut]
		} else {
			how = "zeroed"
			clear(damaged[cut:])
		}
		img := vfs.NewMem()
		copyDir(t, fs, img, "db")
		writeMemFile(t, img, name, damaged)

		kept := 0
		for _, e := range ends[:j] {
			kept += len(e)
		}
		for _, e := range ends[j] {
			if e <= int64(cut) {
				kept++
			}
		}
		proven := false
		for _, m := range marks[j+1:] {
			proven = proven || m > 0
		}
		ctx := fmt.Sprintf("iter %d: %d writes in %d logs, log %d of them %s at %d of %d", iter, n, len(logs), j, how, cut, len(data))
		got, err := Open("db", &Options{FS: img})
		if proven {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("%s, a later log synced: Open %v, want ErrCorruption", ctx, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Open: %v", ctx, err)
		}
		for i := range n {
			_, gerr := got.Get(fmt.Appendf(nil, "k%05d", i))
			if (i < kept) != (gerr == nil) {
				t.Fatalf("%s: write %d read back %v, want %d writes kept", ctx, i, gerr, kept)
			}
		}
		got.Close()
	}
}
