package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/testutil/golden"
)

func randKey(rng *rand.Rand) []byte {
	k := make([]byte, rng.IntN(24))
	for i := range k {
		k[i] = byte(rng.Uint32())
	}
	return k
}

func randInternalKey(rng *rand.Rand) base.InternalKey {
	return base.InternalKey{UserKey: randKey(rng), Trailer: rng.Uint64()}
}

// randUint mixes small and huge values so every varint length is exercised.
func randUint(rng *rand.Rand) uint64 {
	return rng.Uint64() >> rng.UintN(64)
}

// randEdit returns a valid edit with every kind of field, possibly none.
func randEdit(rng *rand.Rand) *VersionEdit {
	e := &VersionEdit{}
	if rng.IntN(2) == 0 {
		e.LogNumber, e.HasLogNumber = randUint(rng), true
	}
	if rng.IntN(2) == 0 {
		e.NextFileNumber, e.HasNextFileNumber = randUint(rng), true
	}
	if rng.IntN(2) == 0 {
		e.LastSequence, e.HasLastSequence = randUint(rng), true
	}
	used := map[uint64]bool{}
	fileNum := func() uint64 {
		for {
			if n := randUint(rng); n != 0 && !used[n] {
				used[n] = true
				return n
			}
		}
	}
	for i := rng.IntN(5); i > 0; i-- {
		e.DeletedTables = append(e.DeletedTables, DeletedTable{Level: rng.IntN(NumLevels), FileNum: fileNum()})
	}
	used = map[uint64]bool{} // a number may be both deleted and added (a move)
	for i := rng.IntN(5); i > 0; i-- {
		lo, hi := randUint(rng), randUint(rng)
		lo, hi = min(lo, hi), max(lo, hi)
		e.NewTables = append(e.NewTables, NewTable{Level: rng.IntN(NumLevels), Meta: &TableMetadata{
			FileNum: fileNum(), Size: randUint(rng), Smallest: randInternalKey(rng), Largest: randInternalKey(rng),
			SmallestSeq: base.SeqNum(lo), LargestSeq: base.SeqNum(hi), FilterType: tableType(uint8(rng.IntN(7))),
		}})
		if rng.IntN(2) == 0 { // a table with tombstones, dated
			e.NewTables[len(e.NewTables)-1].Meta.SetTombstoneTime(int64(max(1, randUint(rng)>>1)))
		}
	}
	return e
}

func fieldCount(e *VersionEdit) int {
	n := len(e.DeletedTables) + len(e.NewTables)
	for _, nt := range e.NewTables {
		if nt.Meta.TombstoneTime() != 0 {
			n++
		}
	}
	for _, has := range []bool{e.HasLogNumber, e.HasNextFileNumber, e.HasLastSequence} {
		if has {
			n++
		}
	}
	return n
}

// TestRoundTripProperty: Decode(Encode(e)) == e and the encoding is
// canonical (M1) for random valid edits.
func TestRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 3000; i++ {
		e := randEdit(rng)
		if err := e.Validate(); err != nil {
			t.Fatalf("generator made an invalid edit: %v", err)
		}
		b := e.Encode()
		var got VersionEdit
		if err := got.Decode(b); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		if !reflect.DeepEqual(&got, e) {
			t.Fatalf("edit %d: round trip changed it:\n got %+v\nwant %+v", i, got, *e)
		}
		if !bytes.Equal(got.Encode(), b) {
			t.Fatalf("edit %d: re-encoding differs", i)
		}
	}
}

