package filters

import "fmt"

// Xor8 is a static XOR filter with 8-bit fingerprints ([XOR]): three blocks
// of about 1.23n/3 one-byte slots, and a key is reported present when the
// XOR of its three slots (one per block) equals its fingerprint. It is built
// once from the complete key set, costs about 9.84 bits per key plus 32
// slots, and has a false-positive rate of 2^-8 = 0.39% (invariant F4).
// Queries allocate nothing and are safe from many goroutines at once.
type Xor8 struct {
	seed     uint64
	n        uint64 // distinct keys built from
	blockLen uint32
	fps      []uint8 // 3*blockLen slots; empty for an empty filter
}

// xor8Version is the body format version written by MarshalBinary.
//
//	1: seed u64, n u64, blockLen u32, 3*blockLen fingerprint bytes.
const xor8Version = 1

// BuildXor8 builds an XOR filter from keys. Duplicate keys are allowed and
// count once; an empty set gives a filter that reports every key absent.
func BuildXor8(keys [][]byte) (*Xor8, error) {
	return BuildXor8FromHashes(hashKeys(keys))
}

// BuildXor8FromHashes builds an XOR filter from keys' Hash values, which
// may contain duplicates. The slice is read, not retained.
func BuildXor8FromHashes(hashes []uint64) (*Xor8, error) {
	return new(FuseBuilder).BuildXor8(hashes)
}

// BuildXor8 is BuildXor8FromHashes reusing b's scratch buffers. The filter
// does not alias b.
func (b *FuseBuilder) BuildXor8(hashes []uint64) (*Xor8, error) {
	p, err := b.peel(hashes, xorLayout)
	if err != nil {
		return nil, fmt.Errorf("filters: xor8: build from %d hashes: %w", len(hashes), err)
	}
	f := &Xor8{seed: p.seed, n: uint64(len(p.order)), blockLen: p.layout.blockLen}
	fps := make([]uint8, p.layout.size)
	// Reverse peel order: each key's peeled slot is the last of its three
	// to be written, so setting it to fingerprint ^ (other two) makes the
	// key's three-way XOR equal its fingerprint for good.
	for k := len(p.order) - 1; k >= 0; k-- {
		hh := p.order[k]
		var s [3]uint32
		s[0], s[1], s[2] = xorPositions(hh, f.blockLen)
		fps[s[p.roles[k]%3]] ^= fingerprint8(hh) ^ fps[s[0]] ^ fps[s[1]] ^ fps[s[2]]
	}
	f.fps = fps
	return f, nil
}

// MayContain reports false only if key is definitely not in the set.
func (f *Xor8) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key whose Hash is h.
func (f *Xor8) MayContainHash(h uint64) bool {
	hh := staticMix(h, f.seed)
	p0, p1, p2 := xorPositions(hh, f.blockLen)
	fps := f.fps
	if uint(p2) >= uint(len(fps)) {
		// Only the empty filter: every slot index is below 3*blockLen by
		// construction and by the decoder's check.
		return false
	}
	return fingerprint8(hh) == fps[p0]^fps[p1]^fps[p2]
}

// Len returns the number of distinct keys the filter was built from.
func (f *Xor8) Len() int { return int(f.n) }

// SizeInBytes returns the size of the filter's encoding, which is also its
// memory footprint to within a few words: the fingerprints plus 40 bytes.
func (f *Xor8) SizeInBytes() int {
	return envelopeHeaderSize + 20 + len(f.fps) + envelopeTrailer
}

// MarshalBinary encodes the filter (docs/format.md, "Xor8").
func (f *Xor8) MarshalBinary() ([]byte, error) {
	w := bodyWriter{buf: make([]byte, 0, 20+len(f.fps))}
	w.u64(f.seed)
	w.u64(f.n)
	w.u32(f.blockLen)
	w.bytes(f.fps)
	return xor8Codec.seal(w.buf), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. On error f is
// unchanged.
func (f *Xor8) UnmarshalBinary(data []byte) error {
	return xor8Codec.unmarshal(f, data)
}

var xor8Codec = newCodec(TypeXor8, xor8Version, "xor8", decodeXor8Body)

func decodeXor8Body(r *bodyReader) (*Xor8, error) {
	f := &Xor8{seed: r.u64("seed"), n: r.u64("key count"), blockLen: r.u32("block length")}
	size := 3 * uint64(f.blockLen)
	r.check(size <= 1<<32-1, "block length %d overflows the slot index", f.blockLen)
	r.check((f.n == 0) == (f.blockLen == 0), "%d keys but block length %d", f.n, f.blockLen)
	r.check(f.n <= size, "%d keys cannot fit %d slots", f.n, size)
	f.fps = r.bytes(size, "fingerprints")
	if err := r.finish(); err != nil {
		return nil, err
	}
	return f, nil
}
