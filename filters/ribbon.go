package filters

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// The standard Ribbon filter of [RIBBON]:
//
//	[RIBBON] P. C. Dillinger, S. Walzer. "Ribbon filter: practically smaller
//	         than Bloom and Xor". arXiv:2103.02515, 2021.
//
// A filter of m slots (m a multiple of 64) stores a solution matrix S of m
// rows and ResultBits columns. Each key x is hashed to a start s(x) in
// [0, m-w], a w-bit coefficient vector c(x) whose bit 0 is one, and a result
// r(x) of ResultBits bits; the builder finds S such that for every key
//
//	XOR over j < w with c(x)_j = 1 of S[s(x)+j]  ==  r(x)
//
// (a banded linear system over GF(2)), and a query evaluates the left side
// and compares. For a key that was not added, r(x) is uniform and
// independent of (s(x), c(x)) and hence of the left side, so the FP rate is
// exactly 2^-ResultBits whatever S is (invariant F4) — free rows of S may be
// left zero.
//
// Construction is [RIBBON]'s "Rapid Incremental Boolean Banding ON the fly":
// each equation is inserted at the row of its leading
// coefficient; if that row is taken, the stored row is XORed in (clearing
// the leading one) and the equation moves on to its next set bit; it either
// lands in a free row, or reduces to 0 = 0 (redundant: consistent) or to
// 0 = r != 0 (the system is unsolvable for this seed). Back-substitution
// from the last row fills S. Inserting keys in order of their start keeps
// the rows touched in cache (our sort doubles as the deduplication).
//
// Storage is interleaved column-major by 64-row block ([RIBBON]'s
// "interleaved column-major" layout): block j holds ResultBits words, word k carrying
// column k of rows 64j..64j+63. A key's band of w rows touches two (w = 64)
// or three (w = 128) adjacent blocks, so a query reads
// 2*ResultBits or 3*ResultBits consecutive words.

const (
	// ribbonMaxAttempts bounds the seeds one build tries. The sizing below
	// makes a single attempt succeed with probability about 0.9 or more at
	// every n (TestRibbonFirstSeedSucceedsUsually), so a hundred failures
	// in a row happen with probability below 10^-90: only adversarial
	// input gets there, and it gets ErrBuildFailed.
	ribbonMaxAttempts = 100

	// ribbonCoeffSalt derives the coefficient words from the mixed hash;
	// any odd constant unrelated to the others works.
	ribbonCoeffSalt  = 0x2545f4914f6cdd1d
	ribbonCoeffSalt2 = 0xd6e8feb86659fd93

	// ribbonDefaultBandWidth: see RibbonOptions.BandWidth.
	ribbonDefaultBandWidth = 128
)

// Sizing fits, eps = A + B*log2(n); see ribbonBlocks.
const (
	ribbonEps64A  = -0.056
	ribbonEps64B  = 0.0091
	ribbonEps128A = -0.022
	ribbonEps128B = 0.0035
)

// RibbonOptions configures BuildRibbon.
type RibbonOptions struct {
	// ResultBits is the number of solution columns, 1 to 16: the
	// false-positive rate is 2^-ResultBits.
	ResultBits int
	// BandWidth is w, the number of consecutive slots a key's equation
	// spans: 64 or 128; 0 means 128. A wider band needs less slack for the
	// elimination to succeed ([RIBBON]: the overhead needed
	// shrinks roughly as 1/w) at the cost of a third block per query.
	BandWidth int
}

func (o RibbonOptions) withDefaults() (RibbonOptions, error) {
	if o.BandWidth == 0 {
		o.BandWidth = ribbonDefaultBandWidth
	}
	if o.BandWidth != 64 && o.BandWidth != 128 {
		return o, invalidf("ribbon band width must be 64 or 128, got %d", o.BandWidth)
	}
	if o.ResultBits < 1 || o.ResultBits > 16 {
		return o, invalidf("ribbon result width must be 1 to 16 bits, got %d", o.ResultBits)
	}
	return o, nil
}