// TestTruncateEveryOffset: a cut is accepted only at a field boundary (the
// wal record CRC is what catches those), and then decodes to a prefix of
// the fields; every other cut is an ErrCorruption.
func TestTruncateEveryOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 200; i++ {
		e := randEdit(rng)
		b := e.Encode()
		accepted := 0
		for cut := 0; cut <= len(b); cut++ {
			var got VersionEdit
			err := got.Decode(b[:cut])
			if err != nil {
				if !errors.Is(err, ErrCorruption) {
					t.Fatalf("cut %d: error %v does not wrap ErrCorruption", cut, err)
				}
				if !reflect.DeepEqual(got, VersionEdit{}) {
					t.Fatalf("cut %d: failed Decode left fields set", cut)
				}
				continue
			}
			accepted++
			if !bytes.Equal(got.Encode(), b[:cut]) {
				t.Fatalf("cut %d accepted but is not canonical", cut)
			}
		}
		if want := fieldCount(e) + 1; accepted != want {
			t.Fatalf("edit %d: %d cuts accepted, want the %d field boundaries", i, accepted, want)
		}
	}
}

// TestFlipEveryByte: any byte change either errors or yields a valid edit
// whose canonical encoding is exactly the changed bytes (M1, M2) — never a
// structurally invalid edit, never a panic.
func TestFlipEveryByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rejected := 0
	for i := 0; i < 200; i++ {
		b := randEdit(rng).Encode()
		for pos := range b {
			for _, x := range []byte{0x01, 0x80, 0xff, byte(rng.Uint32()) | 1} {
				b[pos] ^= x
				var got VersionEdit
				err := got.Decode(b)
				if err == nil {
					if verr := got.Validate(); verr != nil {
						t.Fatalf("accepted an invalid edit: %v", verr)
					}
					if !bytes.Equal(got.Encode(), b) {
						t.Fatalf("accepted non-canonical bytes %x", b)
					}
				} else {
					rejected++
					if !errors.Is(err, ErrCorruption) {
						t.Fatalf("error %v does not wrap ErrCorruption", err)
					}
				}
				b[pos] ^= x
			}
		}
	}
	if rejected == 0 {
		t.Fatal("no flip was rejected: the validation is not running")
	}
}

