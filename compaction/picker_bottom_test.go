package compaction

import (
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// TestPickAgedBottomWaitsForSnapshots: a bottom table whose tombstones are
// past TombstoneMaxAge is compacted into itself (P5 at the bottom) only
// when no open snapshot is older than its entries, and never without an
// OldestSnapshot to ask; a younger table is left alone.
func TestPickAgedBottomWaitsForSnapshots(t *testing.T) {
	bottom := manifest.NumLevels - 1
	v := &manifest.Version{}
	old := table(1, 4<<20, "a", "m")
	old.LargestSeq = 50
	old.SetTombstoneTime(pickerNow - int64(2*time.Hour))
	young := table(2, 4<<20, "n", "z")
	young.LargestSeq = 60
	young.SetTombstoneTime(pickerNow - int64(time.Minute))
	v.Levels[bottom] = []*manifest.TableMetadata{old, young}
	opts := DefaultOptions()
	opts.TombstoneMaxAge = time.Hour
	for _, c := range []struct {
		name   string
		oldest func() (base.SeqNum, bool)
		want   bool
	}{
		{"no snapshot source", nil, false},
		{"no snapshot open", func() (base.SeqNum, bool) { return 0, false }, true},
		{"a snapshot older than an entry", func() (base.SeqNum, bool) { return 49, true }, false},
		{"a snapshot at the newest entry", func() (base.SeqNum, bool) { return 50, true }, true},
	} {
		p := &Picker{Opts: opts, Now: func() int64 { return pickerNow }, OldestSnapshot: c.oldest}
		got := p.Pick(v)
		if !c.want {
			if got != nil {
				t.Fatalf("%s: picked %s", c.name, describeCompaction(got))
			}
			continue
		}
		if got == nil || got.Reason != ReasonAge || got.Level != bottom || got.OutputLevel != bottom ||
			len(got.Inputs[0]) != 1 || got.Inputs[0][0] != old || len(got.Inputs[1]) != 0 || got.TrivialMove {
			t.Fatalf("%s: picked %v, want the old bottom table into itself", c.name, got)
		}
	}
}
