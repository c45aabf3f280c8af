package filters

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// bytesAllocated reports how many bytes fn allocates on the heap.
func bytesAllocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// staticFilter is what every XOR / binary fuse type offers.
type staticFilter interface {
	Filter
	Len() int
	SizeInBytes() int
}

// staticKind describes one static filter configuration for the shared tests.
type staticKind struct {
	name      string
	bits      int // fingerprint width: FP rate is 2^-bits
	typ       Type
	fromHash  func(b *FuseBuilder, hashes []uint64) (staticFilter, error)
	fromKeys  func(keys [][]byte) (staticFilter, error)
	unmarshal func(data []byte) (staticFilter, error) // the type's own UnmarshalBinary
}

func staticKinds() []staticKind {
	kinds := []staticKind{
		{
			name: "Xor8", bits: 8, typ: TypeXor8,
			fromHash:  func(b *FuseBuilder, hs []uint64) (staticFilter, error) { return b.BuildXor8(hs) },
			fromKeys:  func(keys [][]byte) (staticFilter, error) { return BuildXor8(keys) },
			unmarshal: unmarshalNew[staticFilter, Xor8],
		},
		{
			name: "BinaryFuse8", bits: 8, typ: TypeBinaryFuse8,
			fromHash:  func(b *FuseBuilder, hs []uint64) (staticFilter, error) { return b.BuildBinaryFuse8(hs) },
			fromKeys:  func(keys [][]byte) (staticFilter, error) { return BuildBinaryFuse8(keys) },
			unmarshal: unmarshalNew[staticFilter, BinaryFuse8],
		},
		{
			name: "BinaryFuse16", bits: 16, typ: TypeBinaryFuse16,
			fromHash:  func(b *FuseBuilder, hs []uint64) (staticFilter, error) { return b.BuildBinaryFuse16(hs) },
			fromKeys:  func(keys [][]byte) (staticFilter, error) { return BuildBinaryFuse16(keys) },
			unmarshal: unmarshalNew[staticFilter, BinaryFuse16],
		},
	}
	return append(kinds, generalFuseKinds()...)
}

// testRNG returns a generator for a stream named by seed.
//
// Both PCG seed words vary with seed: the low 64 bits of a 128-bit LCG state
// evolve on their own, so streams seeded (s, c) and (s', c) share them at
// every step. With streams seeded that way, one benchmark pair (1M present,
// 2^20 absent keys) gave a 16-bit filter 33 false positives where 2^-16
// predicts 16 (other absent streams: 14-19). No simple statistic shows a
// correlation, but independent test streams should not share state at all.
func testRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix64(seed^0x5eed), mix64(seed+0x9e3779b97f4a7c15)))
}

// randomHashes returns n pseudo-random hashes from a stream named by seed.
func randomHashes(seed uint64, n int) []uint64 {
	rng := testRNG(seed)
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	return hs
}

// checkNoFalseNegatives asserts invariant F1 for every hash in hs.
func checkNoFalseNegatives(t *testing.T, what string, f Filter, hs []uint64) {
	t.Helper()
	for i, h := range hs {
		if !f.MayContainHash(h) {
			t.Fatalf("%s: false negative for hash %d (%#x) of %d", what, i, h, len(hs))
		}
	}
}

// roundTrip encodes f and decodes it both with Unmarshal and with the type's
// own UnmarshalBinary, checking both give back the same bytes.
func roundTrip(t *testing.T, k staticKind, f staticFilter) []staticFilter {
	t.Helper()
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != f.SizeInBytes() {
		t.Fatalf("%s: SizeInBytes %d, encoding is %d bytes", k.name, f.SizeInBytes(), len(enc))
	}
	g, err := Unmarshal(enc)
	if err != nil {
		t.Fatalf("%s: Unmarshal: %v", k.name, err)
	}
	h, err := k.unmarshal(enc)
	if err != nil {
		t.Fatalf("%s: UnmarshalBinary: %v", k.name, err)
	}
	var out []staticFilter
	for _, d := range []Filter{g, h} {
		sf, ok := d.(staticFilter)
		if !ok {
			t.Fatalf("%s: decoded %T", k.name, d)
		}
		again, _ := sf.MarshalBinary()
		if !bytes.Equal(again, enc) {
			t.Fatalf("%s: re-encoding after decode differs", k.name)
		}
		if sf.Len() != f.Len() {
			t.Fatalf("%s: decoded Len %d, want %d", k.name, sf.Len(), f.Len())
		}
		out = append(out, sf)
	}
	return out
}