// Ribbon is a static standard Ribbon filter ([RIBBON]): a banded GF(2)
// linear system solved once for the complete key set. Its false-positive
// rate is 2^-ResultBits for any width from 1 to 16 (invariant F4), and at
// n = 10^6 with the default 128-wide band it costs about 1.05 * ResultBits
// bits per key (docs/filters.md, "Ribbon filter", has the measured figures).
// Queries read one contiguous run of 2 or 3 blocks, allocate nothing and are
// safe from many goroutines at once.
type Ribbon struct {
	seed      uint64
	n         uint64 // distinct keys built from
	numStarts uint64 // blocks*64 - width + 1: how many starts a key may take
	blocks    uint32 // 64-slot blocks; 0 only for the empty filter
	bits      uint8  // result width, 1..16
	width     uint8  // band width w: 64 or 128
	mask      uint32 // (1 << bits) - 1
	// data holds (blocks+1)*bits words: block j, column k at index
	// j*bits+k, bit t of that word is row 64j+t of column k. The last
	// block is zero padding that is not encoded (see MayContainHash).
	data []uint64
}

// ribbonVersion is the body format version written by MarshalBinary.
//
//	1: seed u64, n u64, result bits u8, band width u8, blocks u32, then
//	   blocks*resultBits little-endian u64 solution words.
const ribbonVersion = 1

// ribbonHeaderSize is the encoded size of the body fields before the words.
const ribbonHeaderSize = 8 + 8 + 1 + 1 + 4

// ribbonBlocks returns the number of 64-slot blocks for n distinct keys and
// band width w: (1+eps)*n + 64 slots rounded up to a whole block, and never
// fewer than w + 64 slots, so a key has at least 65 starts.
//
// eps is the slack the on-the-fly elimination needs. [RIBBON] (its analysis
// and experiments) shows that standard Ribbon fails when some stretch of
// the band is overloaded, so the overhead needed for a constant success
// probability grows with log n for a fixed w and shrinks as w grows; its
// abstract reports space overheads below 10%. The constants
// are our own fits, eps = A + B*log2(n), to the smallest overhead at which
// at least 90% of 20 to 40 random builds succeeded on the first seed,
// measured by TestRibbonCalibrate (SIEVEKV_RIBBON_CALIBRATE=1) for n = 2^7
// to 2^20 (docs/filters.md, "Ribbon filter", has the table): about 4% at 2^19
// for w = 128 and 10.5% for w = 64. Below about 2^11 keys the edges of the
// band dominate and the need is a constant 64 slots rather than a
// fraction, hence the + 64.
func ribbonBlocks(n int, w int) uint32 {
	if n == 0 {
		return 0
	}
	lg := math.Log2(float64(max(n, 2)))
	eps := ribbonEps128A + ribbonEps128B*lg
	if w == 64 {
		eps = ribbonEps64A + ribbonEps64B*lg
	}
	eps = max(eps, 0)
	slots := uint64(math.Ceil(float64(n)*(1+eps))) + 64
	slots = max(slots, uint64(w)+64)
	return uint32((slots + 63) / 64)
}

// RibbonBuilder builds Ribbon filters and keeps its scratch buffers between
// builds: about 8 bytes per key for the sorted hashes plus 10 (w = 64) or
// 18 (w = 128) bytes per slot for the band being eliminated.
//
// Ownership: a filter returned by a RibbonBuilder owns its solution words;
// they never alias the builder's scratch, so the builder may be reused (or
// dropped) at once and the filter kept. The builder only reads the hashes
// slice it is given and never retains it. The zero value is ready to use.
// A RibbonBuilder is not safe for concurrent use; use one per goroutine.
type RibbonBuilder struct {
	sorted  []uint64 // mixed hashes, sorted and deduplicated
	hist    []uint32 // counting-sort buckets
	coeffLo []uint64 // per slot: coefficient bits 0..63 (bit 0 set iff the row is taken)
	coeffHi []uint64 // per slot: coefficient bits 64..127 (w = 128 only)
	results []uint16 // per slot: right-hand side
}

