package filters

import "math/bits"

// bitArray is a fixed-length array of bits packed into 64-bit words: bit i
// lives in word i>>6 at position i&63. Bits past the length in the last word
// are always zero, so popcount needs no masking.
type bitArray struct {
	words []uint64
	n     uint64 // length in bits
}

func newBitArray(n uint64) bitArray {
	return bitArray{words: make([]uint64, (n+63)/64), n: n}
}

func (b bitArray) set(i uint64)       { b.words[i>>6] |= 1 << (i & 63) }
func (b bitArray) test(i uint64) bool { return b.words[i>>6]&(1<<(i&63)) != 0 }

// count returns the number of set bits, by hardware popcount.
func (b bitArray) count() uint64 { return onesCount(b.words) }

// onesCount returns the number of set bits in words, by hardware popcount.
func onesCount(words []uint64) uint64 {
	var c int
	for _, w := range words {
		c += bits.OnesCount64(w)
	}
	return uint64(c)
}

// tailClean reports whether the bits past n in the last word are zero, as
// newBitArray leaves them. Decoders use it to reject bytes no encoder writes.
func (b bitArray) tailClean() bool {
	if b.n%64 == 0 || len(b.words) == 0 {
		return true
	}
	return b.words[len(b.words)-1]>>(b.n%64) == 0
}

// packedArray holds n unsigned integers of a fixed width (1..64 bits) packed
// back to back into 64-bit words; an entry may straddle two words. It lets a
// filter pay exactly its fingerprint width per slot (12 bits, not 16).
type packedArray struct {
	words []uint64
	width uint   // bits per entry, 1..64
	mask  uint64 // (1 << width) - 1
	n     uint64 // number of entries
}

func newPackedArray(n uint64, width uint) packedArray {
	return packedArray{
		words: make([]uint64, packedWords(n, width)),
		width: width,
		mask:  widthMask(width),
		n:     n,
	}
}

// packedWords is the number of words n entries of width bits occupy. One
// spare word lets get and set read word+1 without a branch.
func packedWords(n uint64, width uint) uint64 {
	return (n*uint64(width)+63)/64 + 1
}

func widthMask(width uint) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<width - 1
}

func (p packedArray) get(i uint64) uint64 {
	bit := i * uint64(p.width)
	w, off := bit>>6, bit&63
	v := p.words[w] >> off
	if off+uint64(p.width) > 64 {
		v |= p.words[w+1] << (64 - off)
	}
	return v & p.mask
}

func (p packedArray) set(i uint64, v uint64) {
	v &= p.mask
	bit := i * uint64(p.width)
	w, off := bit>>6, bit&63
	p.words[w] = p.words[w]&^(p.mask<<off) | v<<off
	if off+uint64(p.width) > 64 {
		spill := 64 - off
		p.words[w+1] = p.words[w+1]&^(p.mask>>spill) | v>>spill
	}
}

// dirtyWord returns the index of the first of words, the raw words of a
// decoded p, that has a bit set past p's last entry (the spare word
// included), or -1: an encoder never sets one, so a decoder refuses any.
func (p packedArray) dirtyWord(words []uint64) int {
	used := p.n * uint64(p.width)
	for k := used / 64; k < uint64(len(words)); k++ {
		w := words[k]
		if k == used/64 {
			w >>= used % 64
		}
		if w != 0 {
			return int(k)
		}
	}
	return -1
}
