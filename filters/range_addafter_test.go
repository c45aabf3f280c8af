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

// TestRangeAddAfterNegativeShared: a negative shared is a wrong shared,
// which the doc says builds a wrong filter; it must not panic. AddAfter
// indexed the last key at shared, so any key after the first with a
// negative shared panicked with "index out of range [-1]". Below 0 it now
// counts as 0, which for sorted input like this builds the right filter.
func TestRangeAddAfterNegativeShared(t *testing.T) {
	b, err := NewRangeBuilder(10)
	if err != nil {
		t.Fatal(err)
	}
	b.Add([]byte("abc"))
	b.AddAfter([]byte("abd"), -1)
	b.AddAfter([]byte("abe"), -5)
	f, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"abc", "abd", "abe"} {
		if !f.MayContain([]byte(k)) {
			t.Errorf("%q missing", k)
		}
	}
}
