package rangedel

import (
	"bytes"
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
)

// Tombstone deletes the user keys in [Start, End) older than Seq (R1).
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Covers reports whether t deletes the entry key#seq (R1), ignoring
// whether a read sees t.
func (t Tombstone) Covers(key []byte, seq base.SeqNum) bool {
	return seq < t.Seq && bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0
}

// Clone returns a copy of t that owns its keys.
func (t Tombstone) Clone() Tombstone {
	return Tombstone{Start: bytes.Clone(t.Start), End: bytes.Clone(t.End), Seq: t.Seq}
}

// String formats t as [start, end)#seq with the keys quoted.
func (t Tombstone) String() string { return fmt.Sprintf("[%q, %q)#%d", t.Start, t.End, t.Seq) }

// Compare orders tombstones by Start ascending, then Seq descending (the
// order of internal keys, base's B1), then End ascending: the order of a
// range-deletion block (R2).
func Compare(a, b Tombstone) int {
	if c := bytes.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if a.Seq != b.Seq {
		if a.Seq > b.Seq {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.End, b.End)
}
