package filters

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// Hash is the one hash every filter in this package uses: xxhash64 of key.
// Filters derive all probes and fingerprints from this value; callers holding
// it can use the ...Hash methods and ...FromHashes builders directly.
func Hash(key []byte) uint64 {
	return xxhash.Sum64(key)
}

// mix64 is the 64-bit finalizer of MurmurHash3 (fmix64). It is a bijection
// that spreads every input bit over every output bit, so mix64(h + seed) gives
// statistically independent values for different seeds from one base hash.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// reduce32 maps a uniformly distributed 32-bit value onto [0, n) with a
// multiply and a shift (Lemire's fast alternative to modulo).
func reduce32(x uint32, n uint32) uint32 {
	return uint32((uint64(x) * uint64(n)) >> 32)
}

// reduce64 maps a uniformly distributed 64-bit value onto [0, n).
func reduce64(x uint64, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}
