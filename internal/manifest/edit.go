package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sievekv/sievekv/filters"

	"github.com/sievekv/sievekv/internal/base"
)

// ErrCorruption is wrapped by every error Decode, Validate, Accumulate and
// Apply return: the MANIFEST is damaged or describes an impossible table set.
var ErrCorruption = errors.New("manifest: corruption")

// Field tags. Do not renumber: on disk. Fields are encoded in increasing tag
// order (M1), so a new field takes the next free number.
const (
	tagLogNumber      = 1 // uvarint
	tagNextFileNumber = 2 // uvarint
	tagLastSequence   = 3 // uvarint
	// Tag 4 was reserved for a compaction pointer (level, key) that no
	// writer ever produced; the picker keeps its round-robin pointers in
	// memory. Decode rejects it as an unknown tag; do not reuse the number.
	tagReserved4    = 4
	tagDeletedTable = 5 // uvarint level, uvarint file number
	tagNewTable     = 6 // uvarint level, then the TableMetadata fields (see Encode)
	// tagTombstoneTime dates the oldest tombstone of a table the same edit
	// adds: uvarint file number, uvarint Unix nanoseconds (1 .. 2^63-1),
	// so TombstoneMaxAge's clock survives a restart (deletes.go).
	tagTombstoneTime = 7
	tagMax           = tagTombstoneTime
)

var tagNames = [...]string{
	tagLogNumber:      "log number",
	tagNextFileNumber: "next file number",
	tagLastSequence:   "last sequence",
	tagDeletedTable:   "deleted table",
	tagNewTable:       "new table",
	tagTombstoneTime:  "tombstone time",
}

// DeletedTable names a table removed from a level.
type DeletedTable struct {
	Level   int
	FileNum uint64
}

// NewTable places a table in a level.
type NewTable struct {
	Level int
	Meta  *TableMetadata
}

// VersionEdit is one change to the table set: scalar fields that are set
// only when their Has flag is true, then tables removed and tables added.
// Deletions apply before additions, so an edit may move a table between
// levels by deleting and adding the same file number.
type VersionEdit struct {
	LogNumber         uint64 // WAL files numbered below this are obsolete
	HasLogNumber      bool
	NextFileNumber    uint64 // the next file number the engine will allocate
	HasNextFileNumber bool
	LastSequence      uint64 // the last sequence number assigned
	HasLastSequence   bool

	DeletedTables []DeletedTable
	NewTables     []NewTable
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruption, fmt.Sprintf(format, args...))
}

// Validate reports an edit that Decode would reject on structural grounds
// (M2). Encode does not validate: the engine calls Validate before it writes
// an edit, because an invalid edit in the MANIFEST makes the database
// unopenable.
func (e *VersionEdit) Validate() error {
	deleted := make(map[uint64]bool, len(e.DeletedTables))
	for _, d := range e.DeletedTables {
		if err := checkTableRef(deleted, "deleted", "deleted", d.Level, d.FileNum); err != nil {
			return err
		}
	}
	added := make(map[uint64]bool, len(e.NewTables))
	for _, n := range e.NewTables {
		m := n.Meta
		if m == nil {
			return corruptf("new table at level %d without metadata", n.Level)
		}
		if err := checkTableRef(added, "new", "added", n.Level, m.FileNum); err != nil {
			return err
		}
		if m.SmallestSeq > m.LargestSeq {
			return corruptf("table %d: smallest sequence %d > largest %d", m.FileNum, m.SmallestSeq, m.LargestSeq)
		}
		if _, ok := m.FilterType.TableCode(); !ok {
			// Encode has no byte for it: it would write code 0, which
			// Decode reads back as another filter (binary-fuse-8).
			return corruptf("table %d: filter %s has no table code", m.FileNum, m.FilterType)
		}
	}
	return nil
}

// checkTableRef reports a deleted or new table (side names which, and
// twice what the edit does to it) whose level is out of range, whose file
// number is 0, or that the edit already names on that side (seen, which it
// then marks).
func checkTableRef(seen map[uint64]bool, side, twice string, level int, fileNum uint64) error {
	if level < 0 || level >= NumLevels {
		return corruptf("%s table %d at level %d, want 0..%d", side, fileNum, level, NumLevels-1)
	}
	if fileNum == 0 {
		return corruptf("%s table with file number 0", side)
	}
	if seen[fileNum] {
		return corruptf("table %d %s twice", fileNum, twice)
	}
	seen[fileNum] = true
	return nil
}