// BuildRibbon builds a Ribbon filter from keys. Duplicate keys are allowed
// and count once; an empty set gives a filter that reports every key absent.
func BuildRibbon(keys [][]byte, opts RibbonOptions) (*Ribbon, error) {
	return BuildRibbonFromHashes(hashKeys(keys), opts)
}

// BuildRibbonFromHashes builds a Ribbon filter from keys' Hash values, which
// may contain duplicates. The slice is read, not retained.
func BuildRibbonFromHashes(hashes []uint64, opts RibbonOptions) (*Ribbon, error) {
	return new(RibbonBuilder).Build(hashes, opts)
}

// Build is BuildRibbonFromHashes reusing b's scratch buffers. The filter
// does not alias b.
func (b *RibbonBuilder) Build(hashes []uint64, opts RibbonOptions) (*Ribbon, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("filters: ribbon: %w", err)
	}
	if len(hashes) > staticMaxKeys {
		return nil, fmt.Errorf("filters: ribbon: %w", invalidf("%d keys exceed the maximum of %d", len(hashes), staticMaxKeys))
	}
	f := &Ribbon{bits: uint8(opts.ResultBits), width: uint8(opts.BandWidth), mask: uint32(widthMask(uint(opts.ResultBits)))}
	if len(hashes) == 0 {
		return f, nil
	}
	for attempt := 0; attempt < ribbonMaxAttempts; attempt++ {
		seed := staticSeed(attempt)
		keys := b.sortMixed(hashes, seed)
		blocks := ribbonBlocks(len(keys), opts.BandWidth)
		if b.band(keys, blocks, opts.BandWidth) {
			f.seed, f.n, f.blocks = seed, uint64(len(keys)), blocks
			f.numStarts = uint64(blocks)*64 - uint64(opts.BandWidth) + 1
			f.data = b.solve(blocks, opts.BandWidth, opts.ResultBits)
			return f, nil
		}
	}
	return nil, fmt.Errorf("filters: ribbon (w=%d, %d bits): build from %d hashes: %w (%d seeds)",
		opts.BandWidth, opts.ResultBits, len(hashes), ErrBuildFailed, ribbonMaxAttempts)
}

// sortMixed mixes every hash with seed and returns them sorted and without
// duplicates (aliasing b.sorted). Sorting by the mixed hash sorts by start
// position, since the start is a monotone function of it, so the banding
// walks the slot arrays forward; and equal input hashes give equal mixed
// hashes (the mix is a bijection), so deduplication is a pass over adjacent
// values. A counting sort on the top bits into buckets of about four keys,
// then a sort of each bucket, costs far less than a full comparison sort.
func (b *RibbonBuilder) sortMixed(hashes []uint64, seed uint64) []uint64 {
	n := len(hashes)
	buckets := uint64(max(n/4, 1))
	b.hist = staticGrowZero(b.hist, int(buckets)+1)
	b.sorted = staticGrow(b.sorted, n)
	hist, sorted := b.hist, b.sorted
	for _, h := range hashes {
		hist[reduce64(staticMix(h, seed), buckets)+1]++
	}
	for i := 1; i < len(hist); i++ {
		hist[i] += hist[i-1]
	}
	// hist[i] is now the start of bucket i; scatter advances it to the end.
	for _, h := range hashes {
		hh := staticMix(h, seed)
		s := reduce64(hh, buckets)
		sorted[hist[s]] = hh
		hist[s]++
	}
	start := uint32(0)
	for i := uint64(0); i < buckets; i++ {
		end := hist[i]
		if end-start > 1 {
			slices.Sort(sorted[start:end])
		}
		start = end
	}
	return slices.Compact(sorted)
}

