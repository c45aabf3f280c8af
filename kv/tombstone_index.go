package kv

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/sstable"
)

// tombstoneIndex is the engine-wide cuckoo filter of the user keys whose
// tombstones live in tables, one fingerprint per tombstone. A flush adds
// the tombstones it writes; a compaction removes the ones it drops (each a
// known member, so the cuckoo filter's removal hazard cannot strike). It
// is rebuilt from the tables on Open, and rebuilt at double capacity if it
// fills, so it never holds a false negative (T1 in docs/design.md).
type tombstoneIndex struct {
	mu sync.Mutex
	f  *filters.Cuckoo // nil when disabled
	// rebuild returns every tombstone key in the live tables.
	rebuild func() ([][]byte, error)

	checks, negatives atomic.Uint64
	rebuilds          atomic.Uint64
}

// tombstoneIndexFPRate is the index's target false-positive rate: 0.4%
// gives 12-bit fingerprints (ceil(log2(2*4/0.004)) = 11, rounded up).
const tombstoneIndexFPRate = 0.004

func newTombstoneIndex(capacity int) (*filters.Cuckoo, error) {
	return filters.NewCuckoo(max(capacity, 1024), tombstoneIndexFPRate)
}

// addAll inserts keys; a full filter is rebuilt at twice the size.
func (ti *tombstoneIndex) addAll(keys [][]byte) error {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.f == nil {
		return nil
	}
	for _, k := range keys {
		if err := ti.f.AddHash(filters.Hash(k)); err != nil {
			if !errors.Is(err, filters.ErrFull) {
				return err
			}
			// The failed Add changed nothing; the rebuild reads every
			// tombstone from the tables, which the caller's edit has
			// already made current, so k is among them.
			return ti.rebuildLocked(2 * ti.f.Cap())
		}
	}
	return nil
}

// removeAll deletes one fingerprint per key: each key is a tombstone a
// compaction dropped, so it is a member.
func (ti *tombstoneIndex) removeAll(keys [][]byte) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.f == nil {
		return
	}
	for _, k := range keys {
		ti.f.RemoveHash(filters.Hash(k))
	}
}

func (ti *tombstoneIndex) rebuildLocked(capacity int) error {
	keys, err := ti.rebuild()
	if err != nil {
		return err
	}
	// Room for the keys at 80% load, so the next flushes fit before the
	// next growth; NewCuckoo rounds the buckets up to a power of two.
	capacity = max(capacity, len(keys)*5/4)
	for {
		f, err := newTombstoneIndex(capacity)
		if err != nil {
			return err
		}
		full := false
		for _, k := range keys {
			if f.AddHash(filters.Hash(k)) != nil {
				full = true
				break
			}
		}
		if !full {
			ti.f = f
			ti.rebuilds.Add(1)
			return nil
		}
		capacity *= 2
	}
}

// mayHaveTombstone reports whether some table may hold a tombstone for
// userKey (false is definite).
func (ti *tombstoneIndex) mayHaveTombstone(userKey []byte) bool {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.f == nil {
		return true
	}
	ti.checks.Add(1)
	ok := ti.f.MayContainHash(filters.Hash(userKey))
	if !ok {
		ti.negatives.Add(1)
	}
	return ok
}

func (ti *tombstoneIndex) stats() (entries int, bytes uint64) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	if ti.f == nil {
		return 0, 0
	}
	enc, _ := ti.f.MarshalBinary()
	return ti.f.Len(), uint64(len(enc))
}

// tombstoneKeys reads every tombstone key of v's tables (for a rebuild).
// Tables whose properties record no deletions are skipped unread.
func (d *DB) tombstoneKeys(v *version) ([][]byte, error) {
	var keys [][]byte
	for _, ts := range v.levels {
		for _, t := range ts {
			err := d.tables.withReader(t, func(r *sstable.Reader) error {
				if r.Properties().NumDeletions == 0 {
					return nil
				}
				it := r.NewIter(nil, nil)
				for ok := it.First(); ok; ok = it.Next() {
					if it.Key().Kind() == base.KindDelete {
						keys = append(keys, append([]byte(nil), it.Key().UserKey...))
					}
				}
				return it.Close()
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}
