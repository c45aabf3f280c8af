package kv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestShadowDropMatchesModel: after random Sets, Deletes, range deletes,
// snapshots, flushes and compactions of single tables down a level (the
// compactions that leave a key's tombstone above its value), every Get
// and a full scan, at the latest state and at every open snapshot, match
// a map model. Early drop must have happened for the run to count.
func TestShadowDropMatchesModel(t *testing.T) {
	var dropped uint64
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			dropped += runShadowDropModel(t, seed, 600)
		})
	}
	if dropped == 0 {
		t.Fatal("no value was dropped early in any run: the test exercised nothing")
	}
	if testing.Verbose() {
		t.Logf("%d values dropped early", dropped)
	}
}

type modelSnapshot struct {
	snap  *Snapshot
	model map[string]string
}

func runShadowDropModel(t *testing.T, seed int64, ops int) uint64 {
	rng := rand.New(rand.NewSource(seed))
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true, TargetFileSize: 2 << 10})
	defer d.Close()
	const keys = 60
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%03d", i)) }
	model := map[string]string{}
	var snaps []modelSnapshot
	defer func() {
		for _, s := range snaps {
			s.snap.Close()
		}
	}()
	for op := 0; op < ops; op++ {
		switch r := rng.Intn(100); {
		case r < 40:
			k, v := key(rng.Intn(keys)), fmt.Sprintf("v%d-%s", op, bytes.Repeat([]byte("x"), rng.Intn(100)))
			if err := d.Set(k, []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			model[string(k)] = v
		case r < 60:
			k := key(rng.Intn(keys))
			mustDelete(t, d, k)
			delete(model, string(k))
		case r < 62:
			lo := rng.Intn(keys)
			hi := lo + 1 + rng.Intn(4)
			if err := d.DeleteRange(key(lo), key(hi), NoSync); err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				delete(model, string(key(i)))
			}
		case r < 66:
			snaps = append(snaps, modelSnapshot{d.NewSnapshot(), maps.Clone(model)})
		case r < 69 && len(snaps) > 0:
			i := rng.Intn(len(snaps))
			snaps[i].snap.Close()
			snaps = slices.Delete(snaps, i, i+1)
		case r < 80:
			mustFlush(t, d)
		case r < 97:
			compactRandomTableDown(t, d, rng)
		case r < 98:
			rewriteBottomForTest(t, d)
		default:
			if err := d.Compact(key(rng.Intn(keys)), key(rng.Intn(keys))); err != nil && !errors.Is(err, ErrInvalidArgument) {
				t.Fatal(err)
			}
		}
		if op%20 == 19 {
			checkModel(t, d.Get, func() *Iterator { return d.NewIter(nil) }, model, keys, key, "latest")
			for i, s := range snaps {
				checkModel(t, s.snap.Get, func() *Iterator { return s.snap.NewIter(nil) }, s.model, keys, key, fmt.Sprint("snapshot ", i))
			}
		}
	}
	return d.Metrics().Compaction.ShadowedDropped
}

// compactRandomTableDown compacts one table of a random non-empty level
// above the bottom into the next level (all of L0, whose tables overlap).
func compactRandomTableDown(t *testing.T, d *DB, rng *rand.Rand) {
	t.Helper()
	d.mu.Lock()
	var levels []int
	for l := 0; l < NumLevels-1; l++ {
		if len(d.current.Levels[l]) > 0 {
			levels = append(levels, l)
		}
	}
	if len(levels) == 0 {
		d.mu.Unlock()
		return
	}
	l := levels[rng.Intn(len(levels))]
	ts := d.current.Levels[l]
	inputs := append([]*manifest.TableMetadata(nil), ts...)
	if l > 0 {
		inputs = []*manifest.TableMetadata{ts[rng.Intn(len(ts))]}
	}
	d.mu.Unlock()
	// Skip a level or not: both leave the tables above the output holding
	// newer versions (K4), which is what early drop looks for.
	compactTablesForTest(t, d, l, l+1, inputs)
}

func checkModel(t *testing.T, get func([]byte) ([]byte, error), iter func() *Iterator, model map[string]string, keys int, key func(int) []byte, at string) {
	t.Helper()
	for i := 0; i < keys; i++ {
		k := key(i)
		got, err := get(k)
		want, ok := model[string(k)]
		switch {
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("%s: Get %s = %q, %v; want not found", at, k, got, err)
		case ok && (err != nil || string(got) != want):
			t.Fatalf("%s: Get %s = %q, %v; want %q", at, k, got, err, want)
		}
	}
	it := iter()
	defer it.Close()
	var scanned []string
	for ok := it.First(); ok; ok = it.Next() {
		k := string(it.Key())
		if want, ok := model[k]; !ok || want != string(it.Value()) {
			t.Fatalf("%s: scan yields %s = %q; model has %q (%v)", at, k, it.Value(), want, ok)
		}
		scanned = append(scanned, k)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != len(model) {
		t.Fatalf("%s: scan yields %d keys, model holds %d", at, len(scanned), len(model))
	}
}
