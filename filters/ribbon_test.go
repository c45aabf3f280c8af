package filters

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil/golden"
)

// ribbonConfigs are the (band width, result bits) pairs the shared tests
// run: both band widths, the narrowest and widest results, and the widths
// the engine uses.
var ribbonConfigs = []RibbonOptions{
	{BandWidth: 64, ResultBits: 1},
	{BandWidth: 64, ResultBits: 8},
	{BandWidth: 64, ResultBits: 16},
	{BandWidth: 128, ResultBits: 1},
	{BandWidth: 128, ResultBits: 7},
	{BandWidth: 128, ResultBits: 10},
	{BandWidth: 128, ResultBits: 16},
}

func (o RibbonOptions) String() string { return fmt.Sprintf("w%d-r%d", o.BandWidth, o.ResultBits) }

// ribbonRoundTrip encodes f, decodes it with Unmarshal and with
// UnmarshalBinary, and checks both re-encode to the same bytes, report the
// same Len and options, and answer the probe hashes exactly as f does.
func ribbonRoundTrip(t *testing.T, f *Ribbon, probes []uint64) []*Ribbon {
	t.Helper()
	enc, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != f.SizeInBytes() {
		t.Fatalf("SizeInBytes %d, encoding is %d bytes", f.SizeInBytes(), len(enc))
	}
	g, err := Unmarshal(enc)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	gr, ok := g.(*Ribbon)
	if !ok {
		t.Fatalf("Unmarshal gave %T", g)
	}
	var h Ribbon
	if err := h.UnmarshalBinary(enc); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	out := []*Ribbon{gr, &h}
	for _, d := range out {
		again, _ := d.MarshalBinary()
		if !bytes.Equal(again, enc) {
			t.Fatal("re-encoding after decode differs")
		}
		if d.Len() != f.Len() || d.Options() != f.Options() {
			t.Fatalf("decoded Len %d options %v, want %d %v", d.Len(), d.Options(), f.Len(), f.Options())
		}
		for _, p := range probes {
			if d.MayContainHash(p) != f.MayContainHash(p) {
				t.Fatalf("decoded filter answers %#x differently", p)
			}
		}
	}
	return out
}

// TestRibbonNoFalseNegatives checks F1 on random sets of 0, 1, 2, ... 10k
// keys for every configuration, before and after a round trip.
func TestRibbonNoFalseNegatives(t *testing.T) {
	sizes := []int{0, 1, 2, 3, 5, 64, 100, 129, 1000, 10_000}
	for _, o := range ribbonConfigs {
		var b RibbonBuilder
		for _, n := range sizes {
			hs := randomHashes(uint64(n)*17+3, n)
			f, err := b.Build(hs, o)
			if err != nil {
				t.Fatalf("%v n=%d: %v", o, n, err)
			}
			if f.Len() != n {
				t.Fatalf("%v n=%d: Len %d", o, n, f.Len())
			}
			what := fmt.Sprintf("%v n=%d", o, n)
			checkNoFalseNegatives(t, what, f, hs)
			for _, d := range ribbonRoundTrip(t, f, randomHashes(uint64(n)*17+4, 2000)) {
				checkNoFalseNegatives(t, what+" decoded", d, hs)
			}
		}
	}
}

// TestRibbonLargeSet checks F1 at n = 10^6 for both band widths (under the
// race detector for the engine's default only) and the round trip there.
func TestRibbonLargeSet(t *testing.T) {
	if testing.Short() {
		t.Skip("1M-key builds")
	}
	hs := randomHashes(1_000_000*17+3, 1_000_000)
	var b RibbonBuilder
	for _, o := range []RibbonOptions{{BandWidth: 128, ResultBits: 7}, {BandWidth: 64, ResultBits: 8}} {
		if staticRaceEnabled && o.BandWidth == 64 {
			continue
		}
		f, err := b.Build(hs, o)
		if err != nil {
			t.Fatalf("%v: %v", o, err)
		}
		if f.Len() != len(hs) {
			t.Fatalf("%v: Len %d", o, f.Len())
		}
		checkNoFalseNegatives(t, o.String()+" n=1M", f, hs)
		for _, d := range ribbonRoundTrip(t, f, nil) {
			checkNoFalseNegatives(t, o.String()+" n=1M decoded", d, hs[:10_000])
		}
	}
}