// Encode returns the edit's encoding (docs/format.md, "VersionEdit"). Slices
// are encoded in the order given.
func (e *VersionEdit) Encode() []byte {
	var out []byte
	if e.HasLogNumber {
		out = binary.AppendUvarint(out, tagLogNumber)
		out = binary.AppendUvarint(out, e.LogNumber)
	}
	if e.HasNextFileNumber {
		out = binary.AppendUvarint(out, tagNextFileNumber)
		out = binary.AppendUvarint(out, e.NextFileNumber)
	}
	if e.HasLastSequence {
		out = binary.AppendUvarint(out, tagLastSequence)
		out = binary.AppendUvarint(out, e.LastSequence)
	}
	for _, d := range e.DeletedTables {
		out = binary.AppendUvarint(out, tagDeletedTable)
		out = binary.AppendUvarint(out, uint64(d.Level))
		out = binary.AppendUvarint(out, d.FileNum)
	}
	for _, n := range e.NewTables {
		out = binary.AppendUvarint(out, tagNewTable)
		out = binary.AppendUvarint(out, uint64(n.Level))
		m := n.Meta
		out = binary.AppendUvarint(out, m.FileNum)
		out = binary.AppendUvarint(out, m.Size)
		out = appendKey(out, m.Smallest)
		out = appendKey(out, m.Largest)
		out = binary.AppendUvarint(out, uint64(m.SmallestSeq))
		out = binary.AppendUvarint(out, uint64(m.LargestSeq))
		code, _ := m.FilterType.TableCode()
		out = append(out, code)
	}
	for _, n := range e.NewTables {
		if tt := n.Meta.TombstoneTime(); tt > 0 {
			out = binary.AppendUvarint(out, tagTombstoneTime)
			out = binary.AppendUvarint(out, n.Meta.FileNum)
			out = binary.AppendUvarint(out, uint64(tt))
		}
	}
	return out
}

func appendKey(out []byte, k base.InternalKey) []byte {
	out = binary.AppendUvarint(out, uint64(k.Size()))
	return k.Encode(out)
}

// decoder walks an encoding; off is for error messages.
type decoder struct {
	b   []byte
	off int
	tag uint64 // field being decoded, for error messages
	// lastDated is the index among the new tables of the one the last
	// tombstone time named (-1: none yet).
	lastDated int
}

func (d *decoder) errf(format string, args ...any) error {
	what := "tag"
	if d.tag != 0 && d.tag <= tagMax {
		what = fmt.Sprintf("field %q", tagNames[d.tag])
	}
	return corruptf("version edit: %s at byte %d: %s", what, d.off, fmt.Sprintf(format, args...))
}

// uvarint reads a minimal varint (M1: an overlong encoding, which Encode
// never writes, ends in a zero byte).
func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	switch {
	case n == 0:
		return 0, d.errf("truncated varint")
	case n < 0:
		return 0, d.errf("varint overflows 64 bits")
	case n > 1 && d.b[d.off+n-1] == 0:
		return 0, d.errf("non-minimal varint")
	}
	d.off += n
	return v, nil
}

func (d *decoder) level() (int, error) {
	v, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if v >= NumLevels {
		return 0, d.errf("level %d, want 0..%d", v, NumLevels-1)
	}
	return int(v), nil
}

// bytes reads a length-prefixed byte string and copies it, so the edit does
// not alias the caller's buffer. The length is checked against what remains
// before anything is allocated (M3).
func (d *decoder) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.off) {
		return nil, d.errf("length %d exceeds the %d bytes left", n, len(d.b)-d.off)
	}
	out := make([]byte, n)
	copy(out, d.b[d.off:])
	d.off += int(n)
	return out, nil
}

// Decode replaces e with the edit encoded in b, or returns an error wrapping
// ErrCorruption (and leaves e zeroed) if b is not exactly an encoding Encode
// produces of a valid edit (M1, M2). It never panics and allocates at most a
// small multiple of len(b) (M3).
func (e *VersionEdit) Decode(b []byte) error {
	*e = VersionEdit{}
	if err := e.decode(b); err != nil {
		*e = VersionEdit{}
		return err
	}
	return nil
}