func uv(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.AppendUvarint(b, x)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeRejects(t *testing.T) {
	trailer := make([]byte, base.TrailerLen)
	table := func(level, fileNum, lo, hi uint64) []byte {
		return cat(uv(tagNewTable, level, fileNum, 100, 9), []byte("a"), trailer, uv(9), []byte("b"), trailer, uv(lo, hi), []byte{2})
	}
	cases := []struct {
		name string
		b    []byte
	}{
		{"unknown tag", uv(tagMax+1, 1)},
		{"tag zero", uv(0)},
		{"huge tag", uv(1 << 40)},
		{"repeated scalar", uv(tagLogNumber, 1, tagLogNumber, 2)},
		{"out of order", uv(tagLastSequence, 1, tagLogNumber, 2)},
		{"new table before deletion", cat(table(1, 5, 1, 2), uv(tagDeletedTable, 1, 4))},
		{"non-minimal varint", []byte{tagLogNumber, 0x85, 0x00}},
		{"varint overflow", cat(uv(tagLogNumber), bytes.Repeat([]byte{0xff}, 10), []byte{0x01})},
		{"truncated varint", []byte{tagLogNumber, 0x80}},
		{"level 7", uv(tagDeletedTable, 7, 4)},
		{"level huge", uv(tagDeletedTable, 1<<62, 4)},
		{"duplicate deletion", uv(tagDeletedTable, 1, 4, tagDeletedTable, 1, 4)},
		{"deletion twice at two levels", uv(tagDeletedTable, 1, 4, tagDeletedTable, 2, 4)},
		{"deleted file 0", uv(tagDeletedTable, 1, 0)},
		{"duplicate addition", cat(table(1, 5, 1, 2), table(2, 5, 1, 2))},
		{"added file 0", table(1, 0, 1, 2)},
		{"seqs reversed", table(1, 5, 3, 2)},
		{"new table level 9", table(9, 5, 1, 2)},
		{"tag 4, never written", cat(uv(tagReserved4, 3, 1), []byte("k"))},
		{"key longer than input", cat(uv(tagNewTable, 1, 5, 100, 1<<60), []byte("k"))},
		{"key length max", cat(uv(tagNewTable, 1, 5, 100, ^uint64(0)))},
		{"key shorter than a trailer", cat(uv(tagNewTable, 1, 5, 100, 7), trailer[:7], uv(9), []byte("b"), trailer, uv(1, 2), []byte{2})},
		{"missing filter type", table(1, 5, 1, 2)[:len(table(1, 5, 1, 2))-1]},
		{"tombstone time of a table not added", cat(table(1, 5, 1, 2), uv(tagTombstoneTime, 6, 1000))},
		{"tombstone time of a deleted table", cat(uv(tagDeletedTable, 1, 6), table(1, 5, 1, 2), uv(tagTombstoneTime, 6, 1000))},
		{"tombstone time 0", cat(table(1, 5, 1, 2), uv(tagTombstoneTime, 5, 0))},
		{"tombstone time past int64", cat(table(1, 5, 1, 2), uv(tagTombstoneTime, 5, 1<<63))},
		{"table dated twice", cat(table(1, 5, 1, 2), uv(tagTombstoneTime, 5, 1000, tagTombstoneTime, 5, 1000))},
		{"tables dated out of order", cat(table(1, 5, 1, 2), table(1, 6, 1, 2), uv(tagTombstoneTime, 6, 1000, tagTombstoneTime, 5, 1000))},
		{"tombstone time before its table", cat(uv(tagTombstoneTime, 5, 1000), table(1, 5, 1, 2))},
		{"truncated tombstone time", cat(table(1, 5, 1, 2), uv(tagTombstoneTime, 5))},
	}
	for _, c := range cases {
		var e VersionEdit
		err := e.Decode(c.b)
		if !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: Decode(%x) = %v, want ErrCorruption", c.name, c.b, err)
		}
	}
	// The valid pieces the cases are built from do decode.
	var e VersionEdit
	if err := e.Decode(cat(uv(tagDeletedTable, 1, 4), table(1, 5, 1, 2), table(2, 4, 0, 0))); err != nil {
		t.Fatalf("valid edit with a move rejected: %v", err)
	}
	if err := e.Decode(cat(table(1, 5, 1, 2), table(1, 6, 1, 2), uv(tagTombstoneTime, 5, 1000, tagTombstoneTime, 6, 1<<63-1))); err != nil {
		t.Fatalf("valid edit with tombstone times rejected: %v", err)
	}
	if got := e.NewTables[1].Meta.TombstoneTime(); got != 1<<63-1 {
		t.Fatalf("tombstone time decoded as %d", got)
	}
}

// TestDecodeBoundedAllocation: a length field claiming far more than the
// input holds must not be allocated (M3).
func TestDecodeBoundedAllocation(t *testing.T) {
	b := cat(uv(tagNewTable, 1, 5, 100, 1<<40), bytes.Repeat([]byte("k"), 100))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		var e VersionEdit
		if e.Decode(b) == nil {
			t.Fatal("accepted")
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("%d bytes allocated to reject a 100-byte input 10 times", n)
	}
}

// TestGoldenEncoding pins the format (docs/format.md, "VersionEdit", worked
// example).
func TestGoldenEncoding(t *testing.T) {
	e := &VersionEdit{
		LogNumber: 4, HasLogNumber: true,
		NextFileNumber: 300, HasNextFileNumber: true,
		LastSequence: 1000, HasLastSequence: true,
		DeletedTables: []DeletedTable{{Level: 0, FileNum: 7}},
		NewTables: []NewTable{{Level: 1, Meta: &TableMetadata{
			FileNum: 9, Size: 4096,
			Smallest:    base.MakeInternalKey([]byte("apple"), 999, base.KindSet),
			Largest:     base.MakeInternalKey([]byte("pear"), 10, base.KindDelete),
			SmallestSeq: 10, LargestSeq: 999, FilterType: tableType(5),
		}}},
	}
	// Fields in order: log number 4, next file 300, last sequence 1000,
	// deleted L0 table 7, new L1 table 9 (size, bounds "apple"#999,SET and
	// "pear"#10,DEL, seqnums, filter table code 5); docs/format.md,
	// "VersionEdit", walks through these bytes.
	golden.Bytes(t, "version-edit", e.Encode())

	// The same edit with its new table dated (tag 7): its oldest
	// tombstone written at Unix nanosecond 1,764,979,200,000,000,000
	// (2025-12-06 00:00 UTC). The bytes above are unchanged: a table
	// without a time has no tag 7.
	e.NewTables[0].Meta.SetTombstoneTime(1764979200000000000)
	golden.Bytes(t, "version-edit-tombstone-time", e.Encode())
}

