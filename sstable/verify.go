package sstable

import "github.com/sievekv/sievekv/internal/base"

// VerifyBlocks reads every data block of the table past the cache and
// checks all of it: the checksum (T1), every entry, restart and key order
// (T4, the full walk the read path leaves to invariants builds) and that
// each block's keys lie within its index separators (T5). It is for
// offline checkers (kv.Check); the first problem found is returned,
// wrapping base.ErrCorruption and naming the file and block offset.
func (r *Reader) VerifyBlocks() error {
	var it blockIter
	for i, ie := range r.index {
		contents, err := r.readRaw(ie.handle, dataBlock, nil)
		if err != nil {
			return err
		}
		b, err := parseBlock(contents)
		if err == nil {
			_, err = b.validate()
		}
		if err != nil {
			return r.corrupt(ie.handle.offset, "data block", err)
		}
		it.init(b)
		if !it.last() {
			continue // an empty block: nothing to place between separators
		}
		if base.Compare(it.key, ie.sep) > 0 {
			return r.corrupt(ie.handle.offset, "data block", malformed("last key %s is above the block's separator %s", it.key, ie.sep))
		}
		it.first()
		if i > 0 && base.Compare(it.key, r.index[i-1].sep) <= 0 {
			return r.corrupt(ie.handle.offset, "data block", malformed("first key %s is not above the previous separator %s", it.key, r.index[i-1].sep))
		}
	}
	return nil
}