// TestStaticNoFalseNegatives checks F1 for random sets of 0 to 10k keys
// (the tiny sizes exercise the minimum layouts), before and after a marshal round trip, and that
// absent keys get the same answers from the decoded filter. 1M keys is
// TestStaticLargeSets.
func TestStaticNoFalseNegatives(t *testing.T) {
	sizes := []int{0, 1, 2, 3, 4, 5, 7, 10, 100, 1000, 10_000}
	for _, k := range staticKinds() {
		var b FuseBuilder
		for _, n := range sizes {
			hs := randomHashes(uint64(n)*31+1, n)
			f, err := k.fromHash(&b, hs)
			if err != nil {
				t.Fatalf("%s n=%d: %v", k.name, n, err)
			}
			if f.Len() != n {
				t.Fatalf("%s n=%d: Len %d", k.name, n, f.Len())
			}
			what := fmt.Sprintf("%s n=%d", k.name, n)
			checkNoFalseNegatives(t, what, f, hs)
			absent := randomHashes(uint64(n)*31+2, min(n+100, 20_000))
			for i, d := range roundTrip(t, k, f) {
				checkNoFalseNegatives(t, fmt.Sprintf("%s decoded #%d", what, i), d, hs)
				for _, h := range absent {
					if d.MayContainHash(h) != f.MayContainHash(h) {
						t.Fatalf("%s: decoded filter answers %#x differently", what, h)
					}
				}
			}
		}
	}
}

// TestStaticLargeSets checks F1 at n = 10^6 (skipped with -short; under the
// race detector only for BinaryFuse8, the sstable's default filter) and
// that the round trip is byte-exact at that size.
func TestStaticLargeSets(t *testing.T) {
	if testing.Short() {
		t.Skip("1M-key builds")
	}
	hs := randomHashes(1_000_000*31+1, 1_000_000)
	var b FuseBuilder
	for _, k := range staticKinds() {
		if staticRaceEnabled && k.name != "BinaryFuse8" {
			continue
		}
		f, err := k.fromHash(&b, hs)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if f.Len() != len(hs) {
			t.Fatalf("%s: Len %d", k.name, f.Len())
		}
		checkNoFalseNegatives(t, k.name+" n=1M", f, hs)
		for _, d := range roundTrip(t, k, f) {
			checkNoFalseNegatives(t, k.name+" n=1M decoded", d, hs[:10_000])
		}
	}
}

// TestStaticByteKeys exercises the [][]byte builders and MayContain.
func TestStaticByteKeys(t *testing.T) {
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user/%08d", i)
	}
	for _, k := range staticKinds() {
		f, err := k.fromKeys(keys)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		for _, key := range keys {
			if !f.MayContain(key) || !f.MayContainHash(Hash(key)) {
				t.Fatalf("%s: false negative for %q", k.name, key)
			}
		}
		// A 32-bit filter on 5000 absent keys has an expected 1.2e-6 false
		// positives; the 8-bit ones are covered by the FP-rate tests.
		if k.bits >= 20 {
			for i := 0; i < 5000; i++ {
				if key := fmt.Appendf(nil, "absent/%08d", i); f.MayContain(key) {
					t.Fatalf("%s: false positive for %q", k.name, key)
				}
			}
		}
	}
}

