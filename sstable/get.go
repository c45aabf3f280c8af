package sstable

import (
	"sync"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
)

// Get returns the newest version of userKey visible at seq (base B3): a
// copy of its value and its kind; found is false if the table has none. A
// KindDelete result means the key is deleted as of seq. The filter answers
// first: a definite negative returns without touching index or data (T6).
func (r *Reader) Get(userKey []byte, seq base.SeqNum) (value []byte, kind base.Kind, found bool, err error) {
	return r.GetHashed(nil, userKey, filters.Hash(userKey), seq, nil)
}

// GetHashed is Get for a caller that probes several tables for one key:
// hash is filters.Hash(userKey), computed once by the caller, and the
// value is appended to dst, so a Get served from the cache allocates
// nothing here when dst has room. The value is copied out of the block
// before the block's reference is released (BM1): it never aliases cache
// memory. gs, when not nil, records what this call alone did: the filter's
// answer, blocks read and cache lookups; the shared Stats are counted
// either way.
func (r *Reader) GetHashed(dst, userKey []byte, hash uint64, seq base.SeqNum, gs *GetStats) (value []byte, kind base.Kind, found bool, err error) {
	value, kind, _, found, err = r.GetVersionHashed(dst, userKey, hash, seq, gs)
	return value, kind, found, err
}

// GetVersion is Get that also returns the sequence number of the version
// found, for a caller that must compare it with a range tombstone's, and
// records in gs (when not nil) what this call did.
func (r *Reader) GetVersion(userKey []byte, seq base.SeqNum, gs *GetStats) (value []byte, kind base.Kind, versionSeq base.SeqNum, found bool, err error) {
	return r.GetVersionHashed(nil, userKey, filters.Hash(userKey), seq, gs)
}

// GetVersionHashed is GetHashed that also returns the sequence number of
// the version found.
func (r *Reader) GetVersionHashed(dst, userKey []byte, hash uint64, seq base.SeqNum, gs *GetStats) (value []byte, kind base.Kind, versionSeq base.SeqNum, found bool, err error) {
	if r.filter != nil {
		r.stats.FilterChecks.Add(1)
		mayContain := r.filter.MayContainHash(hash)
		gs.countFilter(mayContain)
		if !mayContain {
			r.stats.FilterNegatives.Add(1)
			return dst, 0, 0, false, nil
		}
	}
	value, kind, versionSeq, found, err = r.get(dst, userKey, seq, gs)
	if r.filter != nil && err == nil {
		if found {
			r.stats.FilterTruePositives.Add(1)
		} else {
			r.stats.FilterFalsePositives.Add(1)
		}
	}
	return value, kind, versionSeq, found, err
}

// iterPool recycles block iterators, and with them their key buffers, so
// that a Get served from the cache allocates nothing.
var iterPool = sync.Pool{New: func() any { return new(blockIter) }}

func (r *Reader) get(dst, userKey []byte, seq base.SeqNum, gs *GetStats) ([]byte, base.Kind, base.SeqNum, bool, error) {
	search := base.MakeSearchKey(userKey, seq)
	i := r.findBlock(search)
	if i == len(r.index) {
		return dst, 0, 0, false, nil // search key above the last separator
	}
	b, err := r.readDataBlock(r.index[i].handle, gs, nil)
	if err != nil {
		return dst, 0, 0, false, err
	}
	// By T5 the first entry >= search is in block i if it has userKey at
	// all: when block i has no entry >= search, search lies between its
	// last key and a separator (u, TrailerMax) with u strictly below the
	// next block's first user key, so no version of userKey exists. The
	// Get never needs a second block.
	it := iterPool.Get().(*blockIter)
	it.init(&b.blk)
	found := it.seekGE(search) && base.CompareUserKeys(it.key.UserKey, userKey) == 0
	kind, vseq, itErr := it.key.Kind(), it.key.SeqNum(), it.err
	if found {
		dst = append(dst, it.value...) // copied before b is released (BM1)
	}
	it.b, it.value = nil, nil // keep only keyBuf across uses
	iterPool.Put(it)
	b.release()
	switch {
	case itErr != nil:
		return dst, 0, 0, false, r.corrupt(r.index[i].handle.offset, "data block", itErr)
	case found:
		return dst, kind, vseq, true, nil
	}
	return dst, 0, 0, false, nil
}
