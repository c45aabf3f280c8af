package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// oracleRead is a second, deliberately naive reading of the format spec
// (docs/format.md, "Record log (WAL and MANIFEST)"): walk chunks from offset 0, stop at the first
// thing that is not a valid chunk of this log in the right sequence. It
// returns the records and the end of the last one. Reader must agree with it
// record for record (W2, W5).
func oracleRead(data []byte, logNum uint32) (recs [][]byte, goodEnd int) {
	var cur []byte
	in := false
	off := 0
	for off < len(data) {
		left := BlockSize - off%BlockSize
		if left < HeaderSize {
			for i := off; i < off+left && i < len(data); i++ {
				if data[i] != 0 {
					return recs, goodEnd
				}
			}
			off += left
			continue
		}
		if len(data)-off < HeaderSize {
			return recs, goodEnd
		}
		hdr := data[off : off+HeaderSize]
		n := int(binary.LittleEndian.Uint16(hdr[4:]))
		typ := hdr[6]
		if HeaderSize+n > left || off+HeaderSize+n > len(data) {
			return recs, goodEnd
		}
		payload := data[off+HeaderSize : off+HeaderSize+n]
		if chunkCRC(hdr, payload) != binary.LittleEndian.Uint32(hdr) ||
			binary.LittleEndian.Uint32(hdr[7:]) != logNum ||
			binary.LittleEndian.Uint64(hdr[11:]) > uint64(off) {
			return recs, goodEnd
		}
		switch {
		case typ == chunkFull && !in:
			recs = append(recs, append([]byte{}, payload...))
			goodEnd = off + HeaderSize + n
		case typ == chunkFirst && !in:
			in, cur = true, append([]byte{}, payload...)
		case typ == chunkMiddle && in:
			cur = append(cur, payload...)
		case typ == chunkLast && in:
			recs = append(recs, append(cur, payload...))
			in, goodEnd = false, off+HeaderSize+n
		default:
			return recs, goodEnd
		}
		off += HeaderSize + n
	}
	return recs, goodEnd
}

// fuzzSeeds are small logs in several shapes, with the log number to read
// them under.
func fuzzSeeds(t testing.TB) []struct {
	data   []byte
	logNum uint32
} {
	mk := func(logNum uint64, sync bool, sizes ...int) []byte {
		var recs [][]byte
		for i, n := range sizes {
			recs = append(recs, bytes.Repeat([]byte{byte('a' + i)}, n))
		}
		return writeLog(t, logNum, recs, sync).data
	}
	full := mk(3, true, 5, 0, 40, 9)
	multi := mk(4, true, 10, BlockSize+100, 3)
	pad := mk(5, false, BlockSize-HeaderSize-HeaderSize-3, 2)
	flipped := append([]byte(nil), full...)
	flipped[HeaderSize+2] ^= 0x40
	return []struct {
		data   []byte
		logNum uint32
	}{
		{nil, 1}, {full, 3}, {full, 4}, {full[:len(full)-3], 3}, {flipped, 3},
		{multi, 4}, {multi[:BlockSize+50], 4}, {pad, 5}, {make([]byte, 64), 0},
	}
}

// FuzzReader reads arbitrary bytes as a log. It must never panic, must
// return exactly the records a naive reading of the spec accepts (so never
// one whose CRC did not verify), and must end with io.EOF or a *wal.Error
// whose torn-tail offset is the end of the last record returned.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.data, s.logNum)
	}
	f.Fuzz(func(t *testing.T, data []byte, logNum uint32) {
		want, wantEnd := oracleRead(data, logNum)
		got, err := readAll(data, uint64(logNum))
		if len(got) != len(want) {
			t.Fatalf("reader returned %d records, the spec accepts %d (end: %v)", len(got), len(want), err)
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs from the spec's reading", i)
			}
		}
		var we *Error
		switch {
		case err == io.EOF:
			// A clean end; the records already matched the spec's reading.
		case errors.As(err, &we):
			if errors.Is(err, ErrTornTail) && we.Offset != int64(wantEnd) {
				t.Fatalf("torn tail at %d, last record ends at %d", we.Offset, wantEnd)
			}
			if !errors.Is(err, ErrTornTail) && !errors.Is(err, ErrCorruption) {
				t.Fatalf("*Error wraps neither sentinel: %v", err)
			}
		default:
			t.Fatalf("unexpected error class: %v", err)
		}
	})
}

// FuzzRoundTrip writes records cut from the input and reads them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello"), uint16(2), false)
	f.Add(bytes.Repeat([]byte{7}, 3*BlockSize), uint16(MaxChunkPayload), true)
	f.Add([]byte{}, uint16(0), true)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, sync bool) {
		var recs [][]byte
		step := int(cut)
		for len(data) > 0 {
			n := min(step, len(data))
			recs = append(recs, data[:n])
			data = data[n:]
			step = step*3 + 1 // vary sizes: 0-byte records and large ones
			if step > 4*BlockSize {
				step = int(cut) % 17
			}
		}
		lg := writeLog(t, 77, recs, sync)
		got, err := readAll(lg.data, 77)
		if err != io.EOF || len(got) != len(recs) {
			t.Fatalf("read %d of %d records, %v", len(got), len(recs), err)
		}
		for i := range got {
			if !bytes.Equal(got[i], recs[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}
