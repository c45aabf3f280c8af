package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// nopSyncer counts syncs; with it a Writer over a bytes.Buffer advances its
// synced mark as a real file would.
type nopSyncer struct{ n int }

func (s *nopSyncer) Sync() error { s.n++; return nil }

// written is a log built by writeLog together with what it should read as.
type written struct {
	data   []byte
	recs   [][]byte
	starts []int64 // offset of each record's first chunk
	ends   []int64 // Size() after each record
}

// writeLog writes recs to a fresh log; with syncEach it syncs after every
// record, as the engine does for kv.Sync writes.
func writeLog(t testing.TB, logNum uint64, recs [][]byte, syncEach bool) written {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, &nopSyncer{}, logNum)
	out := written{recs: recs}
	for i, r := range recs {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		out.starts = append(out.starts, off)
		out.ends = append(out.ends, w.Size())
		if syncEach {
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != w.Size() {
		t.Fatalf("buffer holds %d bytes, Size says %d", buf.Len(), w.Size())
	}
	out.data = buf.Bytes()
	return out
}

// readAll returns every record (copied) and the error that ended the log.
func readAll(data []byte, logNum uint64) ([][]byte, error) {
	r := NewReader(bytes.NewReader(data), logNum)
	var out [][]byte
	for {
		rec, err := r.Next()
		if err != nil {
			if _, err2 := r.Next(); err2 != err { // errors are sticky
				return out, fmt.Errorf("second Next returned %v after %v", err2, err)
			}
			return out, err
		}
		out = append(out, append([]byte(nil), rec...))
	}
}

func randRecord(rng *rand.Rand, n int) []byte {
	p := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], rng.Uint64())
	}
	return p[:n:n]
}

// randRecords is count random records, each of a random length below
// maxLen.
func randRecords(rng *rand.Rand, count, maxLen int) [][]byte {
	recs := make([][]byte, count)
	for i := range recs {
		recs[i] = randRecord(rng, rng.IntN(maxLen))
	}
	return recs
}

// checkPrefix fails unless got is exactly want[:len(got)] (W5).
func checkPrefix(t *testing.T, got, want [][]byte, ctx string) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("%s: read %d records, only %d written", ctx, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: record %d differs from what was written (len %d vs %d)", ctx, i, len(got[i]), len(want[i]))
		}
	}
}

// edgeSizes are record sizes at the framing boundaries.
var edgeSizes = []int{
	0, 1, MaxChunkPayload - 1, MaxChunkPayload, MaxChunkPayload + 1,
	BlockSize - 1, BlockSize, BlockSize + 1, 2 * MaxChunkPayload, 3*BlockSize + 7, 10 * BlockSize,
}

func TestRoundTripEdgeSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs [][]byte
	// Each edge size at several starting positions within a block, including
	// ones that leave a tail of exactly HeaderSize and HeaderSize-1.
	for _, n := range edgeSizes {
		recs = append(recs, randRecord(rng, n))
		recs = append(recs, randRecord(rng, rng.IntN(100)))
	}
	recs = append(recs, randRecord(rng, BlockSize-3*HeaderSize)) // leaves room for one empty chunk
	recs = append(recs, nil, nil, randRecord(rng, 5))
	for _, sync := range []bool{false, true} {
		lg := writeLog(t, 7, recs, sync)
		got, err := readAll(lg.data, 7)
		if err != io.EOF {
			t.Fatalf("sync=%v: log ended with %v, want io.EOF", sync, err)
		}
		if len(got) != len(recs) {
			t.Fatalf("sync=%v: read %d records, wrote %d", sync, len(got), len(recs))
		}
		checkPrefix(t, got, recs, "edge sizes")
	}
}

func TestRoundTripRandom(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		var recs [][]byte
		for i := rng.IntN(200); i > 0; i-- {
			var n int
			switch rng.IntN(4) {
			case 0:
				n = rng.IntN(20)
			case 1:
				n = rng.IntN(2000)
			case 2:
				n = rng.IntN(3 * BlockSize)
			default:
				n = edgeSizes[rng.IntN(len(edgeSizes))]
			}
			recs = append(recs, randRecord(rng, n))
		}
		lg := writeLog(t, seed, recs, rng.IntN(2) == 0)
		// Offsets: each record starts at or after the previous end, and
		// only padding (less than HeaderSize) separates them (W1).
		var prev int64
		for i := range recs {
			if gap := lg.starts[i] - prev; gap < 0 || gap >= HeaderSize {
				t.Fatalf("seed %d: record %d starts %d bytes after the previous end", seed, i, gap)
			}
			prev = lg.ends[i]
		}
		got, err := readAll(lg.data, seed)
		if err != io.EOF || len(got) != len(recs) {
			t.Fatalf("seed %d: read %d of %d records, ended with %v", seed, len(got), len(recs), err)
		}
		checkPrefix(t, got, recs, fmt.Sprintf("seed %d", seed))
	}
}

