package filters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

func uintptrOf(s []uint64) uintptr { return uintptr(unsafe.Pointer(&s[0])) }

func TestMortonSizing(t *testing.T) {
	for _, tc := range []struct {
		n      int
		fpRate float64
	}{{1, 0.1}, {100, 0.01}, {1000, 0.004}, {1_000_000, 0.004}, {1_100_000, 0.001}, {10, 1e-4}} {
		m, err := NewMorton(tc.n, tc.fpRate)
		if err != nil {
			t.Fatalf("NewMorton(%d, %v): %v", tc.n, tc.fpRate, err)
		}
		w := uint(m.FingerprintBits())
		if m.slots != mortonFSABits/w || mortonFSABit+m.slots*w > 512 {
			t.Errorf("width %d: %d slots do not fill the %d FSA bits", w, m.slots, mortonFSABits)
		}
		if float64(tc.n)/float64(m.Cap()) > mortonMaxLoad {
			t.Errorf("n=%d sized for load %.3f", tc.n, float64(tc.n)/float64(m.Cap()))
		}
		// The width is the narrowest meeting the model, so one bit less
		// must not.
		if mortonPredictedFP(w) > tc.fpRate || (w > mortonMinBits && mortonPredictedFP(w-1) <= tc.fpRate) {
			t.Errorf("ε=%v: width %d is not the narrowest meeting the model", tc.fpRate, w)
		}
		if addr := uintptrOf(m.words); addr%64 != 0 {
			t.Errorf("table starts at %#x, not on a cache line", addr)
		}
	}
}

// TestMortonAltInvolution covers the first and last buckets of the table
// and of a block (block boundaries), one-block tables, and odd block counts.
func TestMortonAltInvolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, nb := range []uint64{1, 2, 3, 7, 1000} {
		m := newMortonShape(nb, 8)
		edges := []uint64{0, 1, mortonBuckets - 1, mortonBuckets, m.buckets - 2, m.buckets - 1}
		for k := 0; k < 5000; k++ {
			fp, b := m.derive(rng.Uint64())
			if k < len(edges) && edges[k] < m.buckets {
				b = edges[k]
			}
			if fp > m.fpMask || b >= m.buckets {
				t.Fatalf("derive: fp %d, bucket %d of %d", fp, b, m.buckets)
			}
			a := m.alt(b, fp)
			if a >= m.buckets || a == b || m.alt(a, fp) != b {
				t.Fatalf("nb=%d: alt(%d) = %d, alt(alt) = %d", nb, b, a, m.alt(a, fp))
			}
		}
	}
}

