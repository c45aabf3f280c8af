package filters

import "math/bits"

// Body of a RangeFilter, version 1 (docs/format.md, "Range filter"):
//
//	u8      mode: 0 hashed, 1 exact
//	u32     prefix length p, then p prefix bytes
//	u8      depth d (<= 64), then per position:
//	          u8 form: bit 0 "end" is in the alphabet; bit 1 bitmap follows
//	          bitmap: 32 bytes, bit b of byte b/8 for byte value b
//	          list:   u8 count (<= 32), then count bytes, strictly ascending
//	u64     r, the universe of stored values (the code universe if exact)
//	u64     seed of the block hash (0 if exact)
//	u64     n, stored values
//	u64 x ceil(n*lowBits/64)        Elias-Fano low bits
//	u64 x ceil((n + (r-1)>>lowBits + 1)/64)  Elias-Fano high bits
//
// lowBits = floor(log2(r/n)) (0 if r <= n) and L = 2^floor(log2 r) are
// derived, not stored. The list form is used exactly when the alphabet
// has at most 32 bytes, so every filter has one encoding.
const (
	rangeModeHashed = 0
	rangeModeExact  = 1
	rangeFormEnd    = 1
	rangeFormBitmap = 2
	rangeListMax    = 32
)

func init() {
	registerDecoder(TypeRange, func(version uint8, body []byte) (Filter, error) {
		return decodeRangeBody(version, body)
	})
}

// MarshalBinary returns the filter's checksummed encoding.
func (f *RangeFilter) MarshalBinary() ([]byte, error) {
	if f.r == 0 {
		return nil, invalidf("filters: RangeFilter.MarshalBinary: zero-value filter")
	}
	// Sized up front: a table writer encodes every filter it builds, and
	// growing the body by doubling copied it about twice more.
	w := &bodyWriter{buf: make([]byte, 0, f.maxBodyLen())}
	if f.exact {
		w.u8(rangeModeExact)
	} else {
		w.u8(rangeModeHashed)
	}
	w.u32(uint32(len(f.coder.prefix)))
	w.bytes(f.coder.prefix)
	w.u8(uint8(len(f.coder.alpha)))
	for i := range f.coder.alpha {
		a := &f.coder.alpha[i]
		var form uint8
		if a.has(0) {
			form |= rangeFormEnd
		}
		var listBuf [256]byte
		list := listBuf[:0]
		for b := 0; b < 256; b++ {
			if a.has(b + 1) {
				list = append(list, byte(b))
			}
		}
		if len(list) > rangeListMax {
			w.u8(form | rangeFormBitmap)
			var bm [32]byte
			for _, b := range list {
				bm[b/8] |= 1 << (b % 8)
			}
			w.bytes(bm[:])
		} else {
			w.u8(form)
			w.u8(uint8(len(list)))
			w.bytes(list)
		}
	}
	w.u64(f.r)
	w.u64(f.seed)
	w.u64(f.set.n)
	w.u64s(f.set.low)
	w.u64s(f.set.high)
	return sealEnvelope(TypeRange, rangeFormatVersion, w.buf), nil
}

// maxBodyLen bounds the length of the body MarshalBinary writes: the mode,
// the prefix with its length, each alphabet as a form byte and either a
// counted list of at most rangeListMax bytes or a 32-byte bitmap, then r,
// seed, n and the Elias-Fano words.
func (f *RangeFilter) maxBodyLen() int {
	perAlphabet := 1 + max(1+rangeListMax, 32)
	return 1 + 4 + len(f.coder.prefix) + 1 + len(f.coder.alpha)*perAlphabet +
		3*8 + 8*(len(f.set.low)+len(f.set.high))
}

// UnmarshalRangeFilter decodes an encoding MarshalBinary produced. Errors
// wrap ErrCorrupt (invariant F3).
func UnmarshalRangeFilter(data []byte) (*RangeFilter, error) {
	version, body, err := openTyped(data, TypeRange)
	if err != nil {
		return nil, err
	}
	return decodeRangeBody(version, body)
}