// TestRibbonByteKeys exercises BuildRibbon and MayContain on byte keys.
func TestRibbonByteKeys(t *testing.T) {
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user/%08d", i)
	}
	f, err := BuildRibbon(keys, RibbonOptions{ResultBits: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !f.MayContain(k) || !f.MayContainHash(Hash(k)) {
			t.Fatalf("false negative for %q", k)
		}
	}
	// 5000 absent keys at 2^-16 give 0.08 false positives on average.
	fp := 0
	for i := 0; i < 5000; i++ {
		if f.MayContain(fmt.Appendf(nil, "absent/%08d", i)) {
			fp++
		}
	}
	if fp > binomialUpper(5000, math.Ldexp(1, -16)) {
		t.Fatalf("%d false positives of 5000 at 16 bits", fp)
	}
}

// TestRibbonEmptyRejectsEverything: n = 0 builds a filter that reports
// every key absent, before and after a round trip.
func TestRibbonEmptyRejectsEverything(t *testing.T) {
	probe := randomHashes(99, 50_000)
	for _, o := range ribbonConfigs {
		for _, input := range [][]uint64{nil, {}} {
			f, err := BuildRibbonFromHashes(input, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range append([]*Ribbon{f}, ribbonRoundTrip(t, f, probe[:100])...) {
				if g.Len() != 0 {
					t.Fatalf("%v: Len %d", o, g.Len())
				}
				for _, h := range probe {
					if g.MayContainHash(h) {
						t.Fatalf("%v: empty filter reports %#x present", o, h)
					}
				}
			}
		}
	}
}

// TestRibbonDuplicates: inputs full of duplicates build, have no false
// negatives, and Len counts distinct hashes; the duplicates are removed
// before sizing, so the filter is exactly the one the distinct set gives.
func TestRibbonDuplicates(t *testing.T) {
	cases := duplicateCases()
	for _, o := range ribbonConfigs {
		var b RibbonBuilder
		for _, c := range cases {
			f, err := b.Build(c.hs, o)
			if err != nil {
				t.Fatalf("%v %s: %v", o, c.name, err)
			}
			if f.Len() != len(c.distinct) {
				t.Fatalf("%v %s: Len %d, want %d", o, c.name, f.Len(), len(c.distinct))
			}
			checkNoFalseNegatives(t, o.String()+" "+c.name, f, c.hs)
			want, err := BuildRibbonFromHashes(c.distinct, o)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := f.MarshalBinary()
			d, _ := want.MarshalBinary()
			if !bytes.Equal(a, d) {
				t.Fatalf("%v %s: filter differs from the one built from the distinct keys", o, c.name)
			}
		}
	}
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("a")}
	f, err := BuildRibbon(keys, RibbonOptions{ResultBits: 8})
	if err != nil || f.Len() != 2 || !f.MayContain([]byte("a")) || !f.MayContain([]byte("b")) {
		t.Fatalf("duplicate byte keys: err=%v", err)
	}
}

// TestRibbonInputNotModified: the builder only reads the caller's slice.
func TestRibbonInputNotModified(t *testing.T) {
	hs := randomHashes(11, 1000)
	hs = append(hs, hs[:500]...)
	orig := append([]uint64(nil), hs...)
	if _, err := BuildRibbonFromHashes(hs, RibbonOptions{ResultBits: 8}); err != nil {
		t.Fatal(err)
	}
	for i := range hs {
		if hs[i] != orig[i] {
			t.Fatalf("input slice modified at %d", i)
		}
	}
}