func TestEmptyLog(t *testing.T) {
	if got, err := readAll(nil, 1); err != io.EOF || len(got) != 0 {
		t.Fatalf("empty input: %d records, %v", len(got), err)
	}
	lg := writeLog(t, 1, nil, true)
	if len(lg.data) != 0 {
		t.Fatalf("a log with no records is %d bytes", len(lg.data))
	}
}

// smallLog spans three blocks: small and empty records, one record cut
// FIRST/MIDDLE/LAST, and a record that leaves a block tail of padding.
func smallLog(t *testing.T, syncEach bool) written {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{10, 0, 300, 1000, 7, BlockSize + 2000, 50, 0, 1}
	// Size the next record so that HeaderSize-5 bytes of padding follow it.
	var recs [][]byte
	for _, n := range sizes {
		recs = append(recs, randRecord(rng, n))
	}
	end := writeLog(t, 42, recs, syncEach).ends[len(recs)-1]
	left := BlockSize - int(end%BlockSize)
	recs = append(recs, randRecord(rng, left-HeaderSize-(HeaderSize-5)), randRecord(rng, 123), nil)
	lg := writeLog(t, 42, recs, syncEach)
	if len(lg.data) < 2*BlockSize || lg.starts[len(recs)-2]%BlockSize != 0 {
		t.Fatalf("smallLog layout drifted: %d bytes, padded record at %d", len(lg.data), lg.starts[len(recs)-2])
	}
	return lg
}

// interesting returns the byte positions of lg worth damaging one by one:
// every byte near a block boundary and of every chunk header, and a sample
// of payload bytes (every byte would cost seconds under -race for little).
func interesting(lg written) []int {
	var out []int
	hdr := map[int]bool{}
	for off := 0; off < len(lg.data); {
		if BlockSize-off%BlockSize < HeaderSize {
			off += BlockSize - off%BlockSize
			continue
		}
		for i := 0; i < HeaderSize+2; i++ {
			hdr[off+i] = true
		}
		off += HeaderSize + decodeHeader(lg.data[off:]).length
	}
	for pos := range lg.data {
		if b := pos % BlockSize; hdr[pos] || b < 40 || b > BlockSize-40 || pos%53 == 0 {
			out = append(out, pos)
		}
	}
	return out
}

// TestTruncateEveryOffset cuts a log at every byte: the reader must return
// exactly the records that end before the cut, then io.EOF if the cut falls
// between records and ErrTornTail at the last record end otherwise.
func TestTruncateEveryOffset(t *testing.T) {
	lg := smallLog(t, true)
	cuts := make([]int, 0, len(lg.data)+1)
	for cut := 0; cut <= len(lg.data); cut++ {
		cuts = append(cuts, cut)
	}
	if raceEnabled {
		cuts = append(interesting(lg), len(lg.data))
	}
	for _, cut := range cuts {
		got, err := readAll(lg.data[:cut], 42)
		ctx := fmt.Sprintf("cut at %d", cut)
		checkPrefix(t, got, lg.recs, ctx)
		k := 0
		for k < len(lg.ends) && lg.ends[k] <= int64(cut) {
			k++
		}
		if len(got) != k {
			t.Fatalf("%s: read %d records, %d end before the cut", ctx, len(got), k)
		}
		clean := k == len(lg.recs) || int64(cut) <= lg.starts[k]
		if clean {
			if err != io.EOF {
				t.Fatalf("%s: cut between records, got %v, want io.EOF", ctx, err)
			}
			continue
		}
		var we *Error
		if !errors.Is(err, ErrTornTail) || !errors.As(err, &we) {
			t.Fatalf("%s: got %v, want ErrTornTail", ctx, err)
		}
		wantOff := int64(0)
		if k > 0 {
			wantOff = lg.ends[k-1]
		}
		if we.Offset != wantOff || we.BadOffset < we.Offset {
			t.Fatalf("%s: torn tail at %d (bad %d), want truncation at %d", ctx, we.Offset, we.BadOffset, wantOff)
		}
		// Truncating where the error says leaves a clean log (what recovery does).
		again, err := readAll(lg.data[:we.Offset], 42)
		if err != io.EOF || len(again) != k {
			t.Fatalf("%s: after truncating to %d: %d records, %v", ctx, we.Offset, len(again), err)
		}
	}
}