// TestMortonBitShifts checks the FSA insert/remove shifts against a model
// bit slice at every position, including fingerprints straddling word
// boundaries and the last bits of the block, for every width.
func TestMortonBitShifts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	toBits := func(b *[8]uint64) []bool {
		out := make([]bool, 512)
		for i := range out {
			out[i] = b[i/64]>>(i%64)&1 != 0
		}
		return out
	}
	for w := uint(mortonMinBits); w <= 16; w++ {
		for pos := uint(mortonFSABit); pos+w <= 512; pos++ {
			var blk [8]uint64
			for i := range blk {
				blk[i] = rng.Uint64()
			}
			blk[7] &= 1<<(64-w) - 1 // the top w bits are free
			v := rng.Uint64() & (1<<w - 1)
			before := toBits(&blk)
			ins := blk
			mortonInsertBits(&ins, pos, w, v)
			want := append(append(append([]bool(nil), before[:pos]...), make([]bool, w)...), before[pos:512-w]...)
			for k := uint(0); k < w; k++ {
				want[pos+k] = v>>k&1 != 0
			}
			if got := toBits(&ins); !equalBools(got, want) {
				t.Fatalf("w=%d pos=%d: insert wrong", w, pos)
			}
			if got := mortonGetBits(&ins, pos, w); got != v {
				t.Fatalf("w=%d pos=%d: read back %x, want %x", w, pos, got, v)
			}
			mortonRemoveBits(&ins, pos, w)
			if ins != blk {
				t.Fatalf("w=%d pos=%d: remove did not undo insert", w, pos)
			}
		}
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mortonHashFor returns a hash whose fingerprint is fp and primary bucket b.
func mortonHashFor(m *Morton, fp, b uint64) uint64 {
	// The primary is floor(lo32·N / 2^32); the smallest lo32 for b.
	lo := (b<<32 + m.buckets - 1) / m.buckets
	return fp<<(64-m.fpBits) | lo
}

// TestMortonBlockPaths drives the structural paths one by one on small
// tables, table-driven: a bucket's fourth key overflows (counter full), a
// block's S+1-th key overflows (block full), overflowed keys are found via
// the OTA bit and removed from their secondary bucket, and keys in the last
// bucket of a block and of the table work like any other.
func TestMortonBlockPaths(t *testing.T) {
	cases := []struct {
		name    string
		nb      uint64
		w       uint
		buckets func(m *Morton) []uint64 // primary bucket of each key, in order
		ota     []uint64                 // buckets whose OTA bit must be set after the adds
	}{
		{"counter full", 2, 8, func(m *Morton) []uint64 { return []uint64{5, 5, 5, 5} }, []uint64{5}},
		{"last bucket of block", 2, 12, func(m *Morton) []uint64 { return []uint64{31, 31, 31, 31, 31} }, []uint64{31}},
		{"last bucket of table", 3, 16, func(m *Morton) []uint64 { return []uint64{95, 95, 95, 95} }, []uint64{95}},
		{"block full", 4, 16, func(m *Morton) []uint64 {
			// 27 slots at 16 bits: 9 buckets of 3 fill block 1, then one
			// more key for bucket 40 (counter 0) overflows.
			var bs []uint64
			for j := uint64(0); j < 9; j++ {
				bs = append(bs, 32+j, 32+j, 32+j)
			}
			return append(bs, 40)
		}, []uint64{40}},
		{"no overflow", 2, 8, func(m *Morton) []uint64 { return []uint64{0, 0, 0, 1, 1, 1, 63} }, nil},
	}
	for _, tc := range cases {
		m := newMortonShape(tc.nb, tc.w)
		var hs []uint64
		for k, b := range tc.buckets(m) {
			h := mortonHashFor(m, uint64(k+1)*7%m.fpMask, b)
			if _, pb := m.derive(h); pb != b {
				t.Fatalf("%s: hash for bucket %d derives %d", tc.name, b, pb)
			}
			if err := m.AddHash(h); err != nil {
				t.Fatalf("%s: key %d: %v", tc.name, k, err)
			}
			hs = append(hs, h)
		}
		otaSet := map[uint64]bool{}
		for _, b := range tc.ota {
			otaSet[b%mortonOTABits+b/mortonBuckets*mortonBuckets] = true
		}
		for b := uint64(0); b < m.buckets; b++ {
			set := m.words[b/mortonBuckets*mortonBlockWords+1]>>(b%mortonOTABits)&1 != 0
			if want := otaSet[b%mortonOTABits+b/mortonBuckets*mortonBuckets]; set != want && b%mortonBuckets < mortonOTABits {
				t.Errorf("%s: OTA bit for bucket %d is %v, want %v", tc.name, b, set, want)
			}
		}
		for k, h := range hs {
			if !m.MayContainHash(h) {
				t.Fatalf("%s: key %d missing", tc.name, k)
			}
		}
		for k, h := range hs {
			if !m.RemoveHash(h) {
				t.Fatalf("%s: key %d not removed", tc.name, k)
			}
		}
		if m.Len() != 0 {
			t.Fatalf("%s: Len %d after removing all", tc.name, m.Len())
		}
		for i := uint64(0); i < m.blocks; i++ {
			blk := m.block(i)
			if blk[0] != 0 || blk[1]>>mortonOTABits != 0 || blk[2]|blk[3]|blk[4]|blk[5]|blk[6]|blk[7] != 0 {
				t.Fatalf("%s: block %d not empty after removing all: %x", tc.name, i, *blk)
			}
		}
	}
}

// mortonChurn sets up a dynChurn on a table of blocks blocks of w-bit
// fingerprints held above target load.
func mortonChurn(blocks uint64, w uint, target float64) dynChurnSetup {
	return func(*testing.T) (string, dynFilter, dynChurnSpec) {
		m := newMortonShape(blocks, w)
		return fmt.Sprintf("morton w=%d", w), m, dynRawStateChurn(m, target, func(dst []uint64) []uint64 {
			return append(append(dst, m.words...), m.count, m.rng)
		})
	}
}

// TestMortonFalsePositiveRate fills to the first ErrFull and measures 1M
// absent keys against the target (F4), and against the filter's own
// prediction: each absent lookup compares the primary bucket's
// fingerprints, and the secondary's when the OTA bit is set, each matching
// with probability 2^-w.
func TestMortonFalsePositiveRate(t *testing.T) {
	fresh := func(p float64) (*Morton, error) { return NewMorton(60_000, p) }
	dynEachRate(t, []float64{0.03, 0.004, 0.001}, 12, fresh, func(fpRate float64, m *Morton, rng *rand.Rand) {
		dynFill(t, m, rng)
		perBucket := m.LoadFactor() * float64(m.slots) / mortonBuckets
		model := perBucket * (1 + m.OverflowFraction()) / math.Exp2(float64(m.fpBits))
		dynCheckFPRate(t, fmt.Sprintf("%d-bit, OTA set %.3f", m.FingerprintBits(), m.OverflowFraction()), m, rng, 1_000_000, fpRate, model)
		if m.OverflowFraction()+1 > mortonCompared {
			t.Errorf("OTA fraction %.3f exceeds the sizing model's %.2f", m.OverflowFraction(), mortonCompared-1)
		}
	})
}

func TestMortonDecodeRejectsCorruption(t *testing.T) {
	// 40 keys in 2 blocks of 36 slots: both blocks have free (zero) FSA
	// bits at the top, which the decoder must find clean.
	m := newMortonShape(2, 12)
	rng := rand.New(rand.NewPCG(5, 5))
	for k := 0; k < 40; k++ {
		if err := m.AddHash(rng.Uint64()); err != nil {
			t.Fatal(err)
		}
	}
	body := dynRejectsFlips(t, dynCaseOf("Morton"), m, 0x10)
	const table = 36
	mutate := dynWalkMutations(12, map[string]func(b []byte){
		"width 4":          func(b []byte) { b[0] = 4 },
		"width 17":         func(b []byte) { b[0] = 17 },
		"16 buckets":       func(b []byte) { b[1] = 16 },
		"slots":            func(b []byte) { b[2]++ },
		"zero blocks":      func(b []byte) { clear(b[4:12]) },
		"huge block count": func(b []byte) { b[11] = 0x40 },
		"overfull block":   func(b []byte) { copy(b[table:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) },
		"bit past last fp": func(b []byte) { b[table+63] |= 0x80 },
		"truncated":        nil,
	})
	bodies := dynMutated(body, 8, mutate)
	bodies["extra block words"] = append(slices.Clone(body), make([]byte, 64)...)
	dynRejectsBodies(t, dynCaseOf("Morton"), bodies)
	assertRejectsVersionAndType(t, TypeMorton, TypeVacuum, body, new(Morton))
}

// FuzzMortonUnmarshal runs the dynamic battery's decoder fuzz on Morton.
func FuzzMortonUnmarshal(f *testing.F) { dynFuzz(f, dynCaseOf("Morton")) }
