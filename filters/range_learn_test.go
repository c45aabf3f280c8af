package filters

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// learnShapes add to rangeKeyShapes key sets whose shape makes a builder
// learn late: the distinguishing depth grows after many keys, bytes past
// it are one symbol for a long way, keys run past the coder's depth.
var learnShapes = map[string]func(r *rand.Rand) []byte{
	// Low digits the coder never reads, as sstable's sparse benchmark keys.
	"sparse": func(r *rand.Rand) []byte { return fmt.Appendf(nil, "user%010d", r.Int64N(10_000_000_000)) },
	// A constant tail after the distinguishing digits: one-symbol
	// positions the coder reads past the depth.
	"tail": func(r *rand.Rand) []byte {
		return fmt.Appendf(nil, "order%04d:%s", r.IntN(3000), strings.Repeat("x", r.IntN(3)+20))
	},
	// Long shared stretches, past the coder's 64 positions and the
	// builder's 256 bytes.
	"long": func(r *rand.Rand) []byte {
		return fmt.Appendf(nil, "%s%03d%s%d", strings.Repeat("k", r.IntN(3)*40), r.IntN(50),
			strings.Repeat("z", r.IntN(2)*250), r.IntN(10))
	},
}

// allRangeKeyShapes is rangeKeyShapes and learnShapes together.
func allRangeKeyShapes() map[string]func(r *rand.Rand) []byte {
	shapes := map[string]func(r *rand.Rand) []byte{}
	for name, gen := range rangeKeyShapes {
		shapes[name] = gen
	}
	for name, gen := range learnShapes {
		shapes[name] = gen
	}
	return shapes
}

// TestRangeBuilderLearnsOnlyWhatTheCoderReads checks R4: a builder that
// learns sorted keys' bytes only up to the depth its coder reads, catching
// up as that depth grows, builds the same encoding as one that learns
// every byte of every key. Key sets end with a close pair half the time,
// so the depth grows after most keys are stored.
func TestRangeBuilderLearnsOnlyWhatTheCoderReads(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 5))
	for name, gen := range allRangeKeyShapes() {
		for trial := range 60 {
			keys := make([][]byte, 1+r.IntN([]int{3, 40, 2000}[trial%3]))
			for i := range keys {
				keys[i] = gen(r)
			}
			if r.IntN(2) == 0 {
				// A last key just past the largest one, sharing all of it.
				top := sortedDistinct(keys)
				keys = append(keys, append(bytes.Clone(top[len(top)-1]), '0'))
			}
			sorted := sortedDistinct(keys)
			bits := []float64{4, 10, 16}[r.IntN(3)]
			want := buildLearningAll(t, sorted, bits)
			got, err := NewRangeFilter(sorted, bits)
			if err != nil {
				t.Fatal(err)
			}
			gotEnc, _ := got.MarshalBinary()
			if !bytes.Equal(gotEnc, want) {
				t.Fatalf("%s trial %d: %d keys: encoding differs from learning every byte", name, trial, len(sorted))
			}
			// Unsorted input goes through the same learning after a sort.
			shuffled := append([][]byte(nil), keys...)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			unsorted, err := NewRangeFilter(shuffled, bits)
			if err != nil {
				t.Fatal(err)
			}
			if enc, _ := unsorted.MarshalBinary(); !bytes.Equal(enc, want) {
				t.Fatalf("%s trial %d: unsorted input's encoding differs", name, trial)
			}
		}
	}
}

// buildLearningAll builds sorted's filter with learning never stopped:
// every byte of every key (up to the 256 kept) goes into the alphabets,
// as the builder did before it tracked the coder's depth.
func buildLearningAll(t *testing.T, sorted [][]byte, bits float64) []byte {
	t.Helper()
	b := mustRangeBuilder(t, bits)
	b.shape.learnEnd, b.shape.alphaEnd = maxRangeKeyBytes, maxRangeKeyBytes
	for _, k := range sorted {
		b.Add(k)
	}
	return mustRangeEncoding(t, b)
}
