package filters

import (
	"math"
	"math/bits"
	"unsafe"
)

// This file holds what the XOR and binary fuse filters share: how a key's
// 64-bit hash becomes a fingerprint and a set of slot positions, and how many
// slots a filter of n keys gets. The query methods and the builder call the
// same position functions, so a filter can never be built with one geometry
// and queried with another (invariant F1 rests on this).
//
// References:
//
//	[XOR]  T. M. Graf, D. Lemire. "Xor Filters: Faster and Smaller Than Bloom
//	       and Cuckoo Filters". ACM JEA 25, 2020. arXiv:1912.08258.
//	[FUSE] T. M. Graf, D. Lemire. "Binary Fuse Filters: Fast and Smaller Than
//	       Xor Filters". ACM JEA 27, 2022. arXiv:2201.01174.

const (
	// staticFPMul derives fingerprints: the top bits of hh*staticFPMul. The
	// positions use the low bits of hh (segment offsets) and its high bits
	// (multiply-shift onto the first segment); the high half of a product
	// depends on every bit of hh through the carries, so the fingerprint is
	// not a linear function of the positions even for 32-bit fingerprints,
	// which is what makes the FP rate 2^-bits at every width (invariant F4;
	// TestBinaryFuseFPRateEveryWidth). The constant is 2^64/phi, odd.
	staticFPMul = 0x9e3779b97f4a7c15

	// fuseMaxSegmentLog caps the segment length at 2^18 slots, as [FUSE]
	// does: longer segments no longer lower the space overhead measurably
	// and only spread one key's slots over more cache lines.
	fuseMaxSegmentLog = 18

	// staticMaxKeys bounds the key count so every slot index fits a uint32
	// (the size factor is < 1.2 for n this large) and the builder's per-slot
	// count (number of keys << 2, in 32 bits) cannot overflow even when all
	// the hashes are equal. A billion keys is far beyond one table.
	staticMaxKeys = 1 << 30

	// staticMaxAttempts bounds the number of seeds one build tries. For
	// deduplicated, well-mixed hashes one attempt almost always suffices
	// (TestFuseFirstSeedSucceedsUsually); a hundred failures in a row means
	// the input is adversarial, and the build reports ErrBuildFailed.
	staticMaxAttempts = 100
)

// staticSeed returns the seed of the given construction attempt. Seeds are a
// fixed sequence, so a build is reproducible (the golden-bytes test pins one).
func staticSeed(attempt int) uint64 {
	return mix64(uint64(attempt+1)*0x9e3779b97f4a7c15 + 0x736965766b76) // "sievkv"
}

// staticMix is the per-filter hash every slot and fingerprint derives from:
// mix64 makes the values for different seeds independent of each other.
func staticMix(h, seed uint64) uint64 {
	return mix64(h + seed)
}

func fingerprint8(hh uint64) uint8   { return uint8((hh * staticFPMul) >> 56) }
func fingerprint16(hh uint64) uint16 { return uint16((hh * staticFPMul) >> 48) }

// staticFingerprint is fingerprint8 or fingerprint16, by T's width, for
// code shared by the 8- and 16-bit filters.
func staticFingerprint[T uint8 | uint16](hh uint64) T {
	if unsafe.Sizeof(T(0)) == 1 {
		return T(fingerprint8(hh))
	}
	return T(fingerprint16(hh))
}

// fingerprintN returns the top (64-shift) bits of the product; shift is
// 64-FingerprintBits, in [32, 63].
func fingerprintN(hh uint64, shift uint8) uint32 {
	return uint32((hh * staticFPMul) >> (shift & 63))
}

// xorPositions returns a key's three slots in an XOR filter of three blocks
// of blockLen slots ([XOR] section 3): one slot per block, each chosen by
// multiply-shift from a different 32-bit window of hh (rotations by 0, 21
// and 42 bits take the windows from different parts of the word).
func xorPositions(hh uint64, blockLen uint32) (p0, p1, p2 uint32) {
	p0 = reduce32(uint32(hh), blockLen)
	p1 = reduce32(uint32(bits.RotateLeft64(hh, 21)), blockLen) + blockLen
	p2 = reduce32(uint32(bits.RotateLeft64(hh, 42)), blockLen) + 2*blockLen
	return
}

