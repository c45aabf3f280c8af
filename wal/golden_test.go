package wal

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// TestGoldenBytes pins the on-disk format (docs/format.md, "Record log (WAL
// and MANIFEST)", worked example; its CRCs were checked with an independent bitwise CRC32C): log 5
// holding "" and "sievekv", a Sync, then "x". If this test
// fails the format changed: that needs a new format, not a new constant.
func TestGoldenBytes(t *testing.T) {
	log := workedExampleLog(t)
	// Three chunks, each: crc u32, length u16, type u8, log number u32,
	// synced-through offset u64, then the payload ("", "sievekv", "x"; the
	// third chunk records the Sync at offset 45).
	golden.Bytes(t, "log-5", log)
}

// workedExampleLog is the log of the format's worked example: log 5
// holding "" and "sievekv", a Sync, then "x".
func workedExampleLog(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, &nopSyncer{}, 5)
	w.WriteRecord(nil)
	w.WriteRecord([]byte("sievekv"))
	w.Sync()
	w.WriteRecord([]byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGoldenMultiBlock pins a log that uses every chunk type and padding by
// its SHA-256, and checks it still reads back.
func TestGoldenMultiBlock(t *testing.T) {
	var recs [][]byte
	for i, n := range []int{100, BlockSize - 100 - 2*HeaderSize - 5, 3, 2*BlockSize + 17, 0, 4000} {
		recs = append(recs, bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	lg := writeLog(t, 0x0102030405, recs, true)
	sum := sha256.Sum256(lg.data)
	golden.Check(t, "multi-block-sha256", fmt.Sprintf("%x\n%d bytes\n", sum, len(lg.data)))
	got, err := readAll(lg.data, 0x0102030405)
	if err != io.EOF || len(got) != len(recs) {
		t.Fatalf("golden log reads %d records, %v", len(got), err)
	}
}

// TestWorkedExampleClaims checks what docs/format.md ("Record log (WAL and
// MANIFEST)") says about its worked example.
func TestWorkedExampleClaims(t *testing.T) {
	log := workedExampleLog(t)
	for _, c := range []struct {
		pos     int
		want    error
		wantOff int64
	}{{30, ErrCorruption, 19}, {50, ErrTornTail, 45}} {
		data := append([]byte(nil), log...)
		data[c.pos] ^= 0x10
		_, err := readAll(data, 5)
		var we *Error
		if !errors.Is(err, c.want) || !errors.As(err, &we) || we.Offset != c.wantOff {
			t.Errorf("damage at %d: %v, want %v at %d", c.pos, err, c.want, c.wantOff)
		}
	}
	// A 40000-byte record at offset 0: FIRST of 32749 bytes, LAST of 7251 at 32768.
	var buf bytes.Buffer
	w := NewWriter(&buf, nil, 1)
	w.WriteRecord(make([]byte, 40000))
	w.Close()
	d := buf.Bytes()
	h0, h1 := decodeHeader(d), decodeHeader(d[BlockSize:])
	if h0.typ != chunkFirst || h0.length != 32749 || h1.typ != chunkLast || h1.length != 7251 || len(d) != BlockSize+HeaderSize+7251 {
		t.Errorf("40000-byte record framed as %+v, %+v (%d bytes)", h0, h1, len(d))
	}
}