// ribbonStart, ribbonCoeff, ribbonCoeffHi and ribbonResult derive a key's
// start, coefficient words and result from its mixed hash. The start takes
// the high bits of hh (multiply-shift), the result its low 16 bits, and the
// coefficients come from a second mix (bits 64..127 from the high half of a
// multiply of the first word, which is not GF(2)-linear in it), so the
// three are independent for practical purposes; bit 0 of the coefficient
// is forced to one ([RIBBON]: the equation's leading column is its start).
func ribbonStart(hh, numStarts uint64) uint64 { return reduce64(hh, numStarts) }
func ribbonCoeff(hh uint64) uint64            { return mix64(hh+ribbonCoeffSalt) | 1 }
func ribbonCoeffHi(hh uint64) uint64 {
	hi, _ := bits.Mul64(ribbonCoeff(hh), ribbonCoeffSalt2)
	return hi
}
func ribbonResult(hh uint64, mask uint32) uint16 {
	return uint16(uint32(hh) & mask)
}

// band runs the on-the-fly elimination of keys (sorted mixed hashes) into
// blocks*64 slots and reports whether every equation was absorbed. The
// result is stored unmasked (16 bits); solve uses only the columns it needs.
func (b *RibbonBuilder) band(keys []uint64, blocks uint32, w int) bool {
	m := int(blocks) * 64
	numStarts := uint64(m - w + 1)
	b.coeffLo = staticGrowZero(b.coeffLo, m)
	b.results = staticGrowZero(b.results, m)
	lo, res := b.coeffLo, b.results
	if w == 64 {
		for _, hh := range keys {
			s := ribbonStart(hh, numStarts)
			c := ribbonCoeff(hh)
			r := ribbonResult(hh, 0xffff)
			// Invariant: every bit of c at offset j stands for slot s+j,
			// and no set bit lies at or beyond m (the start leaves w slots,
			// and XORing a stored row keeps the bits within the union of
			// the two spans, which ends no later than the first).
			for {
				if lo[s] == 0 {
					lo[s], res[s] = c, r
					break
				}
				c ^= lo[s]
				r ^= res[s]
				if c == 0 {
					if r != 0 {
						return false
					}
					break // redundant: implied by the stored rows
				}
				tz := bits.TrailingZeros64(c)
				c >>= uint(tz)
				s += uint64(tz)
			}
		}
		return true
	}
	b.coeffHi = staticGrowZero(b.coeffHi, m)
	hi := b.coeffHi
	for _, hh := range keys {
		s := ribbonStart(hh, numStarts)
		cl, ch := ribbonCoeff(hh), ribbonCoeffHi(hh)
		r := ribbonResult(hh, 0xffff)
		for {
			if lo[s] == 0 {
				lo[s], hi[s], res[s] = cl, ch, r
				break
			}
			cl ^= lo[s]
			ch ^= hi[s]
			r ^= res[s]
			var tz int
			switch {
			case cl != 0:
				tz = bits.TrailingZeros64(cl)
				cl = cl>>uint(tz) | ch<<uint(64-tz)
				ch >>= uint(tz)
			case ch != 0:
				tz = 64 + bits.TrailingZeros64(ch)
				cl, ch = ch>>uint(tz-64), 0
			default:
				if r != 0 {
					return false
				}
				tz = -1
			}
			if tz < 0 {
				break
			}
			s += uint64(tz)
		}
	}
	return true
}