// fuse3Positions returns a key's slots in a 3-wise binary fuse filter: the
// first slot is chosen by multiply-shift over the first segCountLen slots, so
// it lands in segment s0 in [0, segCount); the next two sit in segments s0+1
// and s0+2 at offsets that are the first offset XORed with independent hash
// bits ([FUSE] section 3): bits [0, segLog) and [18, 18+segLog), disjoint
// because segLog <= 18, and below the high bits the multiply-shift uses
// (bits >= 64-log2(segCountLen)) unless a filter has more than 2^28 slots.
// A constant shift is cheaper than a shift by a register on x86-64 v1. XOR
// with a value below segLen cannot leave the segment because segLen is a
// power of two, so p0 < p1 < p2 always.
func fuse3Positions(hh, segCountLen uint64, segLen, segMask uint32) (p0, p1, p2 uint32) {
	hi, _ := bits.Mul64(hh, segCountLen)
	p0 = uint32(hi)
	p1 = (p0 + segLen) ^ (uint32(hh) & segMask)
	p2 = (p0 + 2*segLen) ^ (uint32(hh>>18) & segMask)
	return
}

// fuse4Positions is fuse3Positions for four consecutive segments. Three
// offsets of up to 18 bits do not fit beside each other below the
// multiply-shift's bits at a constant stride, so they come from bits
// [0, segLog), [segLog, 2segLog) and [2segLog, 3segLog): disjoint, and clear
// of the high bits until a filter has more than 2^64/2^(3*segLog) slots.
func fuse4Positions(hh, segCountLen uint64, segLen, segMask uint32, segLog uint8) (p0, p1, p2, p3 uint32) {
	hi, _ := bits.Mul64(hh, segCountLen)
	p0 = uint32(hi)
	p1 = (p0 + segLen) ^ (uint32(hh) & segMask)
	p2 = (p0 + 2*segLen) ^ (uint32(hh>>(segLog&63)) & segMask)
	p3 = (p0 + 3*segLen) ^ (uint32(hh>>((2*segLog)&63)) & segMask)
	return
}

// Layout kinds of the peeling engine.
const (
	layoutXor uint8 = iota
	layoutFuse3
	layoutFuse4
)

// staticLayout is the geometry of one static filter: how many slots it has
// and how a hash maps onto them. The builder and the decoders both derive it,
// and validate() is what decoders use to reject impossible parameters.
type staticLayout struct {
	kind  uint8
	arity uint32
	size  uint32 // total slots

	blockLen uint32 // XOR only: slots per block; size = 3*blockLen

	segLog      uint8  // fuse only: log2(segLen)
	segLen      uint32 // fuse only: slots per segment, a power of two
	segMask     uint32 // segLen-1
	segCount    uint32 // number of segments a key's first slot may fall in
	segCountLen uint64 // segCount*segLen
}

// xorLayout sizes an XOR filter for n distinct keys: [XOR] section 3.1 shows
// that c = 1.23n + 32 slots make the random 3-hypergraph peelable with high
// probability (the +32 carries small n). n = 0 gives an empty layout.
func xorLayout(n int) staticLayout {
	l := staticLayout{kind: layoutXor, arity: 3}
	if n == 0 {
		return l
	}
	capacity := uint64(math.Ceil(1.23*float64(n))) + 32
	l.blockLen = uint32(capacity / 3)
	l.size = 3 * l.blockLen
	return l
}