// TestRibbonBuilderReuse: filters from a reused builder equal fresh builds
// and do not change when the builder builds again (no aliasing).
func TestRibbonBuilderReuse(t *testing.T) {
	for _, o := range ribbonConfigs {
		var b RibbonBuilder
		sets := [][]uint64{randomHashes(21, 20_000), randomHashes(22, 500), randomHashes(23, 30_000), nil, randomHashes(24, 7)}
		checkBuilderReuse(t, o.String(), sets,
			func(hs []uint64) (*Ribbon, error) { return b.Build(hs, o) },
			func(hs []uint64) (*Ribbon, error) { return BuildRibbonFromHashes(hs, o) })
	}
}

// TestRibbonInvalidOptions: out-of-range widths are ErrInvalidArgument.
func TestRibbonInvalidOptions(t *testing.T) {
	for _, o := range []RibbonOptions{
		{ResultBits: 0}, {ResultBits: 17}, {ResultBits: -1},
		{ResultBits: 8, BandWidth: 32}, {ResultBits: 8, BandWidth: 256}, {ResultBits: 8, BandWidth: -64},
	} {
		if _, err := BuildRibbonFromHashes([]uint64{1, 2, 3}, o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: err = %v, want ErrInvalidArgument", o, err)
		}
	}
	f, err := BuildRibbonFromHashes([]uint64{1}, RibbonOptions{ResultBits: 3})
	if err != nil || f.Options() != (RibbonOptions{ResultBits: 3, BandWidth: 128}) {
		t.Fatalf("default band width: %v %v", f.Options(), err)
	}
}

// TestRibbonFPRate checks F4 on 2M absent keys for result widths 4, 7, 8,
// 10 and 16 at both band widths: the measured rate lies in [0.7, 1.3] times
// 2^-bits and inside a binomial band of five standard deviations around it.
// At 16 bits 2M queries expect only 30.5 hits, for which [0.7, 1.3] is
// under two standard deviations wide, so there the binomial band alone
// applies: the fixed window would fail correct filters by chance. The absent stream is independent of the
// member stream (testRNG).
func TestRibbonFPRate(t *testing.T) {
	n := 1_000_000
	if testing.Short() || staticRaceEnabled {
		n = 100_000 // the rate does not depend on n; the race detector is slow
	}
	const m = 2_000_000
	hs := randomHashes(31, n)
	var b RibbonBuilder
	for _, w := range []int{64, 128} {
		for _, bits := range []int{4, 7, 8, 10, 16} {
			o := RibbonOptions{BandWidth: w, ResultBits: bits}
			f, err := b.Build(hs, o)
			if err != nil {
				t.Fatal(err)
			}
			fp := measureFP(f, uint64(100*w+bits), m)
			p := math.Ldexp(1, -bits)
			ratio := float64(fp) / (p * m)
			if bits < 16 && (ratio < 0.7 || ratio > 1.3) {
				t.Errorf("%v: %d false positives in %d = %.3fx of 2^-%d, outside [0.7, 1.3]", o, fp, m, ratio, bits)
			}
			if fp > binomialUpper(m, p) || fp < binomialLower(m, p) {
				t.Errorf("%v: %d false positives in %d, outside the binomial band around %.1f", o, fp, m, p*m)
			}
		}
	}
}

// TestRibbonFirstSeedSucceedsUsually backs the sizing: at the overhead
// ribbonBlocks gives, most builds succeed on the first seed (it was fitted
// for 90%; a clear majority is asserted so the test is not flaky). Were the
// sizing too tight, ribbonMaxAttempts would be doing the work.
func TestRibbonFirstSeedSucceedsUsually(t *testing.T) {
	var b RibbonBuilder
	for _, w := range []int{64, 128} {
		for _, n := range []int{100, 1000, 10_000, 100_000} {
			trials := 20
			if n == 100_000 {
				trials = 5
			}
			ok := 0
			for tr := 0; tr < trials; tr++ {
				keys := b.sortMixed(randomHashes(uint64(7000*n+tr), n), staticSeed(0))
				if b.band(keys, ribbonBlocks(n, w), w) {
					ok++
				}
			}
			if ok*10 < trials*6 {
				t.Errorf("w=%d n=%d: first seed succeeded in %d of %d builds", w, n, ok, trials)
			}
		}
	}
}

