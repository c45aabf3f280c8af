package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestGetAppendMatchesGet: over random sets (empty values among them),
// deletes, range deletes, flushes, compactions and snapshots, GetAppend
// returns dst followed by exactly what Get returns, and on ErrNotFound
// returns dst itself, unchanged: from memtables, from tables, through
// the range-tombstone path, live and at a snapshot.
func TestGetAppendMatchesGet(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 32 << 10, DisableWAL: true})
			defer d.Close()
			key := func() []byte { return []byte(fmt.Sprintf("k%04d", rng.IntN(500))) }
			var snap *Snapshot
			defer func() {
				if snap != nil {
					snap.Close()
				}
			}()
			check := func(k []byte) {
				t.Helper()
				prefix := []byte("prefix-")
				dst := append(make([]byte, 0, 64), prefix...)
				type getter struct {
					name   string
					get    func([]byte) ([]byte, error)
					append func([]byte, []byte) ([]byte, error)
				}
				gs := []getter{{"DB", d.Get, d.GetAppend}}
				if snap != nil {
					gs = append(gs, getter{"Snapshot", snap.Get, snap.GetAppend})
				}
				for _, g := range gs {
					want, wantErr := g.get(k)
					got, err := g.append(dst, k)
					if !errors.Is(err, wantErr) && err != wantErr {
						t.Fatalf("%s %q: GetAppend error %v, Get's %v", g.name, k, err, wantErr)
					}
					if err != nil {
						if len(got) != len(dst) || &got[0] != &dst[0] {
							t.Fatalf("%s %q: GetAppend with %v returned %q, not dst as given", g.name, k, err, got)
						}
						continue
					}
					if !bytes.Equal(got, append(append([]byte{}, prefix...), want...)) {
						t.Fatalf("%s %q: GetAppend = %q, want the prefix then Get's %q", g.name, k, got, want)
					}
				}
			}
			for step := range 3000 {
				switch r := rng.IntN(100); {
				case r < 45:
					v := []byte(fmt.Sprintf("v%d", step))
					if rng.IntN(10) == 0 {
						v = nil // an empty value
					}
					if err := d.Set(key(), v, NoSync); err != nil {
						t.Fatal(err)
					}
				case r < 55:
					if err := d.Delete(key(), NoSync); err != nil {
						t.Fatal(err)
					}
				case r < 57:
					a, b := key(), key()
					if bytes.Compare(a, b) > 0 {
						a, b = b, a
					}
					if err := d.DeleteRange(a, b, NoSync); err != nil {
						t.Fatal(err)
					}
				case r < 59:
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				case r < 60:
					if err := d.Compact(nil, nil); err != nil {
						t.Fatal(err)
					}
				case r < 61:
					if snap != nil {
						snap.Close()
					}
					snap = d.NewSnapshot()
				default:
					check(key())
				}
			}
		})
	}
}
