package filters

import "math/bits"

// Rank-and-select helpers shared by the vector quotient filter's block
// metadata and the counting quotient filter's occupieds/runends words.
// math/bits gives popcount, leading and trailing zeros; select is built from
// them with Vigna's broadword method ("Broadword Implementation of Rank/Select
// Queries", WEA 2008): byte-wise prefix popcounts in one multiply, the target
// byte found by a SWAR comparison, then a 256×8 table for the bit in the byte.

// selectInByte[b][k] is the position of the k-th (0-based) set bit of byte b,
// or 8 if b has k or fewer set bits.
var selectInByte = func() (t [256][8]uint8) {
	for b := 0; b < 256; b++ {
		k := 0
		for j := range t[b] {
			t[b][j] = 8
		}
		for i := 0; i < 8; i++ {
			if b&(1<<i) != 0 {
				t[b][k] = uint8(i)
				k++
			}
		}
	}
	return t
}()

const (
	bwL8 = 0x0101010101010101
	bwH8 = 0x8080808080808080
)

// select64 returns the position of the k-th (0-based) set bit of x. The
// caller guarantees k < popcount(x); otherwise the result is 64 or more.
func select64(x uint64, k uint) uint {
	s := x - (x>>1)&0x5555555555555555
	s = s&0x3333333333333333 + (s>>2)&0x3333333333333333
	s = (s + s>>4) & 0x0f0f0f0f0f0f0f0f
	s *= bwL8 // byte j: popcount of bytes 0..j (at most 64, so no carries)
	// High bit of byte j set iff prefix_j <= k; prefixes never decrease, so
	// the count of such bytes is the index of the byte holding the bit.
	t := ((uint64(k)*bwL8 | bwH8) - s) & bwH8
	byteIdx := uint(bits.OnesCount64(t))
	if byteIdx >= 8 {
		return 64
	}
	before := uint((s << 8) >> (8 * byteIdx) & 0xff) // prefix of bytes < byteIdx
	return 8*byteIdx + uint(selectInByte[(x>>(8*byteIdx))&0xff][k-before])
}

// lowMask returns a word with bits [0, n) set. A Go shift by 64 or more
// yields 0, so n ≥ 64 gives all ones without a branch.
func lowMask(n uint) uint64 { return uint64(1)<<n - 1 }

// md128 is a 128-bit metadata vector: bit i < 64 is bit i of lo, bit i ≥ 64
// is bit i-64 of hi.
type md128 struct{ lo, hi uint64 }

// sel returns the position of the k-th (0-based) set bit; k < popcount.
//
// The word is chosen by conditional moves rather than by branching into
// two select calls: which half holds bucket k's end is a coin flip per
// query, and a mispredicted branch cost more than the select.
func (m md128) sel(k uint) uint {
	pc := uint(bits.OnesCount64(m.lo))
	w, base := m.lo, uint(0)
	if k >= pc {
		w, k, base = m.hi, k-pc, 64
	}
	return base + select64(w, k)
}

// prevOne returns the position of the highest set bit below p, or -1.
func (m md128) prevOne(p uint) int {
	var h uint64
	if p > 64 {
		h = m.hi & lowMask(p-64)
	}
	r := bits.Len64(m.lo&lowMask(p)) - 1
	if h != 0 {
		r = 64 + bits.Len64(h) - 1
	}
	return r
}

// top returns the position of the highest set bit plus one (0 if none).
func (m md128) top() uint {
	if m.hi != 0 {
		return 64 + uint(bits.Len64(m.hi))
	}
	return uint(bits.Len64(m.lo))
}

// insertZero shifts bits at positions ≥ p up by one and clears bit p. The
// top bit falls off; callers only do this when it is zero.
func (m md128) insertZero(p uint) md128 {
	if p >= 64 {
		q := p - 64
		keep := m.hi & lowMask(q)
		return md128{m.lo, keep | (m.hi&^keep)<<1}
	}
	keep := m.lo & lowMask(p)
	return md128{keep | (m.lo&^keep)<<1, m.hi<<1 | m.lo>>63}
}

// deleteBit removes bit p, shifting the bits above it down by one; the top
// bit becomes zero.
func (m md128) deleteBit(p uint) md128 {
	if p >= 64 {
		q := p - 64
		keep := m.hi & lowMask(q)
		return md128{m.lo, keep | (m.hi>>1)&^lowMask(q)}
	}
	keep := m.lo & lowMask(p)
	lo := keep | (m.lo>>1)&^lowMask(p) | m.hi<<63
	return md128{lo, m.hi >> 1}
}