// TestRibbonSizing pins the space properties of ribbonBlocks: enough slots
// for every key and for at least 65 starts, whole blocks, and at n = 10^6
// the space target of at most 1.10x the information-theoretic bound for the
// 128-wide band (slots/n is that ratio: each slot costs exactly ResultBits
// bits and the bound is ResultBits bits per key).
func TestRibbonSizing(t *testing.T) {
	for _, w := range []int{64, 128} {
		for _, n := range []int{1, 2, 3, 10, 100, 1000, 12345, 1 << 20, 1 << 30} {
			slots := uint64(ribbonBlocks(n, w)) * 64
			if slots < uint64(n) || slots < uint64(w)+64 {
				t.Fatalf("w=%d n=%d: %d slots", w, n, slots)
			}
		}
	}
	if r := float64(ribbonBlocks(1_000_000, 128)) * 64 / 1e6; r > 1.10 {
		t.Errorf("w=128: %.4f slots per key at 1M, want <= 1.10", r)
	}
}

// TestRibbonBandFailsWhenUnsolvable: the elimination reports failure
// (rather than a wrong filter) for a system with more equations than
// slots, whose random right-hand sides are inconsistent with near
// certainty.
func TestRibbonBandFailsWhenUnsolvable(t *testing.T) {
	var b RibbonBuilder
	for _, w := range []int{64, 128} {
		keys := b.sortMixed(randomHashes(5, 400), staticSeed(0))
		if b.band(keys, uint32(w/64+1), w) {
			t.Errorf("w=%d: 400 equations banded into %d slots", w, w+64)
		}
	}
}

// TestRibbonQueryAllocatesNothing: queries do not allocate.
func TestRibbonQueryAllocatesNothing(t *testing.T) {
	for _, o := range ribbonConfigs {
		f, _ := BuildRibbonFromHashes(randomHashes(1, 1000), o)
		if a := testing.AllocsPerRun(100, func() { f.MayContainHash(12345) }); a != 0 {
			t.Errorf("%v: %v allocations per query", o, a)
		}
	}
}

// TestRibbonByteFlipsCorrupt: every single-byte change and every truncation
// of a valid encoding is ErrCorrupt from Unmarshal and UnmarshalBinary, and
// UnmarshalBinary refuses another type's valid encoding.
func TestRibbonByteFlipsCorrupt(t *testing.T) {
	for _, o := range []RibbonOptions{{BandWidth: 64, ResultBits: 3}, {BandWidth: 128, ResultBits: 8}} {
		f, err := BuildRibbonFromHashes(randomHashes(3, 40), o)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		var g Ribbon
		for i := range enc {
			for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
				bad := append([]byte(nil), enc...)
				bad[i] ^= mask
				if _, err := Unmarshal(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%v: flip %#x at %d: Unmarshal err = %v", o, mask, i, err)
				}
				if err := g.UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%v: flip %#x at %d: UnmarshalBinary err = %v", o, mask, i, err)
				}
			}
		}
		for n := 0; n < len(enc); n++ {
			if _, err := Unmarshal(enc[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v: truncated to %d: err = %v", o, n, err)
			}
		}
		other, _ := (&BinaryFuse8{}).MarshalBinary()
		if err := g.UnmarshalBinary(other); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("wrong type accepted: %v", err)
		}
	}
	// A failed UnmarshalBinary leaves the receiver as it was.
	hs := randomHashes(4, 1000)
	f, _ := BuildRibbonFromHashes(hs, RibbonOptions{ResultBits: 8})
	enc, _ := f.MarshalBinary()
	enc[len(enc)/2] ^= 1
	if err := f.UnmarshalBinary(enc); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	checkNoFalseNegatives(t, "after failed UnmarshalBinary", f, hs)
}