// TestFlipEveryByte flips each byte of a synced log. Damage to bytes that a
// later chunk proves synced must be ErrCorruption; damage after the last
// such proof is a torn tail; no flip ever yields a wrong record.
func TestFlipEveryByte(t *testing.T) {
	for _, syncEach := range []bool{true, false} {
		lg := smallLog(t, syncEach)
		n := len(lg.recs)
		// The last record's chunks carry synced mark ends[n-2]: damage
		// before it is provably synced.
		proofLimit := lg.ends[n-2]
		if !syncEach {
			proofLimit = 0
		}
		data := append([]byte(nil), lg.data...)
		for _, pos := range interesting(lg) {
			data[pos] ^= 1 << (pos % 8)
			got, err := readAll(data, 42)
			data[pos] ^= 1 << (pos % 8)
			ctx := fmt.Sprintf("sync=%v flip at %d", syncEach, pos)
			checkPrefix(t, got, lg.recs, ctx)
			k := 0 // index of the record whose bytes (or leading padding) hold pos
			for lg.ends[k] <= int64(pos) {
				k++
			}
			if len(got) != k {
				t.Fatalf("%s: read %d records, want the %d before the damage", ctx, len(got), k)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("%s: got %v, want a *wal.Error", ctx, err)
			}
			if int64(pos) < proofLimit {
				if !errors.Is(err, ErrCorruption) || we.Offset > int64(pos) {
					t.Fatalf("%s: got %v, want ErrCorruption at or before %d", ctx, err, pos)
				}
			} else if !errors.Is(err, ErrTornTail) {
				t.Fatalf("%s: got %v, want ErrTornTail (no later proof of sync)", ctx, err)
			}
			if errors.Is(err, ErrCorruption) && errors.Is(err, ErrTornTail) {
				t.Fatalf("%s: error is both corruption and torn tail", ctx)
			}
		}
	}
}

// TestRecycledFile writes log 9 over the start of a longer log 8, as an
// engine reusing a file would: log 9 reads back cleanly, the leftover chunks
// of log 8 are never returned (W3), and a torn log-9 tail over them is a
// torn tail, not corruption.
func TestRecycledFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var old, cur [][]byte
	for i := 0; i < 40; i++ {
		old = append(old, randRecord(rng, rng.IntN(3000)))
	}
	for i := 0; i < 10; i++ {
		cur = append(cur, randRecord(rng, rng.IntN(3000)))
	}
	o := writeLog(t, 8, old, true)
	c := writeLog(t, 9, cur, true)
	file := append([]byte(nil), o.data...)
	copy(file, c.data)
	// The new log ends inside an old chunk, so its end looks like garbage:
	// a torn tail at the last record (truncating there is harmless), or a
	// clean end if it happens to fall on an old chunk boundary.
	got, err := readAll(file, 9)
	var we *Error
	if len(got) != len(cur) || (err != io.EOF && !(errors.As(err, &we) && errors.Is(err, ErrTornTail) && we.Offset == c.ends[len(cur)-1])) {
		t.Fatalf("recycled log: %d of %d records, %v", len(got), len(cur), err)
	}
	checkPrefix(t, got, cur, "recycled")

	// Tear the last record of log 9: its bytes are garbage over log 8's.
	last := c.starts[len(cur)-1]
	for i := last + 5; i < c.ends[len(cur)-1]; i++ {
		file[i] = 0xee
	}
	got, err = readAll(file, 9)
	if !errors.Is(err, ErrTornTail) || !errors.As(err, &we) || we.Offset != last {
		t.Fatalf("torn recycled tail: got %v, want ErrTornTail at %d", err, last)
	}
	checkPrefix(t, got, cur, "torn recycled")
	if len(got) != len(cur)-1 {
		t.Fatalf("torn recycled tail: %d records, want %d", len(got), len(cur)-1)
	}
}

