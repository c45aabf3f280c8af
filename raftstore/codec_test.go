package raftstore

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// TestLogEncodingGolden pins the bytes of the entry encoding
// (docs/format.md, "raftstore"), so the format cannot drift by accident.
func TestLogEncodingGolden(t *testing.T) {
	l := &raft.Log{
		Index:      42,
		Term:       300,
		Type:       raft.LogCommand,
		Data:       []byte("set"),
		Extensions: []byte{0xee},
		AppendedAt: time.Unix(1_700_000_000, 5),
	}
	const want = "01" + "00" + "ac02" + "01" + "80c49fd50c" + "05" + "03736574" + "01ee"
	got := hex.EncodeToString(encodeLog(nil, l))
	if got != want {
		t.Fatalf("encoding of %+v\n got %s\nwant %s", l, got, want)
	}
	if n := len(encodeLog(nil, l)); n > encodedLogLen(l) {
		t.Fatalf("encodedLogLen %d below the %d bytes written", encodedLogLen(l), n)
	}
	var back raft.Log
	if err := decodeLog(42, encodeLog(nil, l), &back); err != nil {
		t.Fatal(err)
	}
	sameLog(t, &back, l)
	if key := hex.EncodeToString(logKey(42)); key != "6c000000000000002a" {
		t.Fatalf("logKey(42) = %s", key)
	}
}

func TestDecodeLogRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":            {},
		"unknown format":   {2, 0, 1, 0, 0, 0},
		"truncated term":   {1, 0},
		"long varint term": {1, 0, 0x81, 0x00, 0, 0, 0}, // 1 written in two bytes
		"unknown flag":     {1, 0, 1, 7, 0, 0},
		"nanos too big":    {1, 0, 1, 1, 0, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0, 0},
		"zero time as set": append([]byte{1, 0, 1, 1}, append(zigzag(-62135596800), 0, 0, 0)...),
		"data overrun":     {1, 0, 1, 0, 5, 'a'},
		"trailing":         {1, 0, 1, 0, 0, 0, 9},
		"no extensions":    {1, 0, 1, 0, 0},
	} {
		var l raft.Log
		if err := decodeLog(1, b, &l); !errors.Is(err, kv.ErrCorruption) {
			t.Errorf("%s: decodeLog(%x) = %v; want kv.ErrCorruption", name, b, err)
		}
	}
}

func zigzag(v int64) []byte { return binary.AppendVarint(nil, v) }

// FuzzDecodeLog feeds arbitrary values to the decoder: it must never panic,
// and whatever it accepts must re-encode to exactly the same bytes (one
// encoding per entry), so no accepted value can lose a field.
func FuzzDecodeLog(f *testing.F) {
	for _, l := range []*raft.Log{
		testLog(1), testLog(12345),
		{Index: 3, Type: raft.LogNoop},
		{Index: 4, Term: ^uint64(0), Data: bytes.Repeat([]byte("d"), 300), AppendedAt: time.Unix(-1, 1)},
	} {
		f.Add(encodeLog(nil, l))
	}
	f.Add([]byte{1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if err := decodeLog(9, b, &l); err != nil {
			if !errors.Is(err, kv.ErrCorruption) {
				t.Fatalf("decode error %v does not wrap kv.ErrCorruption", err)
			}
			return
		}
		if again := encodeLog(nil, &l); !bytes.Equal(again, b) {
			t.Fatalf("decoded %+v re-encodes to %x, not %x", l, again, b)
		}
	})
}