// TestStaticEmptyRejectsEverything: an empty set builds a valid filter that
// reports every key absent, before and after a round trip.
func TestStaticEmptyRejectsEverything(t *testing.T) {
	probe := randomHashes(99, 100_000)
	for _, k := range staticKinds() {
		for _, input := range [][]uint64{nil, {}} {
			f, err := k.fromHash(new(FuseBuilder), input)
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			fs := append([]staticFilter{f}, roundTrip(t, k, f)...)
			for _, g := range fs {
				if g.Len() != 0 {
					t.Fatalf("%s: Len %d", k.name, g.Len())
				}
				for _, h := range probe {
					if g.MayContainHash(h) {
						t.Fatalf("%s: empty filter reports %#x present", k.name, h)
					}
				}
				if g.MayContain(nil) || g.MayContain([]byte("x")) {
					t.Fatalf("%s: empty filter reports a key present", k.name)
				}
			}
		}
	}
}

// duplicateCase is an input with repeated hashes and its distinct set.
type duplicateCase struct {
	name     string
	hs       []uint64
	distinct []uint64
}

// duplicateCases are the inputs the static filters' duplicate tests build
// from: heavy repetition, one hash 100k times (it overflows any small
// per-slot counter), and the smallest cases.
func duplicateCases() []duplicateCase {
	rng := rand.New(rand.NewPCG(7, 8))
	distinct := randomHashes(5, 10_000)
	var heavy []uint64
	for _, h := range distinct {
		for c := 1 + rng.IntN(5); c > 0; c-- {
			heavy = append(heavy, h)
		}
	}
	rng.Shuffle(len(heavy), func(i, j int) { heavy[i], heavy[j] = heavy[j], heavy[i] })
	same := make([]uint64, 100_000)
	for i := range same {
		same[i] = 0xdeadbeefcafef00d
	}
	return []duplicateCase{
		{"heavy", heavy, distinct},
		{"one-hash-100k-times", same, same[:1]},
		{"pair", []uint64{42, 42}, []uint64{42}},
		{"two-pairs", []uint64{1, 2, 2, 1}, []uint64{1, 2}},
		{"one-dup-in-10k", append(append([]uint64(nil), distinct...), distinct[1234]), distinct},
	}
}

// TestStaticDuplicates: inputs full of duplicates build (no endless seed
// loop, no ErrBuildFailed), have no false negatives, and Len counts distinct
// hashes.
func TestStaticDuplicates(t *testing.T) {
	cases := duplicateCases()
	for _, k := range staticKinds() {
		var b FuseBuilder
		for _, c := range cases {
			f, err := k.fromHash(&b, c.hs)
			if err != nil {
				t.Fatalf("%s %s: %v", k.name, c.name, err)
			}
			if f.Len() != len(c.distinct) {
				t.Fatalf("%s %s: Len %d, want %d distinct", k.name, c.name, f.Len(), len(c.distinct))
			}
			checkNoFalseNegatives(t, k.name+" "+c.name, f, c.hs)
		}
	}
	// Duplicate byte keys hash to duplicate hashes.
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("a")}
	for _, k := range staticKinds() {
		f, err := k.fromKeys(keys)
		if err != nil || f.Len() != 2 || !f.MayContain([]byte("a")) || !f.MayContain([]byte("b")) {
			t.Fatalf("%s: duplicate byte keys: err=%v len=%d", k.name, err, f.Len())
		}
	}
}

// TestStaticInputNotModified: the builders only read the caller's slice,
// even when they have to deduplicate it.
func TestStaticInputNotModified(t *testing.T) {
	hs := randomHashes(11, 1000)
	hs = append(hs, hs[:500]...)
	orig := append([]uint64(nil), hs...)
	for _, k := range staticKinds() {
		if _, err := k.fromHash(new(FuseBuilder), hs); err != nil {
			t.Fatal(err)
		}
		for i := range hs {
			if hs[i] != orig[i] {
				t.Fatalf("%s: input slice modified at %d", k.name, i)
			}
		}
	}
}

// TestFuseBuilderReuse: filters from a reused builder equal fresh builds and
// stay valid after the builder builds again (they do not alias its scratch).
func TestFuseBuilderReuse(t *testing.T) {
	for _, k := range staticKinds() {
		var b FuseBuilder
		sets := [][]uint64{randomHashes(21, 20_000), randomHashes(22, 500), randomHashes(23, 30_000)}
		checkBuilderReuse(t, k.name, sets,
			func(hs []uint64) (staticFilter, error) { return k.fromHash(&b, hs) },
			func(hs []uint64) (staticFilter, error) { return k.fromHash(new(FuseBuilder), hs) })
	}
}