// ribbonBody builds a body with the given header fields and nwords words.
func ribbonBody(n uint64, bits, width uint8, blocks uint32, nwords int) []byte {
	return cat(le64(1), le64(n), []byte{bits, width}, le32(blocks), make([]byte, 8*nwords))
}

// TestRibbonDecodeRejectsImpossibleParameters: checksummed encodings with
// parameters no encoder writes are ErrCorrupt, and rejecting them does not
// allocate what the header claims.
func TestRibbonDecodeRejectsImpossibleParameters(t *testing.T) {
	cases := []decodeCase{
		{"version", TypeRibbon, 2, ribbonBody(0, 8, 128, 0, 0)},
		{"bits 0", TypeRibbon, 1, ribbonBody(5, 0, 128, 3, 0)},
		{"bits 17", TypeRibbon, 1, ribbonBody(5, 17, 128, 3, 51)},
		{"width 32", TypeRibbon, 1, ribbonBody(5, 8, 32, 3, 24)},
		{"width 0", TypeRibbon, 1, ribbonBody(5, 8, 0, 3, 24)},
		{"keys no blocks", TypeRibbon, 1, ribbonBody(5, 8, 128, 0, 0)},
		{"blocks no keys", TypeRibbon, 1, ribbonBody(0, 8, 128, 3, 24)},
		{"too few slots w128", TypeRibbon, 1, ribbonBody(5, 8, 128, 2, 16)},
		{"too few slots w64", TypeRibbon, 1, ribbonBody(5, 8, 64, 1, 8)},
		{"too many keys", TypeRibbon, 1, ribbonBody(193, 8, 128, 3, 24)},
		{"short words", TypeRibbon, 1, ribbonBody(5, 8, 128, 3, 23)},
		{"long words", TypeRibbon, 1, ribbonBody(5, 8, 128, 3, 25)},
		{"huge blocks", TypeRibbon, 1, ribbonBody(5, 16, 128, 1<<32-1, 0)},
		{"truncated header", TypeRibbon, 1, cat(le64(1), le64(5))},
		{"empty body", TypeRibbon, 1, nil},
	}
	for _, c := range cases {
		enc := sealEnvelope(c.typ, c.ver, c.body)
		if f, err := Unmarshal(enc); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Unmarshal = %v, %v; want ErrCorrupt", c.name, f, err)
		}
		var g Ribbon
		if err := g.UnmarshalBinary(enc); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: UnmarshalBinary = %v; want ErrCorrupt", c.name, err)
		}
		if b := bytesAllocated(func() { _, _ = Unmarshal(enc) }); b > 1<<16 {
			t.Errorf("%s: rejecting the encoding allocated %d bytes", c.name, b)
		}
	}
	// The smallest valid shapes are accepted.
	for _, body := range [][]byte{ribbonBody(0, 1, 64, 0, 0), ribbonBody(1, 8, 64, 2, 16), ribbonBody(192, 2, 128, 3, 6)} {
		if _, err := Unmarshal(sealEnvelope(TypeRibbon, 1, body)); err != nil {
			t.Errorf("valid body %x rejected: %v", body[:22], err)
		}
	}
}