// fuseLayout sizes a binary fuse filter of the given arity for n distinct
// keys, with the empirical fits of [FUSE] (section 4, the formulas behind
// Table 3 and Fig. 6), which give the smallest segment length and size
// factor whose construction still succeeds with high probability:
//
//	arity 3: segLen = 2^floor(log_3.33(n) + 2.25),  factor = max(1.125, 0.875 + 0.25*ln(10^6)/ln(n))
//	arity 4: segLen = 2^floor(log_2.91(n) - 0.5),   factor = max(1.075, 0.77 + 0.305*ln(6*10^5)/ln(n))
//
// The filter then has segCount = ceil(factor*n/segLen) - (arity-1) segments
// in which a key's first slot may fall, plus arity-1 trailing segments, so
// size = (segCount+arity-1)*segLen. At n = 10^6 this gives 1.1305n slots for
// arity 3 (9.04 bits/key at 8 bits) and 1.0772n for arity 4 (8.62 bits/key).
// The growing factor at small n is the price of peelability on short
// windows; docs/filters.md, "Space and FP rate", tabulates it. n is treated as at least
// 2 inside the logarithms (ln 1 = 0). n = 0 gives an empty layout.
func fuseLayout(arity uint32, n int) staticLayout {
	l := staticLayout{kind: layoutFuse3, arity: arity}
	if arity == 4 {
		l.kind = layoutFuse4
	}
	if n == 0 {
		l.segLen = 1 // as the decoder rebuilds it from segLog = 0
		return l
	}
	lnN := math.Log(float64(max(n, 2)))
	var segLog, factor float64
	if arity == 3 {
		segLog = math.Floor(lnN/math.Log(3.33) + 2.25)
		factor = math.Max(1.125, 0.875+0.25*math.Log(1e6)/lnN)
	} else {
		segLog = math.Floor(lnN/math.Log(2.91) - 0.5)
		factor = math.Max(1.075, 0.77+0.305*math.Log(6e5)/lnN)
	}
	segLog = math.Min(math.Max(segLog, 0), fuseMaxSegmentLog)
	l.segLog = uint8(segLog)
	l.segLen = 1 << l.segLog
	l.segMask = l.segLen - 1
	capacity := uint64(math.Round(float64(n) * factor))
	segs := (capacity + uint64(l.segLen) - 1) / uint64(l.segLen)
	if segs > uint64(arity-1) {
		segs -= uint64(arity - 1)
	} else {
		segs = 1
	}
	l.segCount = uint32(segs)
	l.segCountLen = segs * uint64(l.segLen)
	l.size = uint32((segs + uint64(arity-1)) * uint64(l.segLen))
	return l
}

// fuseLayoutFromHeader rebuilds a fuse layout from decoded fields and checks
// that it is one an encoder could have written: a segment length no longer
// than 2^18, a segment count that is zero exactly when the filter is empty,
// and a slot count that fits a uint32 and can hold n keys (each key owns the
// slot it was peeled from, so n <= size). It never allocates.
func fuseLayoutFromHeader(arity uint32, n uint64, segLog uint8, segCount, size uint32) (staticLayout, error) {
	l := staticLayout{kind: layoutFuse3, arity: arity}
	if arity == 4 {
		l.kind = layoutFuse4
	}
	if segLog > fuseMaxSegmentLog {
		return l, corruptf("segment length 2^%d exceeds the 2^%d maximum", segLog, fuseMaxSegmentLog)
	}
	if (n == 0) != (segCount == 0) {
		return l, corruptf("%d keys but %d segments", n, segCount)
	}
	if n == 0 && (segLog != 0 || size != 0) {
		return l, corruptf("empty filter with segment length 2^%d and %d slots", segLog, size)
	}
	want := (uint64(segCount) + uint64(arity-1)) << segLog
	if n != 0 && want != uint64(size) {
		return l, corruptf("%d segments of 2^%d slots need %d slots, header says %d", segCount, segLog, want, size)
	}
	if n > uint64(size) {
		return l, corruptf("%d keys cannot fit %d slots", n, size)
	}
	l.segLog = segLog
	l.segLen = 1 << segLog
	l.segMask = l.segLen - 1
	l.segCount = segCount
	l.segCountLen = uint64(segCount) << segLog
	l.size = size
	return l, nil
}

// positions is the engine's view of a key's slots, for every layout kind.
// Queries call the kind-specific functions directly; the builder pays one
// well-predicted switch per key.
func (l *staticLayout) positions(hh uint64) (p [4]uint32) {
	switch l.kind {
	case layoutXor:
		p[0], p[1], p[2] = xorPositions(hh, l.blockLen)
	case layoutFuse3:
		p[0], p[1], p[2] = fuse3Positions(hh, l.segCountLen, l.segLen, l.segMask)
	default:
		p[0], p[1], p[2], p[3] = fuse4Positions(hh, l.segCountLen, l.segLen, l.segMask, l.segLog)
	}
	return p
}