func ExampleVersionEdit_Decode() {
	e := &VersionEdit{NextFileNumber: 12, HasNextFileNumber: true,
		DeletedTables: []DeletedTable{{Level: 0, FileNum: 3}, {Level: 0, FileNum: 3}}}
	var got VersionEdit
	fmt.Println(got.Decode(e.Encode()))
	// Output: manifest: corruption: table 3 deleted twice
}

// tableType is the filter whose MANIFEST table code is code.
func tableType(code uint8) filters.Type {
	t, ok := filters.TypeFromTableCode(code)
	if !ok {
		panic("no filter has table code " + string(rune('0'+code)))
	}
	return t
}

// TestValidateRejectsFilterWithoutTableCode: Encode has no byte for a
// filter no table may carry (or the zero Type) and wrote table code 0,
// which Decode reads back as binary-fuse-8: the MANIFEST then named the
// wrong filter for the table. Validate, which the engine calls before it
// writes an edit, must refuse such an edit.
func TestValidateRejectsFilterWithoutTableCode(t *testing.T) {
	for _, ft := range []filters.Type{0, filters.TypeCuckoo, filters.TypeRange} {
		e := &VersionEdit{NewTables: []NewTable{{Level: 1, Meta: &TableMetadata{
			FileNum: 9, Size: 1,
			Smallest:    base.MakeInternalKey([]byte("a"), 1, base.KindSet),
			Largest:     base.MakeInternalKey([]byte("b"), 1, base.KindSet),
			SmallestSeq: 1, LargestSeq: 1, FilterType: ft,
		}}}}
		if err := e.Validate(); !errors.Is(err, ErrCorruption) {
			var back VersionEdit
			derr := back.Decode(e.Encode())
			t.Errorf("filter %s: Validate = %v; the encoding decodes (%v) as filter %s", ft, err, derr, back.NewTables[0].Meta.FilterType)
		}
	}
}

// TestDecodeManyTombstoneTimesLinear: a MANIFEST's first edit adds every
// table of the DB, each with its tombstone time, and Open decodes it.
// Matching each time to its table must not search the new tables from the
// start every time: for 100,000 dated tables (a 4 MiB record) that took
// about 15 s, against milliseconds for one pass.
func TestDecodeManyTombstoneTimesLinear(t *testing.T) {
	const n = 100000
	e := &VersionEdit{}
	for i := range n {
		m := &TableMetadata{
			FileNum: uint64(i + 1), Size: 100,
			Smallest:    base.MakeInternalKey([]byte("a"), 1, base.KindSet),
			Largest:     base.MakeInternalKey([]byte("b"), 1, base.KindSet),
			SmallestSeq: 1, LargestSeq: 1,
		}
		m.SetTombstoneTime(int64(1e18 + i))
		e.NewTables = append(e.NewTables, NewTable{Level: NumLevels - 1, Meta: m})
	}
	b := e.Encode()
	start := time.Now()
	var got VersionEdit
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("decoding %d dated tables (%d bytes) took %v", n, len(b), d)
	}
	if tt := got.NewTables[n-1].Meta.TombstoneTime(); tt != 1e18+n-1 {
		t.Fatalf("last table dated %d", tt)
	}
}