// TestZeroTail checks W6: zeros after the last record, as a preallocated
// mapped log leaves them, are its clean end; all records are returned.
func TestZeroTail(t *testing.T) {
	lg := smallLog(t, true)
	for _, tail := range []int{1, HeaderSize - 1, HeaderSize, BlockSize, 3 * BlockSize} {
		data := append(append([]byte(nil), lg.data...), make([]byte, tail)...)
		got, err := readAll(data, 42)
		if err != io.EOF {
			t.Fatalf("zero tail of %d bytes: got %v, want io.EOF", tail, err)
		}
		if len(got) != len(lg.recs) {
			t.Fatalf("zero tail of %d bytes: %d of %d records", tail, len(got), len(lg.recs))
		}
		checkPrefix(t, got, lg.recs, "zero tail")
	}
}

// TestZeroTailStillFindsDamage checks that W6 only covers zeros that run to
// the end: zeros followed by anything else, or zeros inside a record, are
// still a torn tail or corruption.
func TestZeroTailStillFindsDamage(t *testing.T) {
	lg := smallLog(t, true)
	var we *Error

	// A non-zero byte far into the zeros: not a clean end.
	data := append(append([]byte(nil), lg.data...), make([]byte, 2*BlockSize)...)
	data[len(data)-7] = 1
	if _, err := readAll(data, 42); !errors.Is(err, ErrTornTail) || !errors.As(err, &we) || we.Offset != int64(len(lg.data)) {
		t.Fatalf("zeros then garbage: got %v, want ErrTornTail at %d", err, len(lg.data))
	}

	// A synced record zeroed out while a later chunk proves it was synced:
	// corruption, zeros or not.
	first := lg.starts[0]
	data = append([]byte(nil), lg.data...)
	clear(data[first : first+HeaderSize])
	if _, err := readAll(data, 42); !errors.Is(err, ErrCorruption) {
		t.Fatalf("zeroed synced record: got %v, want ErrCorruption", err)
	}

	// A record cut off in the middle by zeros: torn, never a clean end.
	var buf bytes.Buffer
	w := NewWriter(&buf, nil, 42)
	if _, err := w.WriteRecord(bytes.Repeat([]byte{7}, 2*BlockSize)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data = buf.Bytes()
	clear(data[BlockSize+5:])
	data = append(data, make([]byte, BlockSize)...)
	if _, err := readAll(data, 42); !errors.Is(err, ErrTornTail) {
		t.Fatalf("record cut by zeros: got %v, want ErrTornTail", err)
	}
}

// TestMissingMiddleBlockIsCorruption drops a whole block from the middle of
// a synced log: the chunks after it prove the lost bytes had been synced.
func TestMissingMiddleBlockIsCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var recs [][]byte
	for i := 0; i < 300; i++ {
		recs = append(recs, randRecord(rng, 500))
	}
	lg := writeLog(t, 3, recs, true)
	data := append(append([]byte(nil), lg.data[:BlockSize]...), lg.data[2*BlockSize:]...)
	got, err := readAll(data, 3)
	checkPrefix(t, got, recs, "missing block")
	if !errors.Is(err, ErrCorruption) {
		t.Fatalf("missing middle block: got %v, want ErrCorruption", err)
	}
}

type failWriter struct {
	n   int // writes allowed before failing
	err error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	f.n--
	return len(p), nil
}

type failSyncer struct{ err error }

func (f failSyncer) Sync() error { return f.err }