// checkBuilderReuse builds every set in turn with reused, a build through
// one builder kept across the sets, then checks that each filter has no
// false negatives, encodes as fresh (a new builder) does, and still
// encodes as it did right after its build: a later build through the same
// builder did not change it (a filter does not alias the builder's
// scratch).
func checkBuilderReuse[F staticFilter](t *testing.T, name string, sets [][]uint64, reused, fresh func(hs []uint64) (F, error)) {
	t.Helper()
	var built []F
	var encs [][]byte
	for _, hs := range sets {
		f, err := reused(hs)
		if err != nil {
			t.Fatal(err)
		}
		built = append(built, f)
		enc, _ := f.MarshalBinary()
		encs = append(encs, enc)
	}
	for i, hs := range sets {
		checkNoFalseNegatives(t, name+" reused", built[i], hs)
		again, err := fresh(hs)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := again.MarshalBinary()
		c, _ := built[i].MarshalBinary()
		if !bytes.Equal(a, c) || !bytes.Equal(c, encs[i]) {
			t.Fatalf("%s: build %d differs between reused and fresh builder, or changed after later builds", name, i)
		}
	}
}

// binomialUpper returns a count that Binomial(n, p) exceeds with probability
// well under 1e-6 (mean + 5 standard deviations, plus a small-mean cushion).
func binomialUpper(n int, p float64) int {
	mean := float64(n) * p
	return int(math.Ceil(mean + 5*math.Sqrt(mean*(1-p)) + 5))
}

// binomialLower is the matching lower bound.
func binomialLower(n int, p float64) int {
	mean := float64(n) * p
	return int(math.Floor(mean - 5*math.Sqrt(mean*(1-p))))
}

// measureFP counts how many of m absent hashes f reports present.
func measureFP(f Filter, seed uint64, m int) int {
	rng := testRNG(seed ^ 0xab5e7ab5e7)
	fp := 0
	for i := 0; i < m; i++ {
		if f.MayContainHash(rng.Uint64()) {
			fp++
		}
	}
	return fp
}

// TestStaticFPRate checks F4 for the fixed-width filters on 2M absent keys:
// the target windows ([0.3%, 0.5%] at 8 bits, <= 0.003% at 16 bits) and a
// binomial band around 2^-bits. The absent stream is distinct from the
// member stream (a 64-bit collision among 3M values has probability ~1e-7).
func TestStaticFPRate(t *testing.T) {
	// The FP rate does not depend on n; 1M keys also checks the large
	// geometry, 200k keeps -short and -race quick.
	n := 1_000_000
	if testing.Short() || staticRaceEnabled {
		n = 200_000
	}
	const m = 2_000_000
	hs := randomHashes(1, n)
	for _, k := range staticKinds()[:3] {
		f, err := k.fromHash(new(FuseBuilder), hs)
		if err != nil {
			t.Fatal(err)
		}
		fp := measureFP(f, 2, m)
		rate := float64(fp) / m
		switch k.bits {
		case 8:
			if rate < 0.003 || rate > 0.005 {
				t.Errorf("%s: FP rate %.4f%% outside [0.3%%, 0.5%%]", k.name, 100*rate)
			}
		case 16:
			if rate > 0.00003 {
				t.Errorf("%s: FP rate %.5f%% above 0.003%%", k.name, 100*rate)
			}
		}
		p := math.Ldexp(1, -k.bits)
		if fp > binomialUpper(m, p) || fp < binomialLower(m, p) {
			t.Errorf("%s: %d false positives in %d, outside the binomial band around %g", k.name, fp, m, p*m)
		}
	}
}

