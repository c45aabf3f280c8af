package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// bottomSeqNums returns the sequence number of every point entry in the
// bottom level's tables, by user key and newest first.
func bottomSeqNums(t *testing.T, d *DB) map[string][]base.SeqNum {
	t.Helper()
	v := refCurrent(d)
	defer v.Unref()
	seqs := map[string][]base.SeqNum{}
	for _, tm := range v.Levels[NumLevels-1] {
		it, err := d.tables.newCompactionIter(tm, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			seqs[string(k.UserKey)] = append(seqs[string(k.UserKey)], k.SeqNum())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return seqs
}

// TestCompactZeroesSeqNumsAtTheBottom checks compaction's C4 end to end: a
// compaction into the bottom level writes the versions every snapshot sees
// with sequence number 0, keeps the real number of every version a
// snapshot tells apart, and every read, at a snapshot or not, after a
// reopen too, answers as before; Check accepts the tables.
func TestCompactZeroesSeqNumsAtTheBottom(t *testing.T) {
	fs := vfs.NewMem()
	d, err := Open("db", &Options{FS: fs, DisableWAL: true, DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%03d", i)) }
	for i := range 100 {
		if err := d.Set(key(i), []byte(fmt.Sprintf("old%d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	snap := d.NewSnapshot()
	// After the snapshot: overwrite k000-k019, delete k020-k029 one by
	// one and k030-k039 by a range.
	for i := range 20 {
		if err := d.Set(key(i), []byte(fmt.Sprintf("new%d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	for i := 20; i < 30; i++ {
		if err := d.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DeleteRange(key(30), key(40), NoSync); err != nil {
		t.Fatal(err)
	}
	want := func(i int, atSnap bool) (string, bool) {
		switch {
		case atSnap:
			return fmt.Sprintf("old%d", i), true
		case i < 20:
			return fmt.Sprintf("new%d", i), true
		case i < 40:
			return "", false
		}
		return fmt.Sprintf("old%d", i), true
	}
	check := func(when string, snap *Snapshot) {
		t.Helper()
		for i := range 100 {
			get := d.Get
			if snap != nil {
				get = snap.Get
			}
			got, err := get(key(i))
			w, found := want(i, snap != nil)
			if found && (err != nil || string(got) != w) || !found && !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: get %s (snapshot %v) = %q, %v; want %q (found %v)", when, key(i), snap != nil, got, err, w, found)
			}
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("compacted under a snapshot", snap)
	check("compacted under a snapshot", nil)
	for k, seqs := range bottomSeqNums(t, d) {
		// The oldest version is what the snapshot sees: zeroed. A newer
		// one (the snapshot tells it apart) keeps its number.
		if seqs[len(seqs)-1] != 0 {
			t.Fatalf("%s: versions %v: the one every snapshot sees keeps its sequence number", k, seqs)
		}
		for _, s := range seqs[:len(seqs)-1] {
			if s == 0 {
				t.Fatalf("%s: versions %v: a version newer than the snapshot lost its sequence number", k, seqs)
			}
		}
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("compacted", nil)
	seqs := bottomSeqNums(t, d)
	if len(seqs) != 80 {
		t.Fatalf("%d keys at the bottom, want 80", len(seqs))
	}
	for k, s := range seqs {
		if len(s) != 1 || s[0] != 0 {
			t.Fatalf("%s: versions %v at the bottom with no snapshot, want one at sequence 0", k, s)
		}
	}
	// A write after the zeroing is newer than the zeroed version.
	if err := d.Set(key(50), []byte("newest"), NoSync); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Get(key(50)); err != nil || string(got) != "newest" {
		t.Fatalf("get %s after an overwrite of a zeroed version = %q, %v", key(50), got, err)
	}
	if err := d.Delete(key(50), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Check("db", &Options{FS: fs}); err != nil {
		t.Fatal(err)
	}
	if d, err = Open("db", &Options{FS: fs, DisableWAL: true}); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Get(key(50)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get %s, deleted over a zeroed version, after reopen: %v", key(50), err)
	}
	for i := 51; i < 100; i++ {
		if got, err := d.Get(key(i)); err != nil || string(got) != fmt.Sprintf("old%d", i) {
			t.Fatalf("get %s after reopen = %q, %v", key(i), got, err)
		}
	}
}