// TestRibbonGoldenBytes pins the encoding of small filters (and, through
// the checksum of a 1000-key encoding, the hashing, sizing and solver that
// decide every word), so the format cannot drift by accident. A deliberate
// change bumps ribbonVersion and regenerates with -update.
func TestRibbonGoldenBytes(t *testing.T) {
	for _, o := range []RibbonOptions{{BandWidth: 64, ResultBits: 5}, {BandWidth: 128, ResultBits: 8}} {
		f, err := BuildRibbon(goldenKeys, o)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		big, err := BuildRibbonFromHashes(randomHashes(2024, 1000), o)
		if err != nil {
			t.Fatal(err)
		}
		bigEnc, _ := big.MarshalBinary()
		got := fmt.Sprintf("%x\n1000-key encoding: %d bytes, crc %x\n", enc, len(bigEnc), bigEnc[len(bigEnc)-4:])
		golden.Check(t, "Ribbon-"+o.String(), got)
		g, err := Unmarshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range goldenKeys {
			if !g.MayContain(key) {
				t.Fatalf("%v: golden filter lost %q", o, key)
			}
		}
	}
}

// ribbonSeedEncodings returns valid encodings of a few small filters.
func ribbonSeedEncodings(t testing.TB) [][]byte {
	var out [][]byte
	for i, n := range []int{0, 1, 2, 20} {
		o := ribbonConfigs[(3*i+1)%len(ribbonConfigs)]
		f, err := BuildRibbonFromHashes(randomHashes(uint64(n)+77, n), o)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := f.MarshalBinary()
		out = append(out, enc)
	}
	return out
}

// FuzzRibbonDecode: the fuzzer's bytes are decoded as a whole encoding, as
// the body of a checksummed envelope of type Ribbon (so mutations reach the
// parameter checks behind the CRC), and with their own body resealed. Each
// outcome is ErrCorrupt or a filter that re-encodes to the same bytes and
// answers queries without panicking (invariant F3).
func FuzzRibbonDecode(f *testing.F) {
	for _, enc := range ribbonSeedEncodings(f) {
		f.Add(enc)
		f.Add(enc[envelopeHeaderSize : len(enc)-envelopeTrailer])
	}
	f.Add([]byte{})
	f.Add([]byte("SVKF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRibbonDecode(t, data)
		checkRibbonDecode(t, sealEnvelope(TypeRibbon, ribbonVersion, data))
		if len(data) >= envelopeHeaderSize+envelopeTrailer {
			checkRibbonDecode(t, sealEnvelope(TypeRibbon, data[5], data[envelopeHeaderSize:len(data)-envelopeTrailer]))
		}
	})
}

func checkRibbonDecode(t *testing.T, enc []byte) {
	var r Ribbon
	rerr := r.UnmarshalBinary(enc)
	g, err := Unmarshal(enc)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Unmarshal error %v does not wrap ErrCorrupt", err)
		}
		if rerr == nil {
			t.Fatalf("UnmarshalBinary accepted what Unmarshal rejected (%v)", err)
		}
		return
	}
	if _, ok := g.(*Ribbon); ok && rerr != nil {
		t.Fatalf("Unmarshal accepted a Ribbon that UnmarshalBinary rejected: %v", rerr)
	}
	checkDecodedFilter(t, g, enc, 256)
}

// TestRibbonFuzzCorpus regenerates testdata/fuzz/FuzzRibbonDecode when
// SIEVEKV_WRITE_CORPUS=1; otherwise checks the committed corpus exists.
func TestRibbonFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRibbonDecode")
	if os.Getenv("SIEVEKV_WRITE_CORPUS") == "" {
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) < 3 {
			t.Fatalf("committed corpus missing or too small (%v)", err)
		}
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, enc := range ribbonSeedEncodings(t) {
		body := enc[envelopeHeaderSize : len(enc)-envelopeTrailer]
		variants := [][]byte{enc, body[:len(body)/2]}
		if len(body) > ribbonHeaderSize {
			mut := append([]byte(nil), body...)
			mut[len(mut)-1] ^= 0x5a // a different but valid filter
			variants = append(variants, sealEnvelope(TypeRibbon, enc[5], mut))
		}
		for j, v := range variants {
			content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(v)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-n%d-%d", i, j)), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