// solve back-substitutes the banded system into a fresh interleaved
// solution of blocks*bits words. Going from the last slot down, each column
// keeps a window of the solution bits of the w slots after the current one;
// a taken row's solution bit is its result bit XOR the parity of its
// coefficients (beyond the leading one) against that window, and a free
// row's is zero (its coefficient and result are zero, so the same formula
// gives it without a branch).
func (b *RibbonBuilder) solve(blocks uint32, w, nbits int) []uint64 {
	m := int(blocks) * 64
	data := make([]uint64, (int(blocks)+1)*nbits) // one block of query padding
	lo, res := b.coeffLo[:m], b.results[:m]
	var win [16]uint64 // column k: bit j = S[i+j] after row i is done
	if w == 64 {
		for i := m - 1; i >= 0; i-- {
			c, r := lo[i]>>1, uint64(res[i])
			for k := 0; k < nbits; k++ {
				bit := (r>>uint(k) ^ uint64(bits.OnesCount64(c&win[k]))) & 1
				win[k] = win[k]<<1 | bit
			}
			if i&63 == 0 {
				copy(data[(i>>6)*nbits:], win[:nbits])
			}
		}
		return data
	}
	hi := b.coeffHi[:m]
	var winHi [16]uint64 // bits 64..127 of each column's window
	for i := m - 1; i >= 0; i-- {
		cl, ch := lo[i]>>1|hi[i]<<63, hi[i]>>1
		r := uint64(res[i])
		for k := 0; k < nbits; k++ {
			p := bits.OnesCount64(cl&win[k]) + bits.OnesCount64(ch&winHi[k])
			bit := (r>>uint(k) ^ uint64(p)) & 1
			winHi[k] = winHi[k]<<1 | win[k]>>63
			win[k] = win[k]<<1 | bit
		}
		if i&63 == 0 {
			copy(data[(i>>6)*nbits:], win[:nbits])
		}
	}
	return data
}

// MayContain reports false only if key is definitely not in the set.
func (f *Ribbon) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (f *Ribbon) MayContainHash(h uint64) bool {
	if f.blocks == 0 {
		return false // the empty filter
	}
	hh := staticMix(h, f.seed)
	s := ribbonStart(hh, f.numStarts)
	c := ribbonCoeff(hh)
	want := uint64(ribbonResult(hh, f.mask))
	nb := int(f.bits)
	off := uint(s & 63)
	base := int(s>>6) * nb
	// The band starts off bits into block s/64: c<<off covers that block
	// and the bits shifted out continue into the next one. (c>>1)>>(63-off)
	// is c>>(64-off), made zero for off = 0. The next block always exists
	// in memory: data carries one zero block of padding past the encoded
	// ones, so no query needs a branch for the last block.
	c0 := c << off
	c1 := (c >> 1) >> (63 - off)
	// Columns are checked four at a time without branches, then one
	// branch per group: an absent key fails a group of four with
	// probability 15/16, so it usually costs four columns and a
	// well-predicted branch. (Measured: one branch per column mispredicts
	// half the time on absent keys; evaluating every column before one
	// compare costs present and absent keys all of them.)
	if f.width == 64 {
		w0 := f.data[base : base+nb]
		w1 := f.data[base+nb : base+2*nb]
		w1 = w1[:len(w0)]
		k := 0
		for ; k+4 <= nb; k += 4 {
			a, b := w0[k:k+4], w1[k:k+4]
			d := parity64(a[0]&c0^b[0]&c1) | parity64(a[1]&c0^b[1]&c1)<<1 |
				parity64(a[2]&c0^b[2]&c1)<<2 | parity64(a[3]&c0^b[3]&c1)<<3
			if d != want>>uint(k)&15 {
				return false
			}
		}
		var d uint64
		for ; k < nb; k++ {
			d |= (parity64(w0[k]&c0^w1[k]&c1) ^ want>>uint(k)) & 1
		}
		return d == 0
	}
	ch, _ := bits.Mul64(c, ribbonCoeffSalt2)
	c1 |= ch << off
	c2 := (ch >> 1) >> (63 - off)
	w0 := f.data[base : base+nb]
	w1 := f.data[base+nb : base+2*nb]
	w2 := f.data[base+2*nb : base+3*nb]
	w1, w2 = w1[:len(w0)], w2[:len(w0)]
	k := 0
	for ; k+4 <= nb; k += 4 {
		a, b, e := w0[k:k+4], w1[k:k+4], w2[k:k+4]
		d := parity64(a[0]&c0^b[0]&c1^e[0]&c2) | parity64(a[1]&c0^b[1]&c1^e[1]&c2)<<1 |
			parity64(a[2]&c0^b[2]&c1^e[2]&c2)<<2 | parity64(a[3]&c0^b[3]&c1^e[3]&c2)<<3
		if d != want>>uint(k)&15 {
			return false
		}
	}
	var d uint64
	for ; k < nb; k++ {
		d |= (parity64(w0[k]&c0^w1[k]&c1^w2[k]&c2) ^ want>>uint(k)) & 1
	}
	return d == 0
}

