package rangedel

import (
	"encoding/binary"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
)

// Encode appends the range-deletion block contents for ts to dst
// (docs/format.md, "Range-deletion block"): a uvarint count, then per
// tombstone in Compare order a uvarint start length, the start key, a
// uvarint end length, the end key and a uvarint sequence number. ts is
// sorted in place. Every tombstone must have Start < End and a Seq in
// 1..base.SeqNumMax; the DB checks that before a tombstone is written.
func Encode(dst []byte, ts []Tombstone) []byte {
	slices.SortFunc(ts, Compare)
	dst = binary.AppendUvarint(dst, uint64(len(ts)))
	for _, t := range ts {
		dst = binary.AppendUvarint(dst, uint64(len(t.Start)))
		dst = append(dst, t.Start...)
		dst = binary.AppendUvarint(dst, uint64(len(t.End)))
		dst = append(dst, t.End...)
		dst = binary.AppendUvarint(dst, uint64(t.Seq))
	}
	return dst
}

// Decode parses range-deletion block contents, treating them as untrusted:
// every length is checked against the bytes left, only minimal varints
// are accepted, and a block that breaks R2 or has trailing bytes is an
// error wrapping base.ErrCorruption. The tombstones alias b.
func Decode(b []byte) ([]Tombstone, error) {
	d := decoder{b: b}
	n, err := d.uvarint("count")
	if err != nil {
		return nil, err
	}
	// Each tombstone takes at least 4 bytes (two lengths, one key byte in
	// End, a seqnum; Start may be empty), so a count above that bound is
	// corrupt and must not size an allocation.
	if n > uint64(len(d.b))/4 {
		return nil, base.CorruptionErrorf("rangedel: count %d exceeds what %d bytes can hold", n, len(d.b))
	}
	ts := make([]Tombstone, 0, n)
	for i := uint64(0); i < n; i++ {
		var t Tombstone
		if t.Start, err = d.bytes("start", i); err != nil {
			return nil, err
		}
		if t.End, err = d.bytes("end", i); err != nil {
			return nil, err
		}
		seq, err := d.uvarint("sequence number")
		if err != nil {
			return nil, err
		}
		if seq == 0 || seq > uint64(base.SeqNumMax) {
			return nil, base.CorruptionErrorf("rangedel: tombstone %d: sequence number %d outside 1..%d", i, seq, base.SeqNumMax)
		}
		t.Seq = base.SeqNum(seq)
		if string(t.Start) >= string(t.End) {
			return nil, base.CorruptionErrorf("rangedel: tombstone %d: empty range %v", i, t)
		}
		if i > 0 && Compare(ts[i-1], t) >= 0 {
			return nil, base.CorruptionErrorf("rangedel: tombstone %d: %v does not sort after %v", i, t, ts[i-1])
		}
		ts = append(ts, t)
	}
	if len(d.b) != 0 {
		return nil, base.CorruptionErrorf("rangedel: %d trailing bytes after %d tombstones", len(d.b), n)
	}
	return ts, nil
}

type decoder struct{ b []byte }

func (d *decoder) uvarint(what string) (uint64, error) {
	v, w := binary.Uvarint(d.b)
	if w <= 0 || w != len(binary.AppendUvarint(nil, v)) {
		return 0, base.CorruptionErrorf("rangedel: bad %s varint", what)
	}
	d.b = d.b[w:]
	return v, nil
}

func (d *decoder) bytes(what string, i uint64) ([]byte, error) {
	n, err := d.uvarint(what + " length")
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)) {
		return nil, base.CorruptionErrorf("rangedel: tombstone %d: %s length %d exceeds the %d bytes left", i, what, n, len(d.b))
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out, nil
}
