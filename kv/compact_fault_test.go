package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// TestCompactFailsCleanlyWhenATableFailsMidMerge fails one table open or
// read (once, or from then on) at points spread over a Compact(nil, nil)
// of a tree with L0 tables above a many-table bottom level and a small
// table cache: a compaction's level walk (compactionInputs, levelIter)
// opens each table only when it reaches it, so a failure lands in the
// middle of the merge, after outputs were written. Compact must return
// the injected error, leave no table file outside the version, and lose
// nothing: every key reads as the model has it, then after a clean retry,
// then after a reopen. A walk that took a failed open for the end of its
// level would drop the rest of the level from the output.
func TestCompactFailsCleanlyWhenATableFailsMidMerge(t *testing.T) {
	mem := vfs.NewMem()
	opts := func(fs vfs.FS, auto bool) *Options {
		o := smallTree()
		o.FS, o.MaxOpenFiles, o.BlockCacheSize, o.DisableAutomaticCompactions = fs, minMaxOpenFiles, -1, !auto
		return o
	}
	var keys []string
	for i := range 3000 {
		keys = append(keys, fmt.Sprintf("k%05d", i))
	}
	m := rdModel{}
	r := rand.New(rand.NewPCG(3, 4))
	d := openMem(t, mem, opts(mem, true))
	write := func(n int) {
		t.Helper()
		for i := range n {
			k := keys[r.IntN(len(keys))]
			var err error
			switch x := r.IntN(100); {
			case x < 80:
				v := fmt.Sprintf("v%d-%s", i, strings.Repeat("y", r.IntN(40)))
				err = d.Set([]byte(k), []byte(v), NoSync)
				m[k] = v
			case x < 98:
				err = d.Delete([]byte(k), NoSync)
				delete(m, k)
			default:
				j := r.IntN(len(keys) - 20)
				e := j + 1 + r.IntN(15)
				err = d.DeleteRange([]byte(keys[j]), []byte(keys[e]), NoSync)
				m.deleteRange(keys[j], keys[e])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// A leveled tree from the background compactions, then L0 tables
	// over it with compactions off.
	write(15000)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, mem, opts(mem, false))
	for range 2 {
		write(300)
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	v := refCurrent(d)
	if n := len(v.Levels[NumLevels-1]); n < 3 || len(v.Levels[0]) == 0 {
		t.Fatalf("want L0 tables over a bottom of several tables:\n%s", describeLevels(v))
	}
	v.Unref()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	tables := func(op errorfs.Op, name string) bool { return strings.HasSuffix(name, ".sst") }
	var total int64
	{
		efs := errorfs.Wrap(mem.CrashClone(), errorfs.OpOpen|errorfs.OpRead)
		efs.SetMatch(tables)
		d := openMem(t, efs, opts(efs, false))
		efs.Reset()
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
		total = efs.Count()
		d.Close()
	}
	points := int64(25)
	if raceEnabled || testing.Short() {
		points = 10
	}
	failed := 0
	for n := int64(1); n <= total; n += max(1, total/points) {
		for _, sticky := range []bool{false, true} {
			label := fmt.Sprintf("fail table op %d/%d (sticky %v)", n, total, sticky)
			img := mem.CrashClone()
			efs := errorfs.Wrap(img, errorfs.OpOpen|errorfs.OpRead)
			efs.SetMatch(tables)
			d := openMem(t, efs, opts(efs, false))
			efs.Reset()
			efs.FailAt(n, sticky)
			err := d.Compact(nil, nil)
			efs.FailAt(0, false)
			if err != nil {
				failed++
				if !errors.Is(err, errorfs.ErrInjected) {
					t.Fatalf("%s: Compact: %v", label, err)
				}
				v := refCurrent(d)
				live := map[string]bool{}
				for _, ts := range v.Levels {
					for _, tm := range ts {
						live[fileName(fileKindTable, fileNum(tm.FileNum))] = true
					}
				}
				v.Unref()
				names, err := img.List("db")
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range names {
					if strings.HasSuffix(name, ".sst") && !live[name] {
						t.Errorf("%s: table file %s left outside the version", label, name)
					}
				}
			} else if efs.Injected() > 0 {
				t.Fatalf("%s: Compact succeeded through %s", label, efs.LastInjected())
			}
			checkAgainst(t, label, d, m, keys, "", "")
			if err := d.Compact(nil, nil); err != nil {
				t.Fatalf("%s: retry: %v", label, err)
			}
			checkAgainst(t, label+", retried", d, m, keys, "", "")
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openMem(t, img, opts(img, false))
			checkAgainst(t, label+", reopened", d, m, keys, "", "")
			d.Close()
		}
	}
	if failed == 0 {
		t.Fatalf("no Compact failed in %d table operations", total)
	}
}
