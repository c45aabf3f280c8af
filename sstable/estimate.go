package sstable

import "github.com/sievekv/sievekv/internal/base"

// EstimateDataBytes estimates the data-block bytes of the table's entries
// with user keys in [start, end), from the resident index alone (T6: no
// block read): the stored length of every block that may hold such a key.
// Block i holds the keys above separator i-1 and at or below separator i
// (T5), so the blocks are those from the first whose separator reaches
// start to the first whose separator reaches end; the two at the edges
// may be only partly in the range, which makes the estimate high by at
// most two blocks. Delete-aware compaction uses it to weigh what a range
// tombstone frees in an older table.
func (r *Reader) EstimateDataBytes(start, end []byte) uint64 {
	if len(r.index) == 0 || base.CompareUserKeys(start, end) >= 0 {
		return 0
	}
	first := r.findBlock(base.InternalKey{UserKey: start, Trailer: base.TrailerMax})
	last := r.findBlock(base.InternalKey{UserKey: end, Trailer: base.TrailerMax})
	if last == len(r.index) {
		last--
	}
	var n uint64
	for i := first; i <= last; i++ {
		n += r.index[i].handle.length + blockTrailerLen
	}
	return n
}
