package manifest

import (
	"testing"

	"github.com/sievekv/sievekv/sstable"
)

// TestDataSizeLeavesFiltersOut: what compaction sizes a table by is its
// file less its point and range filter blocks, so two tables of the same
// data under different filters weigh the same; without properties, or
// with filter sizes that cannot be right, it is the file size.
func TestDataSizeLeavesFiltersOut(t *testing.T) {
	small := &TableMetadata{Size: 10_000, Props: &sstable.Properties{FilterSize: 800}}
	large := &TableMetadata{Size: 10_600, Props: &sstable.Properties{FilterSize: 1_200, RangeFilterSize: 200}}
	if small.DataSize() != 9_200 || large.DataSize() != 9_200 {
		t.Errorf("DataSize %d and %d, want 9200 for both", small.DataSize(), large.DataSize())
	}
	if got := TotalDataSize([]*TableMetadata{small, large}); got != 18_400 {
		t.Errorf("TotalDataSize %d, want 18400", got)
	}
	if got := small.CompensatedSize(); got != 9_200 {
		t.Errorf("CompensatedSize %d, want DataSize 9200", got)
	}
	for _, m := range []*TableMetadata{{Size: 500}, {Size: 500, Props: &sstable.Properties{FilterSize: 600}}} {
		if m.DataSize() != 500 {
			t.Errorf("DataSize %d, want the file size 500", m.DataSize())
		}
	}
}