func TestWriterErrorsAreSticky(t *testing.T) {
	boom := errors.New("disk on fire")
	w := NewWriter(&failWriter{n: 0, err: boom}, nil, 1)
	if _, err := w.WriteRecord([]byte("a")); err != nil {
		t.Fatalf("buffered write failed early: %v", err)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush: %v, want %v", err, boom)
	}
	if _, err := w.WriteRecord([]byte("b")); !errors.Is(err, boom) {
		t.Fatalf("WriteRecord after failure: %v", err)
	}
	if err := w.Sync(); !errors.Is(err, boom) {
		t.Fatalf("Sync after failure: %v", err)
	}

	w = NewWriter(io.Discard, failSyncer{boom}, 1)
	w.WriteRecord([]byte("a"))
	if err := w.Sync(); !errors.Is(err, boom) {
		t.Fatalf("Sync: %v, want %v", err, boom)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush after failed sync: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close after failed sync: %v", err)
	}
	if err := w.Close(); err != ErrClosed {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if _, err := w.WriteRecord(nil); err != ErrClosed {
		t.Fatalf("WriteRecord after Close: %v", err)
	}

	// A large record writes through on its own once the buffer is full.
	fw := &failWriter{n: 0, err: boom}
	w = NewWriter(fw, nil, 1)
	if _, err := w.WriteRecord(make([]byte, 3*flushThreshold)); !errors.Is(err, boom) {
		t.Fatalf("large WriteRecord over a failing writer: %v", err)
	}
}

// TestSyncOnlyWhenNeeded: group commit relies on a redundant Sync being free.
func TestSyncOnlyWhenNeeded(t *testing.T) {
	s := &nopSyncer{}
	w := NewWriter(io.Discard, s, 1)
	w.Sync()
	w.WriteRecord([]byte("x"))
	w.Sync()
	w.Sync()
	w.Flush()
	w.Close()
	if s.n != 1 {
		t.Fatalf("%d syncs, want 1", s.n)
	}
}

// TestSyncedMarkMonotone checks W4 on a written log by walking its chunks.
func TestSyncedMarkMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	recs := randRecords(rng, 100, 5000)
	lg := writeLog(t, 1, recs, true)
	var prev uint64
	chunks := 0
	for off := 0; off < len(lg.data); {
		if BlockSize-off%BlockSize < HeaderSize {
			off += BlockSize - off%BlockSize
			continue
		}
		h := decodeHeader(lg.data[off:])
		if h.synced < prev || h.synced > uint64(off) {
			t.Fatalf("chunk at %d: synced mark %d (previous %d)", off, h.synced, prev)
		}
		prev = h.synced
		off += HeaderSize + h.length
		chunks++
	}
	if prev == 0 || chunks < len(recs) {
		t.Fatalf("walked %d chunks, last mark %d", chunks, prev)
	}
}

// TestRecycledFileAlignedEnd: when the new log ends exactly where a chunk of
// the old one begins, the checksummed chunk of another log is the clean end
// of a recycled file (io.EOF), not damage.
func TestRecycledFileAlignedEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	recs := randRecords(rng, 30, 4000)
	old := writeLog(t, 8, recs, true)
	cur := writeLog(t, 9, recs[:12], true) // same sizes: chunk boundaries line up
	file := append([]byte(nil), old.data...)
	copy(file, cur.data)
	got, err := readAll(file, 9)
	if err != io.EOF || len(got) != 12 {
		t.Fatalf("aligned recycled log: %d records, %v; want 12 and io.EOF", len(got), err)
	}
	checkPrefix(t, got, recs, "aligned recycled")
	// Reading it as the old log finds the new log's chunks first: they are
	// checksummed chunks of another log, followed by genuine old-log chunks
	// proving the start was synced, so this is corruption, not a clean end.
	if _, err := readAll(file, 8); !errors.Is(err, ErrCorruption) {
		t.Fatalf("reading a recycled file as its old log: %v, want ErrCorruption", err)
	}
}

// TestSyncedMarkReported checks Reader.SyncedMark: zero for a log whose
// only Sync came after its last chunk (a chunk carries the mark of the
// Sync before it), the last completed Sync's offset once a chunk was
// framed after it, and nothing from a chunk it did not accept.
func TestSyncedMarkReported(t *testing.T) {
	mark := func(data []byte) int64 {
		r := NewReader(bytes.NewReader(data), 1)
		for {
			if _, err := r.Next(); err != nil {
				return r.SyncedMark()
			}
		}
	}
	one := writeLog(t, 1, [][]byte{[]byte("a")}, true)
	if got := mark(one.data); got != 0 {
		t.Fatalf("one synced record: mark %d, want 0", got)
	}
	two := writeLog(t, 1, [][]byte{[]byte("a"), []byte("b")}, true)
	if got := mark(two.data); got != two.ends[0] {
		t.Fatalf("two synced records: mark %d, want %d", got, two.ends[0])
	}
	// The second chunk's checksum broken: its mark must not count.
	bad := append([]byte(nil), two.data...)
	bad[two.starts[1]] ^= 0xff
	if got := mark(bad); got != 0 {
		t.Fatalf("mark %d read from a chunk that failed its checksum", got)
	}
}
