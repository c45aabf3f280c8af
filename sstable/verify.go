package sstable

import "github.com/sievekv/sievekv/internal/base"

// VerifyBlocks reads every data block of the table past the cache and
// checks all of it: the checksum (T1), every entry, restart and key order
// (T4, the full walk the read path leaves to invariants builds), that
// each block's keys lie within its index separators and that each
// separator has T5's shape: its block's last key, or (u, TrailerMax)
// with u strictly between the user keys around the cut, which is what
// lets a Get read one block. It is for offline checkers (kv.Check); the
// first problem found is returned, wrapping base.ErrCorruption and naming
// the file and block offset.
func (r *Reader) VerifyBlocks() error {
	var it blockIter
	// prevAbove: the previous separator is a user key above its block's
	// last one, so the next block's first user key must be above it too.
	prevAbove := false
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
			prevAbove = false
			continue // an empty block: nothing to place between separators
		}
		switch c := base.Compare(it.key, ie.sep); {
		case c > 0:
			return r.corrupt(ie.handle.offset, "data block", malformed("last key %s is above the block's separator %s", it.key, ie.sep))
		case c < 0 && (ie.sep.Trailer != base.TrailerMax || base.CompareUserKeys(it.key.UserKey, ie.sep.UserKey) >= 0):
			return r.corrupt(ie.handle.offset, "data block", malformed("separator %s is neither the last key %s nor a user key above it", ie.sep, it.key))
		}
		above := base.Compare(it.key, ie.sep) < 0
		it.first()
		if i > 0 && base.Compare(it.key, r.index[i-1].sep) <= 0 {
			return r.corrupt(ie.handle.offset, "data block", malformed("first key %s is not above the previous separator %s", it.key, r.index[i-1].sep))
		}
		if prevAbove && base.CompareUserKeys(it.key.UserKey, r.index[i-1].sep.UserKey) <= 0 {
			return r.corrupt(ie.handle.offset, "data block", malformed("first key %s shares the previous separator's user key %q", it.key, r.index[i-1].sep.UserKey))
		}
		prevAbove = above
	}
	return nil
}