func (e *VersionEdit) decode(b []byte) error {
	d := &decoder{b: b, lastDated: -1}
	var last uint64
	for d.off < len(b) {
		d.tag = 0
		tag, err := d.uvarint()
		if err != nil {
			return err
		}
		if tag == 0 || tag > tagMax {
			return d.errf("unknown tag %d", tag)
		}
		if tag < last || (tag == last && tag <= tagLastSequence) {
			return d.errf("tag %d after tag %d: fields out of order or repeated", tag, last)
		}
		last = tag
		d.tag = tag
		switch tag {
		case tagLogNumber:
			e.LogNumber, err = d.uvarint()
			e.HasLogNumber = true
		case tagNextFileNumber:
			e.NextFileNumber, err = d.uvarint()
			e.HasNextFileNumber = true
		case tagLastSequence:
			e.LastSequence, err = d.uvarint()
			e.HasLastSequence = true
		case tagReserved4:
			d.tag = 0
			return d.errf("unknown tag %d (reserved: compaction pointers were never written)", tag)
		case tagDeletedTable:
			var dt DeletedTable
			if dt.Level, err = d.level(); err == nil {
				dt.FileNum, err = d.uvarint()
			}
			e.DeletedTables = append(e.DeletedTables, dt)
		case tagNewTable:
			var nt NewTable
			nt, err = d.newTable()
			e.NewTables = append(e.NewTables, nt)
		case tagTombstoneTime:
			err = d.tombstoneTime(e.NewTables)
		}
		if err != nil {
			return err
		}
	}
	return e.Validate()
}

// tombstoneTime reads a tombstone time and records it on the table it
// names, which must be one of added (the edit's new tables) after the one
// the previous time named: Encode writes them in the order of the new
// tables, and any other order, a time for a table the edit does not add,
// a second time for one, or a time that is 0 or past int64 is corruption,
// so each edit has one encoding (M1).
func (d *decoder) tombstoneTime(added []NewTable) error {
	num, err := d.uvarint()
	if err != nil {
		return err
	}
	tt, err := d.uvarint()
	if err != nil {
		return err
	}
	if tt == 0 || tt > math.MaxInt64 {
		return d.errf("time %d of table %d, want 1..%d", tt, num, int64(math.MaxInt64))
	}
	// The search starts past the table the last time named, so decoding
	// an edit's times costs one pass over its new tables in all: a
	// MANIFEST's first edit adds every table of the DB, and a search from
	// the start for each time took seconds at Open for 50,000 dated
	// tables (and let a crafted record of a few MiB stall it longer).
	for i := d.lastDated + 1; i < len(added); i++ {
		if n := added[i]; n.Meta.FileNum == num {
			d.lastDated = i
			n.Meta.SetTombstoneTime(int64(tt))
			return nil
		}
	}
	for _, n := range added[:d.lastDated+1] { // only to name the error
		if n.Meta.FileNum == num {
			return d.errf("table %d dated twice or out of the new tables' order", num)
		}
	}
	return d.errf("table %d is not added by the edit", num)
}

// key reads a length-prefixed internal key (user key and trailer).
func (d *decoder) key() (base.InternalKey, error) {
	b, err := d.bytes()
	if err != nil {
		return base.InternalKey{}, err
	}
	k, ok := base.DecodeInternalKey(b)
	if !ok {
		return base.InternalKey{}, d.errf("key of %d bytes is shorter than the %d-byte trailer", len(b), base.TrailerLen)
	}
	return k, nil
}

func (d *decoder) newTable() (NewTable, error) {
	nt := NewTable{Meta: &TableMetadata{}}
	var err error
	m := nt.Meta
	if nt.Level, err = d.level(); err != nil {
		return nt, err
	}
	for _, p := range []*uint64{&m.FileNum, &m.Size} {
		if *p, err = d.uvarint(); err != nil {
			return nt, err
		}
	}
	if m.Smallest, err = d.key(); err != nil {
		return nt, err
	}
	if m.Largest, err = d.key(); err != nil {
		return nt, err
	}
	for _, p := range []*base.SeqNum{&m.SmallestSeq, &m.LargestSeq} {
		var v uint64
		if v, err = d.uvarint(); err != nil {
			return nt, err
		}
		*p = base.SeqNum(v)
	}
	if d.off >= len(d.b) {
		return nt, d.errf("truncated before the filter type")
	}
	var known bool
	if m.FilterType, known = filters.TypeFromTableCode(d.b[d.off]); !known {
		// A table whose filter this build cannot name is one it cannot
		// read either (sstable's T9 compares the two).
		return nt, d.errf("unknown filter table code %d", d.b[d.off])
	}
	d.off++
	return nt, nil
}