// TestFuseFirstSeedSucceedsUsually backs the sizing constants: with the
// [FUSE] segment lengths and size factors, most builds of distinct random
// keys succeed on the first seed. If the sizing were too tight the peel
// would fail often and staticMaxAttempts would be the only thing saving us.
func TestFuseFirstSeedSucceedsUsually(t *testing.T) {
	layouts := map[string]func(int) staticLayout{"xor": xorLayout, "fuse3": fuse3Layout, "fuse4": fuse4Layout}
	for name, lf := range layouts {
		for _, n := range []int{100, 1000, 10_000, 100_000} {
			trials := 20
			if n == 100_000 {
				trials = 4
			}
			ok := 0
			var b FuseBuilder
			for tr := 0; tr < trials; tr++ {
				hs := randomHashes(uint64(1000*n+tr), n)
				l := lf(n)
				if b.attempt(&l, hs, staticSeed(0)) {
					ok++
				}
			}
			// [FUSE] reports construction success probabilities well
			// above one half at these sizes; require a clear majority.
			if ok*10 < trials*6 {
				t.Errorf("%s n=%d: first seed succeeded in only %d of %d builds", name, n, ok, trials)
			}
		}
	}
}

// TestFuseLayoutSizing pins the properties the sizing must keep: every slot
// index fits, segment lengths are powers of two within the cap, and the
// large-n space overheads match [FUSE] (1.125n for arity 3, 1.075n for
// arity 4, plus the arity-1 trailing segments).
func TestFuseLayoutSizing(t *testing.T) {
	for _, arity := range []uint32{3, 4} {
		for _, n := range []int{1, 2, 3, 10, 100, 1000, 12345, 1 << 20, 10_000_000, 1 << 30} {
			l := fuseLayout(arity, n)
			if l.segLen != 1<<l.segLog || l.segLog > fuseMaxSegmentLog || l.segCount < 1 {
				t.Fatalf("arity %d n=%d: bad geometry %+v", arity, n, l)
			}
			if uint64(l.size) != (uint64(l.segCount)+uint64(arity-1))*uint64(l.segLen) || uint64(l.size) < uint64(n) {
				t.Fatalf("arity %d n=%d: size %d inconsistent", arity, n, l.size)
			}
			if _, err := fuseLayoutFromHeader(arity, uint64(n), l.segLog, l.segCount, l.size); err != nil {
				t.Fatalf("arity %d n=%d: decoder rejects the builder's own layout: %v", arity, n, err)
			}
		}
		l := fuseLayout(arity, 1_000_000)
		ratio := float64(l.size) / 1e6
		want := map[uint32][2]float64{3: {1.125, 1.135}, 4: {1.075, 1.0875}}[arity]
		if ratio < want[0] || ratio > want[1] {
			t.Errorf("arity %d: %.4f slots per key at 1M, want [%v, %v]", arity, ratio, want[0], want[1])
		}
	}
}

// TestStaticByteFlipsCorrupt: every single-byte change of a valid encoding
// is rejected with ErrCorrupt (the CRC guarantees it), as is every
// truncation, by both Unmarshal and the type's UnmarshalBinary.
func TestStaticByteFlipsCorrupt(t *testing.T) {
	hs := randomHashes(3, 40)
	for _, k := range staticKinds() {
		f, err := k.fromHash(new(FuseBuilder), hs)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		for i := range enc {
			for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
				bad := append([]byte(nil), enc...)
				bad[i] ^= mask
				if _, err := Unmarshal(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: flip %#x at %d: Unmarshal err = %v", k.name, mask, i, err)
				}
				if _, err := k.unmarshal(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: flip %#x at %d: UnmarshalBinary err = %v", k.name, mask, i, err)
				}
			}
		}
		for n := 0; n < len(enc); n++ {
			if _, err := Unmarshal(enc[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: truncated to %d: err = %v", k.name, n, err)
			}
		}
		// A valid encoding of a different type is refused by UnmarshalBinary.
		other, _ := (&Xor8{}).MarshalBinary()
		if k.typ == TypeXor8 {
			other, _ = (&BinaryFuse8{}).MarshalBinary()
		}
		if _, err := k.unmarshal(other); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: wrong type accepted: %v", k.name, err)
		}
	}
}