// parity64 returns the parity of the set bits of x: one hardware popcount.
func parity64(x uint64) uint64 { return uint64(bits.OnesCount64(x)) & 1 }

// Len returns the number of distinct keys the filter was built from.
func (f *Ribbon) Len() int { return int(f.n) }

// Options returns the result width and band width the filter was built with.
func (f *Ribbon) Options() RibbonOptions {
	return RibbonOptions{ResultBits: int(f.bits), BandWidth: int(f.width)}
}

// encoded returns the solution words without the padding block.
func (f *Ribbon) encoded() []uint64 { return f.data[:int(f.blocks)*int(f.bits)] }

// SizeInBytes returns the size of the filter's encoding: the solution words
// plus 42 bytes. In memory it holds one more block (ResultBits words) of
// zero padding.
func (f *Ribbon) SizeInBytes() int {
	return envelopeHeaderSize + ribbonHeaderSize + 8*len(f.encoded()) + envelopeTrailer
}

// MarshalBinary encodes the filter (docs/format.md, "Ribbon").
func (f *Ribbon) MarshalBinary() ([]byte, error) {
	if f.bits == 0 {
		return nil, invalidf("filters: Ribbon.MarshalBinary: zero-value filter")
	}
	w := bodyWriter{buf: make([]byte, 0, ribbonHeaderSize+8*len(f.encoded()))}
	w.u64(f.seed)
	w.u64(f.n)
	w.u8(f.bits)
	w.u8(f.width)
	w.u32(f.blocks)
	w.u64s(f.encoded())
	return ribbonCodec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *Ribbon) UnmarshalBinary(data []byte) error {
	return ribbonCodec.unmarshal(f, data)
}

var ribbonCodec = newCodec(TypeRibbon, ribbonVersion, "ribbon", decodeRibbonBody)

// decodeRibbonBody checks every parameter an encoder could not have written
// before allocating: a result width of 1..16, a band width of 64 or 128, no
// blocks exactly when there are no keys, at least w+64 slots otherwise, no
// more keys than slots (each distinct key's equation owns a pivot row), and
// a word count that matches the body (the reader checks the length before
// it allocates, invariant F3).
func decodeRibbonBody(r *bodyReader) (*Ribbon, error) {
	f := &Ribbon{seed: r.u64("seed"), n: r.u64("key count")}
	f.bits, f.width, f.blocks = r.u8("result width"), r.u8("band width"), r.u32("block count")
	r.check(f.bits >= 1 && f.bits <= 16, "result width %d is not 1 to 16", f.bits)
	r.check(f.width == 64 || f.width == 128, "band width %d is not 64 or 128", f.width)
	r.check((f.n == 0) == (f.blocks == 0), "%d keys but %d blocks", f.n, f.blocks)
	slots := uint64(f.blocks) * 64
	r.check(f.blocks == 0 || slots >= uint64(f.width)+64, "%d slots are too few for band width %d", slots, f.width)
	r.check(f.n <= slots, "%d keys cannot fit %d slots", f.n, slots)
	if r.fail != nil {
		return nil, r.finish()
	}
	f.mask = uint32(widthMask(uint(f.bits)))
	if f.blocks > 0 {
		f.numStarts = slots - uint64(f.width) + 1
	}
	words := uint64(f.blocks) * uint64(f.bits)
	enc := r.take(8*words, "solution words")
	if err := r.finish(); err != nil {
		return nil, err
	}
	if f.blocks > 0 {
		f.data = make([]uint64, words+uint64(f.bits)) // one block of query padding
		for i := range words {
			f.data[i] = binary.LittleEndian.Uint64(enc[8*i:])
		}
	}
	return f, nil
}
