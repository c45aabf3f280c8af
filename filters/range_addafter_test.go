package filters

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRangeAddAfterMatchesAdd: a builder fed AddAfter with each key's
// shared prefix against the previous full key (what sstable's writer
// passes) builds the encoding Add builds, for every key shape of the range
// tests, keys past maxRangeKeyBytes that repeat once truncated, sorted and
// shuffled input.
func TestRangeAddAfterMatchesAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 6))
	shapes := allRangeKeyShapes()
	// Distinct keys whose first maxRangeKeyBytes bytes are one of a few.
	shapes["truncated"] = func(r *rand.Rand) []byte {
		k := bytes.Repeat([]byte{'a' + byte(r.IntN(3))}, maxRangeKeyBytes+r.IntN(4))
		return append(k, byte(r.IntN(256)))
	}
	for name, gen := range shapes {
		for _, sorted := range []bool{true, false} {
			keys := make([][]byte, 200+r.IntN(800))
			for i := range keys {
				keys[i] = gen(r)
			}
			if sorted {
				slices.SortFunc(keys, bytes.Compare)
				keys = slices.CompactFunc(keys, bytes.Equal)
			}
			viaAdd, viaAfter := mustRangeBuilder(t, 16), mustRangeBuilder(t, 16)
			var prev []byte
			for _, k := range keys {
				viaAdd.Add(k)
				viaAfter.AddAfter(k, SharedPrefixLen(prev, k))
				prev = k
			}
			a, b := mustRangeEncoding(t, viaAdd), mustRangeEncoding(t, viaAfter)
			if !bytes.Equal(a, b) {
				t.Errorf("%s (sorted %v): AddAfter's encoding (%d bytes) differs from Add's (%d bytes)", name, sorted, len(b), len(a))
			}
		}
	}
}

func mustRangeBuilder(t *testing.T, bits float64) *RangeBuilder {
	t.Helper()
	b, err := NewRangeBuilder(bits)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRangeEncoding(t *testing.T, b *RangeBuilder) []byte {
	t.Helper()
	f, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}