// TestUnmarshalBinaryLeavesFilterOnError: a failed UnmarshalBinary does not
// half-overwrite the receiver.
func TestUnmarshalBinaryLeavesFilterOnError(t *testing.T) {
	hs := randomHashes(4, 1000)
	f, _ := BuildBinaryFuse8FromHashes(hs)
	enc, _ := f.MarshalBinary()
	enc[len(enc)/2] ^= 1
	if err := f.UnmarshalBinary(enc); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	checkNoFalseNegatives(t, "after failed UnmarshalBinary", f, hs)
}

// body helpers for hand-made (hostile but checksummed) encodings.
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fuseBody builds a fuse header with the given fields.
func fuseBody(n uint64, segLog uint8, segCount, size uint32, fps []byte) []byte {
	return cat(le64(1), le64(n), []byte{segLog}, le32(segCount), le32(size), fps)
}

// TestStaticDecodeRejectsImpossibleParameters: encodings with a valid CRC
// but parameters no encoder writes are refused with ErrCorrupt, without
// allocating what the header claims.
func TestStaticDecodeRejectsImpossibleParameters(t *testing.T) {
	cases := []decodeCase{
		{"xor8 version", TypeXor8, 9, cat(le64(1), le64(0), le32(0))},
		{"xor8 huge block", TypeXor8, 1, cat(le64(1), le64(5), le32(1<<31))},
		{"xor8 short fps", TypeXor8, 1, cat(le64(1), le64(5), le32(11), make([]byte, 32))},
		{"xor8 long fps", TypeXor8, 1, cat(le64(1), le64(5), le32(11), make([]byte, 34))},
		{"xor8 too many keys", TypeXor8, 1, cat(le64(1), le64(34), le32(11), make([]byte, 33))},
		{"xor8 keys but no slots", TypeXor8, 1, cat(le64(1), le64(3), le32(0))},
		{"xor8 slots but no keys", TypeXor8, 1, cat(le64(1), le64(0), le32(11), make([]byte, 33))},
		{"xor8 truncated header", TypeXor8, 1, cat(le64(1), le64(0))},
		{"fuse8 version", TypeBinaryFuse8, 0, fuseBody(0, 0, 0, 0, nil)},
		{"fuse8 segLog too big", TypeBinaryFuse8, 1, fuseBody(3, 19, 1, 3<<19, nil)},
		{"fuse8 size mismatch", TypeBinaryFuse8, 1, fuseBody(3, 2, 1, 13, make([]byte, 13))},
		{"fuse8 huge size", TypeBinaryFuse8, 1, fuseBody(3, 18, 1<<14-2, 1<<32-1, nil)},
		{"fuse8 claims 4G slots", TypeBinaryFuse8, 1, fuseBody(3, 18, 1<<14-2, 0, nil)},
		{"fuse8 short fps", TypeBinaryFuse8, 1, fuseBody(3, 2, 1, 12, make([]byte, 11))},
		{"fuse8 too many keys", TypeBinaryFuse8, 1, fuseBody(13, 2, 1, 12, make([]byte, 12))},
		{"fuse8 keys no segments", TypeBinaryFuse8, 1, fuseBody(3, 2, 0, 8, make([]byte, 8))},
		{"fuse8 empty with slots", TypeBinaryFuse8, 1, fuseBody(0, 0, 0, 4, make([]byte, 4))},
		{"fuse8 empty with segLog", TypeBinaryFuse8, 1, fuseBody(0, 3, 0, 0, nil)},
		{"fuse16 odd fps", TypeBinaryFuse16, 1, fuseBody(3, 2, 1, 12, make([]byte, 23))},
		{"fuse16 huge", TypeBinaryFuse16, 1, fuseBody(3, 18, 1<<14-2, 1<<32-1<<18, nil)},
	}
	cases = append(cases, generalDecodeCases()...)
	for _, c := range cases {
		enc := sealEnvelope(c.typ, c.ver, c.body)
		f, err := Unmarshal(enc)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Unmarshal = %v, %v; want ErrCorrupt", c.name, f, err)
		}
		if b := bytesAllocated(func() { _, _ = Unmarshal(enc) }); b > 1<<16 {
			t.Errorf("%s: rejecting the encoding allocated %d bytes", c.name, b)
		}
	}
}
