package manifest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/wal"
)

type nopSyncer struct{}

func (nopSyncer) Sync() error { return nil }

// writeManifest frames edits into a MANIFEST the way the engine does: one
// wal record per edit, synced after each.
func writeManifest(t *testing.T, edits []*VersionEdit) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := wal.NewWriter(&buf, nopSyncer{}, 2)
	for _, e := range edits {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteRecord(e.Encode()); err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// replayManifest is what Open does: Replay, then Apply.
func replayManifest(data []byte) (*State, int, error) {
	fold, n, err := Replay(wal.NewReader(bytes.NewReader(data), 2))
	if err != nil {
		return nil, n, err
	}
	s, err := fold.Apply()
	return s, n, err
}

// TestManifestThroughWAL: edits survive the wal framing, and every damaged
// byte of the MANIFEST file is reported (wal corruption, torn tail, or a
// manifest corruption), never silently replayed into a different table set
// with all edits present.
func TestManifestThroughWAL(t *testing.T) {
	var edits []*VersionEdit
	edits = append(edits, &VersionEdit{LogNumber: 1, HasLogNumber: true, NextFileNumber: 2, HasNextFileNumber: true, HasLastSequence: true})
	for i := uint64(0); i < 40; i++ {
		fn := 2 + i
		edits = append(edits, &VersionEdit{
			LogNumber: fn, HasLogNumber: true, NextFileNumber: fn + 1, HasNextFileNumber: true,
			LastSequence: 10 * (i + 1), HasLastSequence: true,
			NewTables: []NewTable{{1, &TableMetadata{FileNum: fn, Size: 100,
				Smallest:    base.MakeInternalKey(key(i*10), base.SeqNum(10*i+9), base.KindSet),
				Largest:     base.MakeInternalKey(key(i*10+9), base.SeqNum(10*i), base.KindSet),
				SmallestSeq: base.SeqNum(10 * i), LargestSeq: base.SeqNum(10*i + 9), FilterType: tableType(3)}}},
		})
	}
	data := writeManifest(t, edits)
	want, n, err := replayManifest(data)
	if err != nil || n != len(edits) || len(want.Levels[1]) != 40 {
		t.Fatalf("clean replay: %d edits, %v", n, err)
	}
	for pos := range data {
		data[pos] ^= 0x04
		s, n, err := replayManifest(data)
		data[pos] ^= 0x04
		if err == nil {
			t.Fatalf("flip at %d replayed %d edits without error (%d tables)", pos, n, len(s.Levels[1]))
		}
		if !errors.Is(err, wal.ErrCorruption) && !errors.Is(err, wal.ErrTornTail) && !errors.Is(err, ErrCorruption) {
			t.Fatalf("flip at %d: unclassified error %v", pos, err)
		}
	}
}
