package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// AddRangeDel records a range tombstone for the table, in any order
// relative to Add and to other tombstones; Finish writes them all in one
// range-deletion block (format 2). The tombstone's keys are copied. The
// table's Smallest/LargestKey properties stay those of its point entries;
// its sequence-number range widens to include the tombstone.
func (w *Writer) AddRangeDel(t rangedel.Tombstone) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("sstable: AddRangeDel after Finish or Abort")
	}
	if bytes.Compare(t.Start, t.End) >= 0 || t.Seq == 0 || t.Seq > base.SeqNumMax {
		return fmt.Errorf("sstable: AddRangeDel %v: empty range or invalid seqnum", t)
	}
	w.rangeDels = append(w.rangeDels, t.Clone())
	w.rangeDelBytes += RangeDelSize(t)
	return nil
}

// SplitRangeDels keeps, of the range tombstones added so far, only their
// parts below k (rangedel.SplitAt) and returns the parts at or above k,
// for a caller that ends the table before k to carry into the next one.
func (w *Writer) SplitRangeDels(k []byte) []rangedel.Tombstone {
	var after []rangedel.Tombstone
	// The writer owns its tombstones' keys (AddRangeDel clones them).
	w.rangeDels, after = rangedel.SplitAt(w.rangeDels, bytes.Clone(k))
	w.rangeDelBytes = 0
	for _, t := range w.rangeDels {
		w.rangeDelBytes += RangeDelSize(t)
	}
	for i := range after {
		after[i] = after[i].Clone()
	}
	return after
}

// RangeDelSize is what t adds to MetadataSize's bound on the range-deletion
// block: its keys and their varints at the most.
func RangeDelSize(t rangedel.Tombstone) uint64 {
	return uint64(len(t.Start)+len(t.End)) + 3*binary.MaxVarintLen64
}

// writeRangeDels writes the range-deletion block, if the table has
// tombstones, right after the data blocks, and makes the table format 2.
func (w *Writer) writeRangeDels(ft *footer) error {
	if len(w.rangeDels) == 0 {
		return nil
	}
	p := &w.props
	for i, t := range w.rangeDels {
		if p.NumEntries == 0 && i == 0 {
			p.SmallestSeqNum, p.LargestSeqNum = t.Seq, t.Seq
		}
		p.SmallestSeqNum = min(p.SmallestSeqNum, t.Seq)
		p.LargestSeqNum = max(p.LargestSeqNum, t.Seq)
	}
	h, err := w.writeBlock(rangedel.Encode(nil, w.rangeDels), true)
	if err != nil {
		return err
	}
	p.NumRangeDeletions = uint64(len(w.rangeDels))
	p.RangeDelOffset, p.RangeDelLength = h.offset, h.length
	ft.version = FormatVersion
	return nil
}

// loadRangeDels reads and checks the range-deletion block a format 2
// table's properties locate: it must sit between the data blocks and the
// filter (or index), hold exactly the counted tombstones, and decode
// (rangedel's R2). REQUIRES: r.props loaded.
func (r *Reader) loadRangeDels() error {
	p := r.props
	if (r.footer.version == FormatVersion) != (p.NumRangeDeletions > 0) {
		return base.CorruptionErrorf("sstable: %s: format %d with %d range deletions", r.name, r.footer.version, p.NumRangeDeletions)
	}
	if p.NumRangeDeletions == 0 {
		r.rangeDels = &rangedel.Set{}
		return nil
	}
	h := blockHandle{offset: p.RangeDelOffset, length: p.RangeDelLength}
	if h.length > maxBlockLen || h.end() != r.rangeFilterStart || h.offset != p.DataSize {
		return base.CorruptionErrorf("sstable: %s: range-deletion block handle (%d, %d) does not end where the range filter, filter or index starts", r.name, h.offset, h.length)
	}
	b, err := r.readRaw(h, metaBlock, nil)
	if err != nil {
		return err
	}
	ts, err := rangedel.Decode(b)
	if err != nil {
		return r.corrupt(h.offset, "range-deletion block", err)
	}
	if uint64(len(ts)) != p.NumRangeDeletions {
		return base.CorruptionErrorf("sstable: %s: range-deletion block holds %d tombstones, properties say %d", r.name, len(ts), p.NumRangeDeletions)
	}
	for _, t := range ts {
		if t.Seq < p.SmallestSeqNum || t.Seq > p.LargestSeqNum {
			return base.CorruptionErrorf("sstable: %s: range tombstone %v outside the table's seqnums %d..%d", r.name, t, p.SmallestSeqNum, p.LargestSeqNum)
		}
	}
	r.footer.rangeDel = h
	r.rangeDelsList = ts
	r.rangeDels = rangedel.NewSet(ts)
	r.memBytes += int64(len(b)) + r.rangeDels.Bytes()
	return nil
}

// RangeDels returns the table's range tombstones in rangedel.Compare
// order (none for a format 1 table). They are resident from Open on and
// must not be modified.
func (r *Reader) RangeDels() []rangedel.Tombstone { return r.rangeDelsList }

// RangeDelCover is the largest sequence number at or below seq of this
// table's range tombstones covering userKey, 0 if none: the table deletes
// every entry of userKey older than that (rangedel's R1). It reads
// nothing from the file.
func (r *Reader) RangeDelCover(userKey []byte, seq base.SeqNum) base.SeqNum {
	return r.rangeDels.Cover(userKey, seq)
}