func decodeRangeBody(version uint8, body []byte) (*RangeFilter, error) {
	if version != rangeFormatVersion {
		return nil, corruptf("range filter: unknown format version %d", version)
	}
	r := &bodyReader{buf: body}
	f := &RangeFilter{}
	mode := r.u8("mode")
	r.check(mode == rangeModeHashed || mode == rangeModeExact, "range filter: mode %d", mode)
	f.exact = mode == rangeModeExact
	f.coder.prefix = r.bytes(uint64(r.u32("prefix length")), "prefix")
	depth := int(r.u8("depth"))
	r.check(depth <= maxCodeDepth, "range filter: depth %d > %d", depth, maxCodeDepth)
	if r.fail != nil {
		return nil, r.fail
	}
	alpha := make([]alphabet, depth)
	universe := uint64(1)
	for i := range alpha {
		form := r.u8("alphabet form")
		r.check(form&^(rangeFormEnd|rangeFormBitmap) == 0, "range filter: position %d: form %#x", i, form)
		if form&rangeFormEnd != 0 {
			alpha[i].add(0)
		}
		if form&rangeFormBitmap != 0 {
			bm := r.take(32, "alphabet bitmap")
			for b := 0; b < 256 && bm != nil; b++ {
				if bm[b/8]&(1<<(b%8)) != 0 {
					alpha[i].add(b + 1)
				}
			}
			r.check(alpha[i].size()-uint64(form&rangeFormEnd) > rangeListMax,
				"range filter: position %d: bitmap of %d bytes should be a list", i, alpha[i].size())
		} else {
			count := r.u8("alphabet count")
			r.check(count <= rangeListMax, "range filter: position %d: list of %d bytes", i, count)
			list := r.take(uint64(count), "alphabet list")
			for j, b := range list {
				r.check(j == 0 || list[j-1] < b, "range filter: position %d: list not ascending", i)
				alpha[i].add(int(b) + 1)
			}
		}
		size := alpha[i].size()
		r.check(size > 0, "range filter: position %d: empty alphabet", i)
		hi, lo := bits.Mul64(universe, size)
		r.check(hi == 0 && lo <= maxCodeUniverse, "range filter: code universe overflows")
		if r.fail != nil {
			return nil, r.fail
		}
		universe = lo
	}
	f.coder.setAlphabets(alpha)
	f.r = r.u64("r")
	f.seed = r.u64("seed")
	n := r.u64("n")
	if r.fail != nil {
		return nil, r.fail
	}
	if f.exact {
		r.check(f.r == universe && f.seed == 0, "range filter: exact mode with r %d, seed %#x (universe %d)", f.r, f.seed, universe)
	} else {
		r.check(f.r >= 1 && f.r < universe, "range filter: hashed universe %d not in [1, %d)", f.r, universe)
		f.blockShift = uint(bits.Len64(f.r) - 1)
	}
	// Each value takes at least one high bit: a count beyond the body's
	// bits is corrupt, and checking it first keeps sizes from overflowing.
	r.check(n <= f.r && n <= 8*uint64(len(r.buf)), "range filter: %d values (r %d, %d bytes left)", n, f.r, len(r.buf))
	if r.fail != nil {
		return nil, r.fail
	}
	ef := eliasFano{n: n, universe: f.r, lowBits: efLowBits(n, f.r)}
	ef.highLen = n + (f.r-1)>>ef.lowBits + 1
	ef.low = r.u64s((n*uint64(ef.lowBits)+63)/64, "low bits")
	ef.high = r.u64s((ef.highLen+63)/64, "high bits")
	if err := r.finish(); err != nil {
		return nil, err
	}
	if err := ef.validate(); err != nil {
		return nil, err
	}
	ef.buildSamples()
	f.set = ef
	return f, nil
}

// validate checks a decoded sequence: n ones in high, zero padding, values
// strictly increasing and below universe.
func (ef *eliasFano) validate() error {
	if rem := ef.highLen % 64; rem != 0 && ef.high[len(ef.high)-1]>>rem != 0 {
		return corruptf("range filter: high bits padding is not zero")
	}
	if rem := ef.n * uint64(ef.lowBits) % 64; rem != 0 && ef.low[len(ef.low)-1]>>rem != 0 {
		return corruptf("range filter: low bits padding is not zero")
	}
	var ones uint64
	for _, w := range ef.high {
		ones += uint64(bits.OnesCount64(w))
	}
	if ones != ef.n {
		return corruptf("range filter: %d values but %d high bits set", ef.n, ones)
	}
	var i uint64
	var prev uint64
	for wi, w := range ef.high {
		for ; w != 0; w &= w - 1 {
			p := uint64(wi)*64 + uint64(bits.TrailingZeros64(w))
			v := (p-i)<<ef.lowBits | ef.getLow(i)
			if (i > 0 && v <= prev) || v >= ef.universe {
				return corruptf("range filter: value %d (%d) out of order or >= %d", i, v, ef.universe)
			}
			prev = v
			i++
		}
	}
	return nil
}
